module smcrypt.example/client

go 1.21

require (
	google.golang.org/grpc v1.64.1
	google.golang.org/protobuf v1.34.2
)
