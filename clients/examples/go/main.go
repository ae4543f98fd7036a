// Command client calls smcryptd from Go: SM3, SM2 sign/verify and SM4-GCM.
//
//	./generate.sh                      # stubs into ./smcryptv1, then go mod tidy
//	go run . -target localhost:50051
package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "smcrypt.example/client/smcryptv1"
)

func main() {
	target := flag.String("target", "localhost:50051", "smcryptd address (HOST:PORT)")
	flag.Parse()

	conn, err := grpc.NewClient(*target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatalf("connect %s: %v", *target, err)
	}
	defer conn.Close()
	c := pb.NewCryptoServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// SM3 (GB/T 32905).
	h, err := c.Hash(ctx, &pb.HashRequest{Algorithm: pb.Algorithm_SM3, Data: []byte("abc")})
	if err != nil {
		log.Fatalf("Hash: %v", err)
	}
	fmt.Println("SM3(abc)       ", hex.EncodeToString(h.Digest))

	// SM2: key pair (PKCS#8 / SubjectPublicKeyInfo DER), DER signature with the default
	// user ID 1234567812345678, verification.
	pair, err := c.GenerateKeyPair(ctx, &pb.GenerateKeyPairRequest{Algorithm: pb.Algorithm_SM2})
	if err != nil {
		log.Fatalf("GenerateKeyPair: %v", err)
	}
	msg := []byte("transfer 100 CNY to account 42")
	inline := func(b []byte) *pb.KeyRef { return &pb.KeyRef{Ref: &pb.KeyRef_InlineKey{InlineKey: b}} }
	sig, err := c.Sign(ctx, &pb.SignRequest{Algorithm: pb.Algorithm_SM2, Key: inline(pair.PrivateKeyDer), Data: msg})
	if err != nil {
		log.Fatalf("Sign: %v", err)
	}
	v, err := c.Verify(ctx, &pb.VerifyRequest{Algorithm: pb.Algorithm_SM2, Key: inline(pair.PublicKeyDer),
		Data: msg, Signature: sig.Signature})
	if err != nil {
		log.Fatalf("Verify: %v", err)
	}
	fmt.Println("SM2 signature  ", hex.EncodeToString(sig.Signature), "valid:", v.Valid)

	// SM4-GCM (RFC 8998) with a nonce drawn by the server.
	key, err := c.GenerateRandom(ctx, &pb.GenerateRandomRequest{Length: 16})
	if err != nil {
		log.Fatalf("GenerateRandom: %v", err)
	}
	enc, err := c.Encrypt(ctx, &pb.EncryptRequest{Algorithm: pb.Algorithm_SM4_GCM, Key: inline(key.Data),
		Plaintext: msg, Aad: []byte("v1")})
	if err != nil {
		log.Fatalf("Encrypt: %v", err)
	}
	dec, err := c.Decrypt(ctx, &pb.DecryptRequest{Algorithm: pb.Algorithm_SM4_GCM, Key: inline(key.Data),
		Nonce: enc.Nonce, Ciphertext: enc.Ciphertext, Tag: enc.Tag, Aad: []byte("v1")})
	if err != nil {
		log.Fatalf("Decrypt: %v", err)
	}
	fmt.Println("SM4-GCM        ", "nonce", hex.EncodeToString(enc.Nonce), "round trip:", bytes.Equal(dec.Plaintext, msg))

	// Errors are gRPC status codes: a wrong tag is InvalidArgument "decryption failed".
	_, err = c.Decrypt(ctx, &pb.DecryptRequest{Algorithm: pb.Algorithm_SM4_GCM, Key: inline(key.Data),
		Nonce: enc.Nonce, Ciphertext: enc.Ciphertext, Tag: make([]byte, 16), Aad: []byte("v1")})
	st, _ := status.FromError(err)
	fmt.Println("tampered tag   ", st.Code(), st.Message())

	if !v.Valid || !bytes.Equal(dec.Plaintext, msg) || err == nil {
		os.Exit(1)
	}
}
