package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	pb "smcrypt.example/client/smcryptv1"
)

// serviceConfig spreads calls over every address the target resolves to (round_robin: one
// connection per replica, calls in turn over the ready ones) and retries a CryptoService or
// health call that fails with UNAVAILABLE (a replica stopping or unreachable) or CANCELLED
// (what gRPC C++ servers answer to calls they had received but not started when they stop) up
// to 4 more times, after 0.05 s, 0.1 s, 0.2 s and 0.4 s at most (each with random jitter,
// capped at 1 s): the policy of smcrypt's own clients (kServiceConfigJson in
// clients/smcrypt/session.h). gRPC-Go before 1.40 retries only with GRPC_GO_RETRY=on in the
// environment; newer releases always do.
const serviceConfig = `{
  "loadBalancingConfig": [{"round_robin": {}}],
  "methodConfig": [{
    "name": [{"service": "smcrypt.v1.CryptoService"}, {"service": "grpc.health.v1.Health"}],
    "retryPolicy": {
      "maxAttempts": 5,
      "initialBackoff": "0.05s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"]
    }
  }]
}`

// dial opens a channel with serviceConfig to target: HOST:PORT, a resolver target such as
// dns:///smcryptd-headless.NAMESPACE.svc:50051 (the headless Service: DNS returns every
// ready pod), or a comma-separated list HOST:PORT,HOST:PORT,... of replicas, resolved by a
// static resolver (resolver/manual) to exactly those addresses.
func dial(target string) (*grpc.ClientConn, error) {
	opts := []grpc.DialOption{grpc.WithInsecure(), grpc.WithDefaultServiceConfig(serviceConfig)}
	if strings.Contains(target, ",") {
		r := manual.NewBuilderWithScheme("smcrypt-static")
		var addrs []resolver.Address
		for _, a := range strings.Split(target, ",") {
			addrs = append(addrs, resolver.Address{Addr: strings.TrimSpace(a)})
		}
		r.InitialState(resolver.State{Addresses: addrs})
		opts = append(opts, grpc.WithResolvers(r))
		target = r.Scheme() + ":///smcryptd"
	}
	return grpc.Dial(target, opts...)
}

// hashCalls makes n SM3 Hash calls, one after another, each with a 10 s deadline; the
// channel's round_robin spreads them over the replicas (each replica's /metrics counts its
// share: grpc_server_handled_total{grpc_method="Hash"}).
func hashCalls(c pb.CryptoServiceClient, n int) {
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		h, err := c.Hash(ctx, &pb.HashRequest{Algorithm: pb.Algorithm_SM3, Data: []byte("abc")})
		cancel()
		if err != nil {
			fail("Hash call %d of %d: %v", i+1, n, err)
		}
		if fmt.Sprintf("%x", h.Digest) != sm3abc {
			fail("Hash call %d: SM3(abc) is %x", i+1, h.Digest)
		}
	}
	fmt.Printf("%d SM3 Hash calls answered\n", n)
}
