// Command envelope is the Go client interop check of Rewrap, RewrapBatch, GenerateDataKey,
// GenerateDataKeyWithoutPlaintext and ListKeys against a real smcryptd with
// smcryptd_launch.sh's keyring (aes256.pem an AES-256 key, dek.v1.pem / dek.v2.pem two versions
// of an SM4 key), checked by Go's crypto/aes, crypto/cipher and crypto/sha256:
//   - a data key wrapped with AES-256-GCM under aes256 opens with crypto/cipher's GCM under the
//     key file's bytes (read from -keys_dir) and with the Decrypt RPC; data sealed locally with
//     crypto/cipher under the plaintext data key opens after the key is unwrapped through the
//     RPC; GenerateDataKeyWithoutPlaintext returns no key;
//   - an SM4-GCM ciphertext under dek version 1 rewraps to version 2 (Rewrap and RewrapBatch),
//     opens with Decrypt under version 2 and not under version 1; a tampered batch item is that
//     item's INVALID_ARGUMENT "decryption failed".
//   - ListKeys paged by 2 to the last page lists the launch keyring's key ids in order with
//     their families, algorithms and versions (dek: 1 and 2, primary 2; min_version 1); the
//     SM2 and EC keys' public_key_sha256 is crypto/sha256 of GetPublicKey's SubjectPublicKeyInfo
//     (no algorithm named), symmetric keys have none; a bad page_token is INVALID_ARGUMENT with
//     a google.rpc.ErrorInfo (errdetails) naming field page_token.
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
	"crypto/sha256"
	"encoding/pem"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
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
	only, err := c.GenerateDataKeyWithoutPlaintext(ctx, &pb.GenerateDataKeyWithoutPlaintextRequest{
		KeySpec: pb.DataKeySpec_DATA_KEY_SPEC_AES_128, Algorithm: pb.Algorithm_AES_256_GCM,
		Key: keyID("aes256", 0), Aad: context7})
	if err != nil {
		fail("GenerateDataKeyWithoutPlaintext: %v", err)
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

// launchKeys is smcryptd_launch.sh's keyring, key_id to key_family.
var launchKeys = map[string]string{"aes256": "AES-256", "dek": "SM4", "hmac": "HMAC",
	"p256": "EC P-256", "sm2": "SM2", "sm4": "SM4", "sm4xts": "SM4-XTS"}

func listKeys(ctx context.Context, c pb.CryptoServiceClient) {
	var keys []*pb.KeyInfo
	var ids []string
	token := ""
	for {
		page, err := c.ListKeys(ctx, &pb.ListKeysRequest{PageSize: 2, PageToken: token})
		if err != nil || len(page.Keys) > 2 || page.KeyringLoadTimeUnixMicros <= 0 {
			fail("ListKeys page_size 2: %v (%d keys, keyring load time %d)", err, len(page.GetKeys()),
				page.GetKeyringLoadTimeUnixMicros())
		}
		for _, k := range page.Keys {
			keys, ids = append(keys, k), append(ids, k.KeyId)
		}
		if token = page.NextPageToken; token == "" || len(keys) > len(launchKeys) {
			break
		}
	}
	var want []string
	for id := range launchKeys {
		want = append(want, id)
	}
	sort.Strings(want)
	if token != "" || !reflect.DeepEqual(ids, want) {
		fail("ListKeys: key ids %v (next_page_token %q), want %v and no token", ids, token, want)
	}
	for _, k := range keys {
		family := launchKeys[k.KeyId]
		asymmetric := family == "SM2" || family == "EC P-256"
		newest := uint32(1)
		if k.KeyId == "dek" {
			newest = 2
		}
		if k.KeyFamily != family || len(k.Algorithms) == 0 || len(k.Versions) != int(newest) ||
			k.PrimaryVersion != newest || k.MinVersion != 1 {
			fail("ListKeys %s: %v; want family %q, algorithms, versions 1..%d, primary %d, min_version 1",
				k.KeyId, k, family, newest, newest)
		}
		for i, v := range k.Versions {
			var fingerprint []byte
			if asymmetric {
				pub, err := c.GetPublicKey(ctx, &pb.GetPublicKeyRequest{Key: keyID(k.KeyId, v.Version)})
				if err != nil {
					fail("GetPublicKey %s v%d without an algorithm: %v", k.KeyId, v.Version, err)
				}
				sum := sha256.Sum256(pub.PublicKeyDer)
				fingerprint = sum[:]
			}
			if v.Version != uint32(i+1) || v.LoadTimeUnixMicros <= 0 || v.Retired ||
				v.HasPrivateKey != asymmetric || !bytes.Equal(v.PublicKeySha256, fingerprint) {
				fail("ListKeys %s version %d: %v; want a load time and public_key_sha256 %x", k.KeyId, i+1,
					v, fingerprint)
			}
		}
	}
	_, err := c.ListKeys(ctx, &pb.ListKeysRequest{PageSize: 2, PageToken: "not-a-token"})
	if status.Code(err) != codes.InvalidArgument {
		fail("ListKeys with a bad page_token: %v, want INVALID_ARGUMENT", err)
	}
	st, _ := status.FromError(err)
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	if info == nil || info.Domain != "smcrypt.v1" || info.Reason != "INVALID_ARGUMENT" ||
		info.Metadata["field"] != "page_token" {
		fail("ListKeys with a bad page_token: ErrorInfo %v, want smcrypt.v1 INVALID_ARGUMENT field page_token", info)
	}
	fmt.Printf("ok: ListKeys (%d keys by pages of 2, fingerprints by crypto/sha256, bad page_token)\n", len(keys))
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
	listKeys(ctx, c)
}
