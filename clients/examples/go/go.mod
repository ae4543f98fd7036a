module smcrypt.example/client

// Go 1.19 (Debian 12's golang-go) or newer. gRPC-Go v1.64.x is the last series whose go.mod
// accepts Go 1.19, protobuf-go v1.34.1 the last release before v1.34.2 asked for Go 1.20.
// ./generate.sh's `go mod tidy` adds their requirements (google.golang.org/genproto/googleapis/rpc
// for errdetails, golang.org/x/net, ...) and go.sum. Debian 12's offline GOPATH build ignores
// this file (README.md "Go").
go 1.19

require (
	google.golang.org/grpc v1.64.1
	google.golang.org/protobuf v1.34.1
)
