// Command client calls smcryptd from Go: SM3, SM2 sign/verify and SM4-GCM, then the
// international algorithms checked by Go's standard library: SHA-256 against crypto/sha256;
// ECDSA P-256 signatures verified by crypto/ecdsa over a public key parsed by crypto/x509,
// and crypto/ecdsa's signatures verified by the server; AES-256-GCM sealed by the server and
// opened by crypto/cipher, and the other way round. Errors are checked by their
// google.rpc.ErrorInfo reason (errdetails): a tampered tag is DECRYPTION_FAILED, an unknown
// key_id KEY_NOT_FOUND.
// Every check that fails prints "FAIL: ..." and exits with status 1.
//
// One source builds against gRPC-Go 1.33 (Debian 12, GOPATH mode) and the newer modules of
// go.mod: it uses grpc.Dial and grpc.WithInsecure, present in both (1.33 has neither
// grpc.NewClient nor credentials/insecure). README.md ("Go") has both build paths.
//
//	go run . -target localhost:50051 [-ecdsa_key_id p256]
//	go run . -target dns:///smcryptd-headless.smcrypt.svc:50051 -calls 100   # every replica
//	go run . -target 127.0.0.1:50051,127.0.0.1:50052 -calls 100             # a static list
//
// The channel uses round_robin and retries UNAVAILABLE (replicas.go, serviceConfig).
package main

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"math/big"
	"os"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "smcrypt.example/client/smcryptv1"
)

// sm3abc is SM3("abc"), GB/T 32905-2016 Appendix A.1.
const sm3abc = "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

// errorInfo returns the google.rpc.ErrorInfo in the details of err's status, or fails: every
// error status smcryptd makes carries one (crypto.proto, "Errors"), domain "smcrypt.v1".
func errorInfo(err error) *errdetails.ErrorInfo {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.Domain != "smcrypt.v1" {
				fail("ErrorInfo domain %q, want smcrypt.v1", info.Domain)
			}
			return info
		}
	}
	fail("status %v %q has no google.rpc.ErrorInfo in its details (%d details)", st.Code(), st.Message(),
		len(st.Details()))
	return nil
}

func inline(b []byte) *pb.KeyRef { return &pb.KeyRef{Ref: &pb.KeyRef_InlineKey{InlineKey: b}} }

func keyID(id string) *pb.KeyRef { return &pb.KeyRef{Ref: &pb.KeyRef_KeyId{KeyId: id}} }

// p256PublicKey parses a SubjectPublicKeyInfo DER and insists on an ECDSA P-256 key.
func p256PublicKey(spki []byte) *ecdsa.PublicKey {
	k, err := x509.ParsePKIXPublicKey(spki)
	if err != nil {
		fail("crypto/x509 cannot parse the server's public key: %v", err)
	}
	pub, ok := k.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		fail("the server's public key is %T, not ECDSA P-256", k)
	}
	return pub
}

// checkECDSA has the server sign msg with key (DER and raw r‖s) and verifies both
// signatures with crypto/ecdsa over SHA-256(msg); a signature over another message must not
// verify.
func checkECDSA(ctx context.Context, c pb.CryptoServiceClient, label string, key *pb.KeyRef,
	pub *ecdsa.PublicKey, msg []byte) {
	digest := sha256.Sum256(msg)
	other := sha256.Sum256(append(append([]byte{}, msg...), '0'))

	der, err := c.Sign(ctx, &pb.SignRequest{Algorithm: pb.Algorithm_ECDSA_P256, Key: key, Data: msg})
	if err != nil {
		log.Fatalf("Sign ECDSA_P256 (%s): %v", label, err)
	}
	if !ecdsa.VerifyASN1(pub, digest[:], der.Signature) {
		fail("crypto/ecdsa rejects the server's DER ECDSA P-256 signature (%s)", label)
	}
	if ecdsa.VerifyASN1(pub, other[:], der.Signature) {
		fail("crypto/ecdsa accepts the ECDSA P-256 signature (%s) for another message", label)
	}

	raw, err := c.Sign(ctx, &pb.SignRequest{Algorithm: pb.Algorithm_ECDSA_P256, Key: key, Data: msg,
		Options: &pb.SignatureOptions{Encoding: pb.SignatureEncoding_SIGNATURE_ENCODING_RAW}})
	if err != nil {
		log.Fatalf("Sign ECDSA_P256 raw (%s): %v", label, err)
	}
	if len(raw.Signature) != 64 {
		fail("raw ECDSA P-256 signature (%s) is %d bytes, want 64 (r‖s)", label, len(raw.Signature))
	}
	r := new(big.Int).SetBytes(raw.Signature[:32])
	s := new(big.Int).SetBytes(raw.Signature[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		fail("crypto/ecdsa rejects the server's raw r‖s ECDSA P-256 signature (%s)", label)
	}
	fmt.Printf("ECDSA-P256      %s: DER %d bytes and r‖s verified by crypto/ecdsa\n", label, len(der.Signature))
}

func main() {
	target := flag.String("target", "localhost:50051",
		"smcryptd address: HOST:PORT, a resolver target (dns:///NAME:PORT) or HOST:PORT,HOST:PORT,...")
	calls := flag.Int("calls", 0, "only make this many SM3 Hash calls, spread over the replicas")
	ecdsaKeyID := flag.String("ecdsa_key_id", "",
		"also sign with this keyring ECDSA P-256 PRIVATE KEY and check it against GetPublicKey")
	flag.Parse()

	// grpc.WithInsecure: plaintext, like smcryptd without --tls_cert. (Deprecated in newer
	// gRPC-Go in favour of credentials/insecure, which 1.33 lacks.)
	conn, err := dial(*target)
	if err != nil {
		log.Fatalf("connect %s: %v", *target, err)
	}
	defer conn.Close()
	c := pb.NewCryptoServiceClient(conn)
	if *calls > 0 {
		hashCalls(c, *calls)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msg := []byte("transfer 100 CNY to account 42")

	// SM3 (GB/T 32905) against the standard's test vector, SHA-256 against crypto/sha256.
	h, err := c.Hash(ctx, &pb.HashRequest{Algorithm: pb.Algorithm_SM3, Data: []byte("abc")})
	if err != nil {
		log.Fatalf("Hash SM3: %v", err)
	}
	fmt.Println("SM3(abc)       ", hex.EncodeToString(h.Digest))
	if hex.EncodeToString(h.Digest) != sm3abc {
		fail("SM3(abc) is not the GB/T 32905 A.1 value %s", sm3abc)
	}
	h, err = c.Hash(ctx, &pb.HashRequest{Algorithm: pb.Algorithm_SHA_256, Data: msg})
	if err != nil {
		log.Fatalf("Hash SHA_256: %v", err)
	}
	if want := sha256.Sum256(msg); !bytes.Equal(h.Digest, want[:]) {
		fail("SHA-256 from the server %x differs from crypto/sha256 %x", h.Digest, want)
	}
	fmt.Println("SHA-256         equal to crypto/sha256")

	// SM2: key pair (PKCS#8 / SubjectPublicKeyInfo DER), DER signature with the default
	// user ID 1234567812345678, verification; the same signature over another message fails.
	pair, err := c.GenerateKeyPair(ctx, &pb.GenerateKeyPairRequest{Algorithm: pb.Algorithm_SM2})
	if err != nil {
		log.Fatalf("GenerateKeyPair SM2: %v", err)
	}
	sig, err := c.Sign(ctx, &pb.SignRequest{Algorithm: pb.Algorithm_SM2, Key: inline(pair.PrivateKeyDer), Data: msg})
	if err != nil {
		log.Fatalf("Sign SM2: %v", err)
	}
	v, err := c.Verify(ctx, &pb.VerifyRequest{Algorithm: pb.Algorithm_SM2, Key: inline(pair.PublicKeyDer),
		Data: msg, Signature: sig.Signature})
	if err != nil {
		log.Fatalf("Verify SM2: %v", err)
	}
	forged, err := c.Verify(ctx, &pb.VerifyRequest{Algorithm: pb.Algorithm_SM2, Key: inline(pair.PublicKeyDer),
		Data: append(append([]byte{}, msg...), '0'), Signature: sig.Signature})
	if err != nil {
		log.Fatalf("Verify SM2 (other message): %v", err)
	}
	fmt.Println("SM2 signature  ", hex.EncodeToString(sig.Signature), "valid:", v.Valid,
		"| other message:", forged.Valid)
	if !v.Valid || forged.Valid {
		fail("SM2 verification: valid %v (want true), other message %v (want false)", v.Valid, forged.Valid)
	}

	// SM4-GCM (RFC 8998) with a nonce drawn by the server.
	key, err := c.GenerateRandom(ctx, &pb.GenerateRandomRequest{Length: 16})
	if err != nil {
		log.Fatalf("GenerateRandom: %v", err)
	}
	enc, err := c.Encrypt(ctx, &pb.EncryptRequest{Algorithm: pb.Algorithm_SM4_GCM, Key: inline(key.Data),
		Plaintext: msg, Aad: []byte("v1")})
	if err != nil {
		log.Fatalf("Encrypt SM4_GCM: %v", err)
	}
	dec, err := c.Decrypt(ctx, &pb.DecryptRequest{Algorithm: pb.Algorithm_SM4_GCM, Key: inline(key.Data),
		Nonce: enc.Nonce, Ciphertext: enc.Ciphertext, Tag: enc.Tag, Aad: []byte("v1")})
	if err != nil {
		log.Fatalf("Decrypt SM4_GCM: %v", err)
	}
	fmt.Println("SM4-GCM        ", "nonce", hex.EncodeToString(enc.Nonce), "tag", hex.EncodeToString(enc.Tag),
		"round trip:", bytes.Equal(dec.Plaintext, msg))
	if !bytes.Equal(dec.Plaintext, msg) {
		fail("SM4-GCM round trip returned %q", dec.Plaintext)
	}

	// Errors are gRPC status codes with a google.rpc.ErrorInfo in the status details; code on
	// its `reason`, not on the message text. A wrong tag is InvalidArgument "decryption
	// failed", reason DECRYPTION_FAILED.
	_, err = c.Decrypt(ctx, &pb.DecryptRequest{Algorithm: pb.Algorithm_SM4_GCM, Key: inline(key.Data),
		Nonce: enc.Nonce, Ciphertext: enc.Ciphertext, Tag: make([]byte, 16), Aad: []byte("v1")})
	if err == nil {
		fail("Decrypt accepted a tampered SM4-GCM tag")
	}
	st, _ := status.FromError(err)
	info := errorInfo(err)
	fmt.Println("tampered tag   ", st.Code(), st.Message(), "| reason", info.Reason)
	if st.Code() != codes.InvalidArgument || info.Reason != "DECRYPTION_FAILED" {
		fail("tampered tag: status %v reason %q, want InvalidArgument DECRYPTION_FAILED", st.Code(), info.Reason)
	}
	// An unknown key_id: NotFound, reason KEY_NOT_FOUND, the key_id in the metadata.
	_, err = c.GetPublicKey(ctx, &pb.GetPublicKeyRequest{Algorithm: pb.Algorithm_ECDSA_P256, Key: keyID("no-such-key")})
	if err == nil {
		fail("GetPublicKey found key_id no-such-key")
	}
	info = errorInfo(err)
	fmt.Println("unknown key_id ", status.Code(err), "| reason", info.Reason, "key_id", info.Metadata["key_id"])
	if status.Code(err) != codes.NotFound || info.Reason != "KEY_NOT_FOUND" || info.Metadata["key_id"] != "no-such-key" {
		fail("unknown key_id: status %v reason %q key_id %q, want NotFound KEY_NOT_FOUND no-such-key",
			status.Code(err), info.Reason, info.Metadata["key_id"])
	}

	// ECDSA P-256 (FIPS 186-4, SHA-256): a key pair drawn by the server, its private key sent
	// back inline to sign; crypto/x509 parses the SubjectPublicKeyInfo, crypto/ecdsa verifies.
	ecPair, err := c.GenerateKeyPair(ctx, &pb.GenerateKeyPairRequest{Algorithm: pb.Algorithm_ECDSA_P256})
	if err != nil {
		log.Fatalf("GenerateKeyPair ECDSA_P256: %v", err)
	}
	checkECDSA(ctx, c, "GenerateKeyPair", inline(ecPair.PrivateKeyDer), p256PublicKey(ecPair.PublicKeyDer), msg)
	if *ecdsaKeyID != "" {
		// A keyring key never leaves the server: its public half comes from GetPublicKey.
		k, err := c.GetPublicKey(ctx, &pb.GetPublicKeyRequest{Algorithm: pb.Algorithm_ECDSA_P256, Key: keyID(*ecdsaKeyID)})
		if err != nil {
			log.Fatalf("GetPublicKey %q: %v", *ecdsaKeyID, err)
		}
		checkECDSA(ctx, c, "key_id "+*ecdsaKeyID, keyID(*ecdsaKeyID), p256PublicKey(k.PublicKeyDer), msg)
	}

	// And the other way round: crypto/ecdsa signs (DER) with its own key, the server verifies
	// over the SubjectPublicKeyInfo that crypto/x509 writes.
	goKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatalf("crypto/ecdsa: %v", err)
	}
	spki, err := x509.MarshalPKIXPublicKey(&goKey.PublicKey)
	if err != nil {
		log.Fatalf("crypto/x509: %v", err)
	}
	digest := sha256.Sum256(msg)
	goSig, err := ecdsa.SignASN1(rand.Reader, goKey, digest[:])
	if err != nil {
		log.Fatalf("crypto/ecdsa: %v", err)
	}
	for _, tc := range []struct {
		data []byte
		want bool
	}{{msg, true}, {append(append([]byte{}, msg...), '0'), false}} {
		r, err := c.Verify(ctx, &pb.VerifyRequest{Algorithm: pb.Algorithm_ECDSA_P256, Key: inline(spki),
			Data: tc.data, Signature: goSig})
		if err != nil {
			log.Fatalf("Verify ECDSA_P256: %v", err)
		}
		if r.Valid != tc.want {
			fail("the server's verdict on crypto/ecdsa's signature over %q is %v, want %v", tc.data, r.Valid, tc.want)
		}
	}
	fmt.Println("ECDSA-P256      crypto/ecdsa's signature verified by the server (and rejected for another message)")

	// AES-256-GCM (NIST SP 800-38D) under a key drawn here by crypto/rand (keyring key bytes
	// never leave the server). The server seals with a nonce it draws (12 bytes) and a 16-byte
	// tag; crypto/cipher opens ciphertext‖tag. Then crypto/cipher seals and the server opens.
	aesKey := make([]byte, 32)
	if _, err := rand.Read(aesKey); err != nil {
		log.Fatalf("crypto/rand: %v", err)
	}
	block, err := aes.NewCipher(aesKey)
	if err != nil {
		log.Fatalf("crypto/aes: %v", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		log.Fatalf("crypto/cipher: %v", err)
	}
	aad := []byte("v1")
	sealed, err := c.Encrypt(ctx, &pb.EncryptRequest{Algorithm: pb.Algorithm_AES_256_GCM, Key: inline(aesKey),
		Plaintext: msg, Aad: aad})
	if err != nil {
		log.Fatalf("Encrypt AES_256_GCM: %v", err)
	}
	if len(sealed.Nonce) != gcm.NonceSize() || len(sealed.Tag) != gcm.Overhead() {
		fail("AES-256-GCM: nonce %d bytes and tag %d bytes, want %d and %d",
			len(sealed.Nonce), len(sealed.Tag), gcm.NonceSize(), gcm.Overhead())
	}
	opened, err := gcm.Open(nil, sealed.Nonce, append(append([]byte{}, sealed.Ciphertext...), sealed.Tag...), aad)
	if err != nil {
		fail("crypto/cipher cannot open the server's AES-256-GCM ciphertext: %v", err)
	}
	if !bytes.Equal(opened, msg) {
		fail("crypto/cipher opened the server's AES-256-GCM ciphertext to %q", opened)
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		log.Fatalf("crypto/rand: %v", err)
	}
	ours := gcm.Seal(nil, nonce, msg, aad)
	cut := len(ours) - gcm.Overhead()
	back, err := c.Decrypt(ctx, &pb.DecryptRequest{Algorithm: pb.Algorithm_AES_256_GCM, Key: inline(aesKey),
		Nonce: nonce, Ciphertext: ours[:cut], Tag: ours[cut:], Aad: aad})
	if err != nil {
		fail("the server cannot open crypto/cipher's AES-256-GCM ciphertext: %v", err)
	}
	if !bytes.Equal(back.Plaintext, msg) {
		fail("the server opened crypto/cipher's AES-256-GCM ciphertext to %q", back.Plaintext)
	}
	fmt.Println("AES-256-GCM    ", "nonce", hex.EncodeToString(sealed.Nonce),
		"opened by crypto/cipher; crypto/cipher's ciphertext opened by the server")
}
