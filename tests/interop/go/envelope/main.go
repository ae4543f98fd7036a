// Command envelope is the Go client interop check of Rewrap, RewrapBatch, GenerateDataKey and
// GenerateDataKeyWithoutPlaintext against a real smcryptd with smcryptd_launch.sh's keyring
// (aes256.pem an AES-256 key, dek.v1.pem / dek.v2.pem two versions of an SM4 key), checked by
// Go's crypto/aes and crypto/cipher where Go has the algorithm:
//   - a data key wrapped with AES-256-GCM under aes256 opens with crypto/cipher's GCM under the
//     key file's bytes (read from -keys_dir) and with the Decrypt RPC; data sealed locally with
//     crypto/cipher under the plaintext data key opens after the key is unwrapped through the
//     RPC; GenerateDataKeyWithoutPlaintext returns no key;
//   - an SM4-GCM ciphertext under dek version 1 rewraps to version 2 (Rewrap and RewrapBatch),
//     opens with Decrypt under version 2 and not under version 1; a tampered batch item is that
//     item's INVALID_ARGUMENT "decryption failed".
//
// Every check that fails prints "FAIL: ..." and exits with status 1. Run by
// tests/interop/run_go_client.sh (GOPATH mode, Debian's gRPC-Go 1.33):
//
//	envelope -target HOST:PORT -keys_dir DIR
package main

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/pem"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "smcrypt.example/client/smcryptv1"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func keyID(id string, version uint32) *pb.KeyRef {
	return &pb.KeyRef{Ref: &pb.KeyRef_KeyId{KeyId: id}, KeyVersion: version}
}

// keyFile returns the raw bytes of a keyring "AES KEY" / "SM4 KEY" PEM file.
func keyFile(dir, name string) []byte {
	text, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		fail("read %s: %v", name, err)
	}
	block, _ := pem.Decode(text)
	if block == nil {
		fail("%s holds no PEM block", name)
	}
	return block.Bytes
}

func gcm(key []byte) cipher.AEAD {
	b, err := aes.NewCipher(key)
	if err != nil {
		fail("aes.NewCipher: %v", err)
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		fail("cipher.NewGCM: %v", err)
	}
	return g
}

func random(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		fail("crypto/rand: %v", err)
	}
	return b
}

func dataKeys(ctx context.Context, c pb.CryptoServiceClient, keysDir string) {
	context7 := []byte("tenant=7")
	dk, err := c.GenerateDataKey(ctx, &pb.GenerateDataKeyRequest{
		KeySpec: pb.DataKeySpec_DATA_KEY_SPEC_AES_256, Algorithm: pb.Algorithm_AES_256_GCM,
		Key: keyID("aes256", 0), Aad: context7})
	if err != nil {
		fail("GenerateDataKey: %v", err)
	}
	if len(dk.PlaintextKey) != 32 || len(dk.Nonce) != 12 || len(dk.Tag) != 16 {
		fail("GenerateDataKey: key %d, nonce %d, tag %d bytes; want 32, 12, 16",
			len(dk.PlaintextKey), len(dk.Nonce), len(dk.Tag))
	}
	kek := gcm(keyFile(keysDir, "aes256.pem"))
	opened, err := kek.Open(nil, dk.Nonce, append(append([]byte{}, dk.Ciphertext...), dk.Tag...), context7)
	if err != nil || !bytes.Equal(opened, dk.PlaintextKey) {
		fail("crypto/cipher does not unwrap the data key under aes256.pem (%v)", err)
	}
	// Envelope encryption: data sealed here under the data key, opened after an RPC unwrap.
	data, nonce := random(10000), random(12)
	sealed := gcm(dk.PlaintextKey).Seal(nil, nonce, data, nil)
	back, err := c.Decrypt(ctx, &pb.DecryptRequest{Algorithm: pb.Algorithm_AES_256_GCM,
		Key: keyID("aes256", 0), Nonce: dk.Nonce, Ciphertext: dk.Ciphertext, Tag: dk.Tag, Aad: context7})
	if err != nil {
		fail("Decrypt of the wrapped data key: %v", err)
	}
	plain, err := gcm(back.Plaintext).Open(nil, nonce, sealed, nil)
	if err != nil || !bytes.Equal(plain, data) {
		fail("the data sealed under the data key does not open under the unwrapped key (%v)", err)
	}
	only, err := c.GenerateDataKeyWithoutPlaintext(ctx, &pb.GenerateDataKeyRequest{
		KeySpec: pb.DataKeySpec_DATA_KEY_SPEC_AES_128, Algorithm: pb.Algorithm_AES_256_GCM,
		Key: keyID("aes256", 0), Aad: context7})
	if err != nil || len(only.PlaintextKey) != 0 {
		fail("GenerateDataKeyWithoutPlaintext: %v, plaintext_key %d bytes", err, len(only.PlaintextKey))
	}
	key, err := kek.Open(nil, only.Nonce, append(append([]byte{}, only.Ciphertext...), only.Tag...), context7)
	if err != nil || len(key) != 16 {
		fail("GenerateDataKeyWithoutPlaintext: the wrapped key does not open to 16 bytes (%v)", err)
	}
	fmt.Println("ok: data keys (AES-256-GCM wrapping, crypto/cipher, Decrypt, without plaintext)")
}

func rewrap(ctx context.Context, c pb.CryptoServiceClient) {
	aad, message := []byte("row=42"), []byte("stored under dek version 1")
	old, err := c.Encrypt(ctx, &pb.EncryptRequest{Algorithm: pb.Algorithm_SM4_GCM,
		Key: keyID("dek", 1), Plaintext: message, Aad: aad})
	if err != nil {
		fail("Encrypt under dek v1: %v", err)
	}
	req := &pb.RewrapRequest{Algorithm: pb.Algorithm_SM4_GCM, Key: keyID("dek", 1),
		Ciphertext: old.Ciphertext, Nonce: old.Nonce, Tag: old.Tag, Aad: aad}
	r, err := c.Rewrap(ctx, req)
	if err != nil || r.SourceKeyVersion != 1 || r.KeyVersion != 2 {
		fail("Rewrap: %v (source %d, key %d; want 1, 2)", err, r.GetSourceKeyVersion(), r.GetKeyVersion())
	}
	open := func(version uint32, n, ct, tag []byte) ([]byte, error) {
		resp, err := c.Decrypt(ctx, &pb.DecryptRequest{Algorithm: pb.Algorithm_SM4_GCM,
			Key: keyID("dek", version), Nonce: n, Ciphertext: ct, Tag: tag, Aad: aad})
		return resp.GetPlaintext(), err
	}
	if pt, err := open(2, r.Nonce, r.Ciphertext, r.Tag); err != nil || !bytes.Equal(pt, message) {
		fail("the rewrapped ciphertext does not open under dek v2 (%v)", err)
	}
	if _, err := open(1, r.Nonce, r.Ciphertext, r.Tag); status.Code(err) != codes.InvalidArgument {
		fail("the rewrapped ciphertext under dek v1: %v, want INVALID_ARGUMENT", err)
	}
	bad := &pb.RewrapRequest{Algorithm: pb.Algorithm_SM4_GCM, Key: keyID("dek", 1),
		Ciphertext: old.Ciphertext, Nonce: old.Nonce, Aad: aad,
		Tag: append([]byte{old.Tag[0] ^ 1}, old.Tag[1:]...)}
	batch, err := c.RewrapBatch(ctx, &pb.RewrapBatchRequest{Items: []*pb.RewrapRequest{req, bad, req}})
	if err != nil || len(batch.Results) != 3 {
		fail("RewrapBatch: %v", err)
	}
	if s := batch.Results[1].Status; s.Code != int32(codes.InvalidArgument) || s.Message != "decryption failed" {
		fail("RewrapBatch tampered item: %d %q, want INVALID_ARGUMENT \"decryption failed\"", s.Code, s.Message)
	}
	for _, i := range []int{0, 2} {
		res := batch.Results[i]
		pt, err := open(2, res.Nonce, res.Ciphertext, res.Tag)
		if res.Status.Code != 0 || res.KeyVersion != 2 || err != nil || !bytes.Equal(pt, message) {
			fail("RewrapBatch item %d: status %d, version %d, open %v", i, res.Status.Code, res.KeyVersion, err)
		}
	}
	fmt.Println("ok: Rewrap and RewrapBatch (dek v1 -> v2)")
}

func main() {
	target := flag.String("target", "localhost:50051", "smcryptd address")
	keysDir := flag.String("keys_dir", "", "smcryptd's keyring folder (aes256.pem)")
	flag.Parse()
	conn, err := grpc.Dial(*target, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithTimeout(20*time.Second))
	if err != nil {
		fail("dial %s: %v", *target, err)
	}
	defer conn.Close()
	c := pb.NewCryptoServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dataKeys(ctx, c, *keysDir)
	rewrap(ctx, c)
}
