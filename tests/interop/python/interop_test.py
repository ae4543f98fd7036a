"""Python client interop test: a real smcryptd checked by python3-cryptography.

Run by tests/interop/run_python_client.sh, which generates the stubs from proto/ with protoc and
grpc_python_plugin, starts smcryptd with a keyring (sm2, p256, sm4, sm4xts, hmac, aes256, dek) and
sets SMCRYPT_TARGET and SMCRYPT_KEYS_DIR. Interpreter: Debian's /usr/bin/python3 (python3-grpcio,
python3-protobuf, python3-cryptography).

Every CryptoService RPC but KeyExchange (covered by the Node and Java suites) is called; results
are checked by python3-cryptography (OpenSSL 3.0 underneath), never by smcrypt itself:
  Hash / HashStream / HashBatch   SM3 and SHA-256 digests
  Hmac                             HMAC-SM3 and HMAC-SHA-256 (inline and keyring keys)
  Encrypt / Decrypt / EncryptBatch SM4-ECB/CBC/CTR (cryptography's SM4), SM4-GCM (python3-
                                   cryptography 38 / OpenSSL 3.0 have no SM4-GCM: GCM is composed
                                   here from cryptography's SM4 block per NIST SP 800-38D, and the
                                   composition is itself checked against cryptography's AES-GCM),
                                   AES-128-GCM, SM4-CFB/OFB (cryptography's SM4 with CFB / OFB);
                                   both directions. SM4-XTS and SM4-XTS-GB (neither cryptography
                                   38 nor OpenSSL 3.0 has SM4-XTS): the GB/T 17964-2021 example in
                                   both tweak orders, and random inputs against XTS composed here
                                   from cryptography's SM4 block (IEEE 1619 with ciphertext
                                   stealing, checked against cryptography's AES-XTS); XTS streams,
                                   short data, 16-byte and K1 = K2 keys rejected
  EncryptStream / DecryptStream    CTR, CBC, CFB and OFB streams (odd chunk sizes) equal one-shot
                                   cryptography output; GCM segments opened with the documented
                                   stream key and segment nonces
  Sign / Verify / *Batch           ECDSA-P256 (DER, raw r||s, prehashed) and RSA-2048-PSS:
                                   smcryptd's signatures verified by cryptography and
                                   cryptography's signatures verified by smcryptd
  PublicKeyEncrypt / Decrypt       RSA-2048-OAEP both ways
  Hybrid*                          HPKE round trips (one-shot, HybridEncryptBatch and stream) in
                                   both suites, wire header and tampering (the independent HPKE
                                   check is the Node test against @hpke/core)
  GenerateKeyPair / GetPublicKey   keys load in cryptography and match
  ListKeys                         pages, families, public key fingerprints (SHA-256 by
                                   cryptography), no secret key bytes on the wire, bad tokens
  GenerateRandom, GetServerInfo    lengths, limits, self-tests
  error statuses                   google.rpc.ErrorInfo reasons, parsed by python3-protobuf
                                   (rpc_status.py), in unary calls and batch items
plus grpc.health.v1 Check and server reflection (the calls grpcurl makes).
Random inputs come from a seeded generator; the seed is printed (set SMCRYPT_TEST_SEED to
repeat a run).
"""

import os
import random
import sys
import time
import unittest

import grpc
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, hmac, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives import padding as sym_padding

import health_pb2
import health_pb2_grpc
import rpc_status
from smcrypt.v1 import crypto_pb2 as pb
from smcrypt.v1 import crypto_pb2_grpc as pb_grpc

TARGET = os.environ.get("SMCRYPT_TARGET", "127.0.0.1:50051")
KEYS_DIR = os.environ.get("SMCRYPT_KEYS_DIR", "")
SEED = int(os.environ.get("SMCRYPT_TEST_SEED", str(time.time_ns() % (1 << 32))))
RNG = random.Random(SEED)


def rand(n):
    return RNG.randbytes(n)


# ---- Independent helpers built on python3-cryptography --------------------------------------

def digest(alg, data):
    h = hashes.Hash(alg)
    h.update(data)
    return h.finalize()


def mac(alg, key, data):
    h = hmac.HMAC(key, alg)
    h.update(data)
    return h.finalize()


def sm4_mode(key, mode, data, decrypt=False, pkcs7=False):
    """SM4 (or AES, by key length via `algo`) in a cryptography mode, with optional PKCS#7."""
    cipher = Cipher(algorithms.SM4(key), mode)
    if decrypt:
        d = cipher.decryptor()
        out = d.update(data) + d.finalize()
        if pkcs7:
            u = sym_padding.PKCS7(128).unpadder()
            out = u.update(out) + u.finalize()
        return out
    if pkcs7:
        p = sym_padding.PKCS7(128).padder()
        data = p.update(data) + p.finalize()
    e = cipher.encryptor()
    return e.update(data) + e.finalize()


class ComposedGcm:
    """GCM (NIST SP 800-38D, sections 6.3-7.2) over any 128-bit block cipher given as an ECB
    block function from python3-cryptography. Used for SM4-GCM, which cryptography 38 on
    OpenSSL 3.0 lacks; checked against cryptography's AES-GCM in test_composed_gcm_matches_aesgcm."""

    R = 0xE1 << 120

    def __init__(self, block_cipher):
        self._ecb = Cipher(block_cipher, modes.ECB()).encryptor()
        self._h = int.from_bytes(self._block(bytes(16)), "big")

    def _block(self, b):
        return self._ecb.update(b)

    def _mul(self, x):  # x * H in GF(2^128), Algorithm 1 of SP 800-38D
        z, v = 0, self._h
        for i in range(127, -1, -1):
            if (x >> i) & 1:
                z ^= v
            v = (v >> 1) ^ self.R if v & 1 else v >> 1
        return z

    def _ghash(self, data):
        y = 0
        for i in range(0, len(data), 16):
            y = self._mul(y ^ int.from_bytes(data[i:i + 16], "big"))
        return y.to_bytes(16, "big")

    @staticmethod
    def _pad(b):
        return b + bytes(-len(b) % 16)

    def _j0(self, iv):
        if len(iv) == 12:
            return iv + b"\x00\x00\x00\x01"
        return self._ghash(self._pad(iv) + bytes(8) + (8 * len(iv)).to_bytes(8, "big"))

    def _gctr(self, icb, data):
        out = bytearray()
        prefix, ctr = icb[:12], int.from_bytes(icb[12:], "big")
        for i in range(0, len(data), 16):
            ks = self._block(prefix + ctr.to_bytes(4, "big"))
            out += bytes(a ^ b for a, b in zip(data[i:i + 16], ks))
            ctr = (ctr + 1) & 0xFFFFFFFF  # inc32
        return bytes(out)

    def _tag(self, j0, aad, ct, tag_len):
        s = self._ghash(self._pad(aad) + self._pad(ct) + (8 * len(aad)).to_bytes(8, "big") +
                        (8 * len(ct)).to_bytes(8, "big"))
        return self._gctr(j0, s)[:tag_len]

    def _inc32(self, j0):
        return j0[:12] + ((int.from_bytes(j0[12:], "big") + 1) & 0xFFFFFFFF).to_bytes(4, "big")

    def seal(self, iv, pt, aad, tag_len=16):
        j0 = self._j0(iv)
        ct = self._gctr(self._inc32(j0), pt)
        return ct, self._tag(j0, aad, ct, tag_len)

    def open(self, iv, ct, tag, aad):
        j0 = self._j0(iv)
        if self._tag(j0, aad, ct, len(tag)) != tag:
            raise ValueError("tag mismatch")
        return self._gctr(self._inc32(j0), ct)


class ComposedXts:
    """XTS (IEEE Std 1619-2018 §5.3-5.4, ciphertext stealing) over a 128-bit block cipher from
    python3-cryptography (ECB block functions under K1 and K2), for SM4-XTS, which neither
    python3-cryptography 38 nor OpenSSL 3.0's libcrypto provides. `gb` selects the tweak
    multiplication by alpha of GB/T 17964-2021 (GCM's bit order) instead of IEEE's
    little-endian one. Checked against cryptography's AES-XTS in
    test_composed_xts_matches_aes_xts; the GB variant against the GB/T 17964 example."""

    def __init__(self, cipher_cls, key, gb=False):
        half = len(key) // 2
        self._k1 = Cipher(cipher_cls(key[:half]), modes.ECB())
        self._k2 = Cipher(cipher_cls(key[half:]), modes.ECB()).encryptor()
        self._gb = gb

    def _next(self, t):
        if self._gb:  # GCM bit order: big-endian integer, shift right, reduce by 0xE1 || 0^120
            x = int.from_bytes(t, "big")
            x = (x >> 1) ^ (0xE1 << 120) if x & 1 else x >> 1
            return x.to_bytes(16, "big")
        x = int.from_bytes(t, "little") << 1  # IEEE: little-endian, shift left, reduce by 0x87
        if x >> 128:
            x = (x & ((1 << 128) - 1)) ^ 0x87
        return x.to_bytes(16, "little")

    @staticmethod
    def _xor(a, b):
        return bytes(x ^ y for x, y in zip(a, b))

    def _run(self, iv, data, decrypt):
        if len(data) < 16:
            raise ValueError("XTS needs at least one block")
        ecb = (self._k1.decryptor() if decrypt else self._k1.encryptor())

        def blk(b, t):
            return self._xor(ecb.update(self._xor(b, t)), t)

        tweaks = [self._k2.update(iv)]
        for _ in range((len(data) + 15) // 16):
            tweaks.append(self._next(tweaks[-1]))
        full, rem = divmod(len(data), 16)
        n = full - 1 if rem else full
        out = bytearray()
        for j in range(n):
            out += blk(data[16 * j:16 * j + 16], tweaks[j])
        if rem:
            # Ciphertext stealing: the last full block uses tweak m-1 and the stitched block
            # tweak m when encrypting; decryption swaps the two tweaks.
            t_a, t_b = (tweaks[n + 1], tweaks[n]) if decrypt else (tweaks[n], tweaks[n + 1])
            cc = blk(data[16 * n:16 * n + 16], t_a)
            tail = data[16 * n + 16:]
            out += blk(tail + cc[rem:], t_b) + cc[:rem]
        return bytes(out)

    def encrypt(self, iv, pt):
        return self._run(iv, pt, False)

    def decrypt(self, iv, ct):
        return self._run(iv, ct, True)


def ecdsa_verify(public_key, signature_der, data, prehashed=False):
    alg = utils.Prehashed(hashes.SHA256()) if prehashed else hashes.SHA256()
    try:
        public_key.verify(signature_der, data, ec.ECDSA(alg))
        return True
    except InvalidSignature:
        return False


def raw_to_der(sig):
    assert len(sig) == 64, len(sig)
    return utils.encode_dss_signature(int.from_bytes(sig[:32], "big"),
                                      int.from_bytes(sig[32:], "big"))


def der(key):
    if isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey)):
        return key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
    return key.public_bytes(serialization.Encoding.DER,
                            serialization.PublicFormat.SubjectPublicKeyInfo)


def inline(b):
    return pb.KeyRef(inline_key=b)


def key_id(name):
    return pb.KeyRef(key_id=name)


def read_pem_block(path):
    """Raw bytes of a keyring `SM4 KEY` / `HMAC KEY` PEM file."""
    import base64
    with open(path) as f:
        lines = f.read().strip().splitlines()
    return base64.b64decode("".join(lines[1:-1]))


SIZES = [0, 1, 15, 16, 17, 55, 56, 63, 64, 65, 1000, 4096 + 3]


class SmcryptdInteropTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.channel = grpc.insecure_channel(TARGET)
        grpc.channel_ready_future(cls.channel).result(timeout=20)
        cls.stub = pb_grpc.CryptoServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()

    def assertRpcError(self, code, fn, *args):
        with self.assertRaises(grpc.RpcError) as cm:
            fn(*args)
        self.assertEqual(cm.exception.code(), code, cm.exception.details())
        return cm.exception

    # ---- Server, health, reflection ----------------------------------------------------------

    def test_server_info_and_health(self):
        info = self.stub.GetServerInfo(pb.GetServerInfoRequest(run_self_tests=True))
        self.assertRegex(info.version, r"^\d+\.\d+\.\d+$")
        self.assertTrue(info.self_tests_passed)
        self.assertTrue(info.self_tests)
        self.assertTrue(all(t.passed for t in info.self_tests))
        self.assertEqual(info.keyring_size, 7)  # smcryptd_launch.sh's keys
        for name in ("SM3", "SHA-256", "SM4-GCM", "SM2", "ECDSA-P256", "HPKE-P256-SHA256-AES128GCM"):
            self.assertIn(name, info.algorithms)
        self.assertEqual({k.algorithm for k in info.kernels}, {"SM2", "SM3", "SM4"})
        health = health_pb2_grpc.HealthStub(self.channel)
        self.assertEqual(health.Check(health_pb2.HealthCheckRequest()).status,
                         health_pb2.HealthCheckResponse.SERVING)
        self.assertEqual(health.Check(health_pb2.HealthCheckRequest(
            service="smcrypt.v1.CryptoService")).status, health_pb2.HealthCheckResponse.SERVING)

    def test_reflection_lists_services_and_describes_every_method(self):
        # What grpcurl does: grpc.reflection.v1alpha ServerReflectionInfo, list_services, then
        # file_containing_symbol. The messages are tiny, so they are encoded by hand here.
        call = self.channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")

        def field(tag, payload):
            return bytes([tag]) + _varint(len(payload)) + payload

        list_req = field(0x3A, b"")  # list_services = 7 (string)
        symbol_req = field(0x22, b"smcrypt.v1.CryptoService")  # file_containing_symbol = 4
        responses = list(call(iter([list_req, symbol_req]), timeout=10))
        self.assertEqual(len(responses), 2)
        services = [_fields(s)[1][0].decode()
                    for s in _fields(_fields(responses[0])[6][0]).get(1, [])]
        self.assertIn("smcrypt.v1.CryptoService", services)
        self.assertIn("grpc.health.v1.Health", services)
        from google.protobuf import descriptor_pb2
        files = _fields(_fields(responses[1])[4][0])[1]
        fdp = descriptor_pb2.FileDescriptorProto.FromString(files[0])
        self.assertEqual(fdp.package, "smcrypt.v1")
        (svc,) = [s for s in fdp.service if s.name == "CryptoService"]
        want = [m.name for m in pb.DESCRIPTOR.services_by_name["CryptoService"].methods]
        self.assertEqual([m.name for m in svc.method], want)
        self.assertEqual(len(want), 30)

    # ---- Hashing -----------------------------------------------------------------------------

    def test_hash_matches_cryptography(self):
        for alg, ref in ((pb.SM3, hashes.SM3()), (pb.SHA_256, hashes.SHA256())):
            for n in SIZES + [100_000]:
                data = rand(n)
                got = self.stub.Hash(pb.HashRequest(algorithm=alg, data=data)).digest
                self.assertEqual(got, digest(ref, data), f"{pb.Algorithm.Name(alg)} {n} B")
        # GB/T 32905-2016 A.1: SM3("abc").
        self.assertEqual(self.stub.Hash(pb.HashRequest(algorithm=pb.SM3, data=b"abc")).digest.hex(),
                         "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0")
        self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.Hash,
                            pb.HashRequest(algorithm=pb.SM4_GCM, data=b"x"))

    def test_hash_stream_matches_cryptography(self):
        for alg, ref in ((pb.SM3, hashes.SM3()), (pb.SHA_256, hashes.SHA256())):
            chunks = [rand(RNG.randrange(0, 70_000)) for _ in range(7)]
            reqs = [pb.HashStreamRequest(algorithm=alg, data=chunks[0])]
            reqs += [pb.HashStreamRequest(data=c) for c in chunks[1:]]
            resp = self.stub.HashStream(iter(reqs))
            whole = b"".join(chunks)
            self.assertEqual(resp.total_bytes, len(whole))
            self.assertEqual(resp.digest, digest(ref, whole))

    def test_hash_batch_matches_cryptography(self):
        items, refs = [], []
        for i in range(40):
            alg, ref = ((pb.SM3, hashes.SM3()), (pb.SHA_256, hashes.SHA256()))[i % 2]
            data = rand(RNG.randrange(0, 300))
            items.append(pb.HashRequest(algorithm=alg, data=data))
            refs.append(digest(ref, data))
        items.insert(5, pb.HashRequest(algorithm=pb.HMAC_SM3, data=b"x"))  # one bad item
        refs.insert(5, None)
        results = self.stub.HashBatch(pb.HashBatchRequest(items=items)).results
        self.assertEqual(len(results), len(items))
        for r, ref in zip(results, refs):
            if ref is None:
                self.assertEqual(r.status.code, grpc.StatusCode.INVALID_ARGUMENT.value[0])
            else:
                self.assertEqual(r.status.code, 0, r.status.message)
                self.assertEqual(r.digest, ref)

    def test_hmac_matches_cryptography(self):
        for alg, ref in ((pb.HMAC_SM3, hashes.SM3()), (pb.HMAC_SHA_256, hashes.SHA256())):
            for key_len in (1, 16, 32, 64, 65, 100):
                key, data = rand(key_len), rand(RNG.randrange(0, 2000))
                got = self.stub.Hmac(pb.HmacRequest(algorithm=alg, key=inline(key), data=data)).mac
                self.assertEqual(got, mac(ref, key, data))
                ok = self.stub.Hmac(pb.HmacRequest(algorithm=alg, key=inline(key), data=data,
                                                   expected_mac=mac(ref, key, data)))
                self.assertTrue(ok.valid)
                bad = bytearray(mac(ref, key, data))
                bad[RNG.randrange(32)] ^= 1 << RNG.randrange(8)
                self.assertFalse(self.stub.Hmac(pb.HmacRequest(
                    algorithm=alg, key=inline(key), data=data, expected_mac=bytes(bad))).valid)
        key = read_pem_block(os.path.join(KEYS_DIR, "hmac.pem"))
        data = rand(333)
        got = self.stub.Hmac(pb.HmacRequest(algorithm=pb.HMAC_SM3, key=key_id("hmac"), data=data))
        self.assertEqual(got.mac, mac(hashes.SM3(), key, data))

    # ---- Symmetric encryption ----------------------------------------------------------------

    def test_sm4_ecb_cbc_ctr_match_cryptography_both_ways(self):
        for n in SIZES:
            key, iv, pt = rand(16), rand(16), rand(n)
            cases = [(pb.SM4_CTR, modes.CTR(iv), iv, pb.PADDING_UNSPECIFIED, False),
                     (pb.SM4_CBC, modes.CBC(iv), iv, pb.PADDING_PKCS7, True),
                     (pb.SM4_ECB, modes.ECB(), None, pb.PADDING_UNSPECIFIED, True)]
            if n % 16 == 0:
                cases += [(pb.SM4_CBC, modes.CBC(iv), iv, pb.PADDING_NONE, False),
                          (pb.SM4_ECB, modes.ECB(), None, pb.PADDING_NONE, False)]
            for alg, mode, nonce, pad, pkcs7 in cases:
                what = f"{pb.Algorithm.Name(alg)} {pb.Padding.Name(pad)} {n} B"
                req = pb.EncryptRequest(algorithm=alg, key=inline(key), plaintext=pt, padding=pad)
                if nonce is not None:
                    req.nonce = nonce
                resp = self.stub.Encrypt(req)
                self.assertEqual(resp.ciphertext, sm4_mode(key, mode, pt, pkcs7=pkcs7), what)
                self.assertEqual(resp.tag, b"")
                ct = sm4_mode(key, mode, pt, pkcs7=pkcs7)
                back = self.stub.Decrypt(pb.DecryptRequest(algorithm=alg, key=inline(key),
                                                           nonce=nonce or b"", ciphertext=ct,
                                                           padding=pad))
                self.assertEqual(back.plaintext, pt, what)

    def test_sm4_server_drawn_iv_and_keyring_key(self):
        key = read_pem_block(os.path.join(KEYS_DIR, "sm4.pem"))
        pt = rand(100)
        resp = self.stub.Encrypt(pb.EncryptRequest(algorithm=pb.SM4_CTR, key=key_id("sm4"),
                                                   plaintext=pt))
        self.assertEqual(len(resp.nonce), 16)
        self.assertEqual(resp.ciphertext, sm4_mode(key, modes.CTR(resp.nonce), pt))
        resp2 = self.stub.Encrypt(pb.EncryptRequest(algorithm=pb.SM4_CTR, key=key_id("sm4"),
                                                    plaintext=pt))
        self.assertNotEqual(resp.nonce, resp2.nonce)
        self.assertRpcError(grpc.StatusCode.NOT_FOUND, self.stub.Encrypt,
                            pb.EncryptRequest(algorithm=pb.SM4_CTR, key=key_id("nope"),
                                              plaintext=pt))
        self.assertRpcError(grpc.StatusCode.FAILED_PRECONDITION, self.stub.Encrypt,
                            pb.EncryptRequest(algorithm=pb.AES_128_GCM, key=key_id("sm4"),
                                              plaintext=pt))

    def test_composed_gcm_matches_aesgcm(self):
        # The SM4-GCM reference below is only as good as ComposedGcm: check it on AES first.
        for n in (0, 1, 16, 17, 100):
            key, pt, aad = rand(16), rand(n), rand(RNG.randrange(0, 40))
            gcm = ComposedGcm(algorithms.AES(key))
            for iv in (rand(12), rand(16), rand(8)):
                ct, tag = gcm.seal(iv, pt, aad)
                e = Cipher(algorithms.AES(key), modes.GCM(iv)).encryptor()
                e.authenticate_additional_data(aad)
                want = e.update(pt) + e.finalize()
                self.assertEqual((ct, tag), (want, e.tag))
            iv = rand(12)
            self.assertEqual(b"".join(gcm.seal(iv, pt, aad)), AESGCM(key).encrypt(iv, pt, aad))

    def test_sm4_gcm_matches_composed_gcm_both_ways(self):
        for n in (0, 1, 15, 16, 17, 64, 1000):
            key, pt, aad = rand(16), rand(n), rand(RNG.randrange(0, 50))
            gcm = ComposedGcm(algorithms.SM4(key))
            for iv, tag_len in ((rand(12), 16), (rand(12), 12), (rand(16), 16), (rand(1), 16)):
                what = f"SM4-GCM {n} B, iv {len(iv)} B, tag {tag_len} B"
                resp = self.stub.Encrypt(pb.EncryptRequest(
                    algorithm=pb.SM4_GCM, key=inline(key), plaintext=pt, nonce=iv, aad=aad,
                    tag_length=tag_len))
                self.assertEqual((resp.ciphertext, resp.tag), gcm.seal(iv, pt, aad, tag_len), what)
                ct, tag = gcm.seal(iv, pt, aad, tag_len)
                back = self.stub.Decrypt(pb.DecryptRequest(algorithm=pb.SM4_GCM, key=inline(key),
                                                           nonce=iv, ciphertext=ct, tag=tag,
                                                           aad=aad))
                self.assertEqual(back.plaintext, pt, what)
            bad = bytearray(tag)
            bad[0] ^= 0x80
            err = self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.Decrypt,
                                      pb.DecryptRequest(algorithm=pb.SM4_GCM, key=inline(key),
                                                        nonce=iv, ciphertext=ct, tag=bytes(bad),
                                                        aad=aad))
            self.assertEqual(err.details(), "decryption failed")

    def test_errors_carry_an_error_info_reason(self):
        def reason(code, fn, req):
            err = self.assertRpcError(code, fn, req)
            info = rpc_status.error_info(err)
            self.assertIsNotNone(info, err.details())
            self.assertEqual(info.domain, "smcrypt.v1")
            return info
        key, iv, pt = rand(16), rand(12), rand(50)
        ct = self.stub.Encrypt(pb.EncryptRequest(algorithm=pb.SM4_GCM, key=inline(key),
                                                 plaintext=pt, nonce=iv))
        info = reason(grpc.StatusCode.INVALID_ARGUMENT, self.stub.Decrypt,
                      pb.DecryptRequest(algorithm=pb.SM4_GCM, key=inline(key), nonce=iv,
                                        ciphertext=ct.ciphertext, tag=bytes(16)))
        self.assertEqual(info.reason, "DECRYPTION_FAILED")
        self.assertEqual(dict(info.metadata), {})
        info = reason(grpc.StatusCode.NOT_FOUND, self.stub.Sign,
                      pb.SignRequest(algorithm=pb.SM2, key=pb.KeyRef(key_id="no-such-key"),
                                     data=b"m"))
        self.assertEqual(info.reason, "KEY_NOT_FOUND")
        self.assertEqual(dict(info.metadata), {"key_id": "no-such-key"})
        info = reason(grpc.StatusCode.FAILED_PRECONDITION, self.stub.Sign,
                      pb.SignRequest(algorithm=pb.ECDSA_P256, key=pb.KeyRef(key_id="sm2"),
                                     data=b"m"))
        self.assertEqual(info.reason, "WRONG_KEY_FAMILY")
        self.assertEqual(info.metadata["key_family"], "SM2")
        info = reason(grpc.StatusCode.INVALID_ARGUMENT, self.stub.Hash,
                      pb.HashRequest(algorithm=pb.SM4_GCM, data=b"x"))
        self.assertEqual(info.reason, "INVALID_ARGUMENT")
        # A batch item's Status is a google.rpc.Status with the same ErrorInfo.
        results = self.stub.SignBatch(pb.SignBatchRequest(items=[
            pb.SignRequest(algorithm=pb.SM2, key=pb.KeyRef(key_id="no-such-key"), data=b"m"),
            pb.SignRequest(algorithm=pb.SM2, key=pb.KeyRef(key_id="sm2"), data=b"m")])).results
        item = rpc_status.error_info_of_status(results[0].status.SerializeToString())
        self.assertEqual(item.reason, "KEY_NOT_FOUND")
        self.assertEqual(len(results[1].status.details), 0)

    def test_aes_gcm_matches_cryptography_both_ways(self):
        for key_len, alg in ((16, pb.AES_128_GCM), (32, pb.AES_256_GCM)):
            key, iv, pt, aad = rand(key_len), rand(12), rand(777), rand(20)
            resp = self.stub.Encrypt(pb.EncryptRequest(algorithm=alg, key=inline(key),
                                                       plaintext=pt, nonce=iv, aad=aad))
            self.assertEqual(resp.ciphertext + resp.tag, AESGCM(key).encrypt(iv, pt, aad))
            sealed = AESGCM(key).encrypt(iv, pt, aad)
            back = self.stub.Decrypt(pb.DecryptRequest(algorithm=alg, key=inline(key), nonce=iv,
                                                       ciphertext=sealed[:-16], tag=sealed[-16:],
                                                       aad=aad))
            self.assertEqual(back.plaintext, pt)

    def test_encrypt_batch_matches_cryptography(self):
        items, want = [], []
        for i in range(20):
            key, iv, pt = rand(16), rand(16), rand(RNG.randrange(0, 200))
            items.append(pb.EncryptRequest(algorithm=pb.SM4_CTR, key=inline(key), plaintext=pt,
                                           nonce=iv))
            want.append(sm4_mode(key, modes.CTR(iv), pt))
        items.append(pb.EncryptRequest(algorithm=pb.SM4_CTR, key=inline(rand(15)), plaintext=b"x"))
        results = self.stub.EncryptBatch(pb.EncryptBatchRequest(items=items)).results
        self.assertEqual(len(results), 21)
        for r, w in zip(results, want):
            self.assertEqual(r.status.code, 0, r.status.message)
            self.assertEqual(r.ciphertext, w)
        self.assertEqual(results[-1].status.code, grpc.StatusCode.INVALID_ARGUMENT.value[0])

    def test_encrypt_stream_ctr_cbc_equal_cryptography(self):
        for alg, mk, pkcs7 in ((pb.SM4_CTR, modes.CTR, False), (pb.SM4_CBC, modes.CBC, True)):
            key, iv = rand(16), rand(16)
            chunks = [rand(RNG.randrange(0, 5000)) for _ in range(6)]
            params = pb.EncryptStreamParams(algorithm=alg, key=inline(key), nonce=iv)
            reqs = [pb.EncryptStreamRequest(params=params, plaintext=chunks[0])]
            reqs += [pb.EncryptStreamRequest(plaintext=c) for c in chunks[1:]]
            out = list(self.stub.EncryptStream(iter(reqs)))
            self.assertEqual(out[0].nonce, iv)
            self.assertTrue(out[-1].last)
            ct = b"".join(r.ciphertext for r in out)
            self.assertEqual(ct, sm4_mode(key, mk(iv), b"".join(chunks), pkcs7=pkcs7))
            # DecryptStream of cryptography's ciphertext, cut at arbitrary points.
            cuts = sorted(RNG.sample(range(len(ct) + 1), 3))
            pieces = [ct[a:b] for a, b in zip([0] + cuts, cuts + [len(ct)])]
            dparams = pb.DecryptStreamParams(algorithm=alg, key=inline(key), nonce=iv)
            dreqs = [pb.DecryptStreamRequest(params=dparams)]
            dreqs += [pb.DecryptStreamRequest(ciphertext=p) for p in pieces]
            pt = b"".join(r.plaintext for r in self.stub.DecryptStream(iter(dreqs)))
            self.assertEqual(pt, b"".join(chunks))

    def test_encrypt_stream_gcm_segments_open_with_documented_nonces(self):
        # crypto.proto: segment i is sealed under K_N = HKDF-SM3(salt = nonce, IKM = key,
        # info = "smcrypt aead stream" 0x00 "SM4-GCM" 0x00 SM3(aad), 16) with
        # N_i = 0^7 || BE32(i) || last and an empty aad.
        key, iv, aad = rand(16), rand(12), rand(10)
        aad_hash = hashes.Hash(hashes.SM3())
        aad_hash.update(aad)
        stream_key = HKDF(algorithm=hashes.SM3(), length=16, salt=iv,
                          info=b"smcrypt aead stream\x00SM4-GCM\x00" + aad_hash.finalize()
                          ).derive(key)
        gcm = ComposedGcm(algorithms.SM4(stream_key))
        chunks = [rand(RNG.randrange(1, 600)) for _ in range(4)]
        params = pb.EncryptStreamParams(algorithm=pb.SM4_GCM, key=inline(key), nonce=iv, aad=aad)
        reqs = [pb.EncryptStreamRequest(params=params, plaintext=chunks[0])]
        reqs += [pb.EncryptStreamRequest(plaintext=c) for c in chunks[1:]]
        segments = [r for r in self.stub.EncryptStream(iter(reqs)) if r.tag]
        # Each chunk is one segment; the one pending at half-close is the final one.
        self.assertEqual(len(segments), len(chunks))

        def seg_nonce(i, last):
            return bytes(7) + i.to_bytes(4, "big") + bytes([1 if last else 0])

        opened = [gcm.open(seg_nonce(i, i == len(segments) - 1), s.ciphertext, s.tag, b"")
                  for i, s in enumerate(segments)]
        self.assertEqual(opened, chunks)
        with self.assertRaises(ValueError):  # the final segment under a non-final nonce
            gcm.open(seg_nonce(len(segments) - 1, False), segments[-1].ciphertext,
                     segments[-1].tag, b"")
        # And the reverse: segments sealed here (the last one final, then an empty final
        # segment after them), opened by smcryptd.
        for mine in (chunks[::-1], chunks + [b""]):
            sealed = [gcm.seal(seg_nonce(i, i == len(mine) - 1), c, b"")
                      for i, c in enumerate(mine)]
            dparams = pb.DecryptStreamParams(algorithm=pb.SM4_GCM, key=inline(key), nonce=iv,
                                             aad=aad)
            dreqs = [pb.DecryptStreamRequest(params=dparams)]
            dreqs += [pb.DecryptStreamRequest(ciphertext=c, tag=t) for c, t in sealed]
            pt = b"".join(r.plaintext for r in self.stub.DecryptStream(iter(dreqs)))
            self.assertEqual(pt, b"".join(mine))
        # A stream whose final segment was dropped is rejected.
        sealed = [gcm.seal(seg_nonce(i, False), c, b"") for i, c in enumerate(chunks)]
        dparams = pb.DecryptStreamParams(algorithm=pb.SM4_GCM, key=inline(key), nonce=iv, aad=aad)
        dreqs = [pb.DecryptStreamRequest(params=dparams)]
        dreqs += [pb.DecryptStreamRequest(ciphertext=c, tag=t) for c, t in sealed]
        with self.assertRaises(grpc.RpcError) as cm:
            list(self.stub.DecryptStream(iter(dreqs)))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)

    # ---- SM4-CFB, SM4-OFB, SM4-XTS -----------------------------------------------------------

    def test_sm4_cfb_ofb_match_cryptography_both_ways(self):
        sizes = [0, 1, 15, 16, 17, 100, 1000] + [RNG.randrange(0, 5000) for _ in range(5)]
        checked = 0
        for n in sizes:
            for alg, mk in ((pb.SM4_CFB, modes.CFB), (pb.SM4_OFB, modes.OFB)):
                key, iv, pt = rand(16), rand(16), rand(n)
                what = f"{pb.Algorithm.Name(alg)} {n} B"
                resp = self.stub.Encrypt(pb.EncryptRequest(algorithm=alg, key=inline(key),
                                                           plaintext=pt, nonce=iv))
                self.assertEqual(resp.nonce, iv, what)
                self.assertEqual(resp.tag, b"", what)
                self.assertEqual(resp.ciphertext, sm4_mode(key, mk(iv), pt), what)
                back = self.stub.Decrypt(pb.DecryptRequest(
                    algorithm=alg, key=inline(key), nonce=iv, ciphertext=sm4_mode(key, mk(iv), pt)))
                self.assertEqual(back.plaintext, pt, what)
                # A server-drawn IV: cryptography decrypts with the returned one.
                drawn = self.stub.Encrypt(pb.EncryptRequest(algorithm=alg, key=inline(key),
                                                            plaintext=pt))
                self.assertEqual(len(drawn.nonce), 16, what)
                self.assertEqual(sm4_mode(key, mk(drawn.nonce), drawn.ciphertext, decrypt=True),
                                 pt, what)
                checked += 1
        self.assertEqual(checked, 2 * len(sizes))
        # The keyring's 16-byte SM4 key works for both modes.
        key, iv, pt = read_pem_block(os.path.join(KEYS_DIR, "sm4.pem")), rand(16), rand(77)
        for alg, mk in ((pb.SM4_CFB, modes.CFB), (pb.SM4_OFB, modes.OFB)):
            resp = self.stub.Encrypt(pb.EncryptRequest(algorithm=alg, key=key_id("sm4"),
                                                       plaintext=pt, nonce=iv))
            self.assertEqual(resp.ciphertext, sm4_mode(key, mk(iv), pt))
            for bad in (pb.EncryptRequest(algorithm=alg, key=inline(rand(16)), plaintext=pt,
                                          nonce=rand(12)),
                        pb.EncryptRequest(algorithm=alg, key=inline(rand(32)), plaintext=pt,
                                          nonce=iv)):
                self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.Encrypt, bad)

    def test_encrypt_stream_cfb_ofb_equal_cryptography(self):
        for alg, mk in ((pb.SM4_CFB, modes.CFB), (pb.SM4_OFB, modes.OFB)):
            for sizes in ([1, 15, 17, 3, 0, 33, 7], [0, 16, 1, 1, 1, 31, 1000 + 5],
                          [RNG.randrange(0, 3000) | 1 for _ in range(6)]):
                key, iv = rand(16), rand(16)
                chunks = [rand(n) for n in sizes]
                what = f"{pb.Algorithm.Name(alg)} chunks {sizes}"
                params = pb.EncryptStreamParams(algorithm=alg, key=inline(key), nonce=iv)
                reqs = [pb.EncryptStreamRequest(params=params, plaintext=chunks[0])]
                reqs += [pb.EncryptStreamRequest(plaintext=c) for c in chunks[1:]]
                out = list(self.stub.EncryptStream(iter(reqs)))
                self.assertEqual(out[0].nonce, iv, what)
                self.assertTrue(out[-1].last, what)
                self.assertTrue(all(r.tag == b"" for r in out), what)
                ct = b"".join(r.ciphertext for r in out)
                whole = b"".join(chunks)
                self.assertEqual(ct, sm4_mode(key, mk(iv), whole), what)
                # DecryptStream of cryptography's ciphertext, cut at odd points.
                mine = sm4_mode(key, mk(iv), whole)
                cuts = sorted(RNG.sample(range(len(mine) + 1), 4))
                pieces = [mine[a:b] for a, b in zip([0] + cuts, cuts + [len(mine)])]
                dparams = pb.DecryptStreamParams(algorithm=alg, key=inline(key), nonce=iv)
                dreqs = [pb.DecryptStreamRequest(params=dparams)]
                dreqs += [pb.DecryptStreamRequest(ciphertext=p) for p in pieces]
                pt = b"".join(r.plaintext for r in self.stub.DecryptStream(iter(dreqs)))
                self.assertEqual(pt, whole, what)

    def test_composed_xts_matches_aes_xts(self):
        # The SM4-XTS reference below is only as good as ComposedXts: check it on AES first
        # (cryptography's AES-128-XTS, whose "tweak" is the IV encrypted under K2).
        for n in (16, 17, 31, 32, 33, 100, 1000, RNG.randrange(16, 3000)):
            key, iv, pt = rand(32), rand(16), rand(n)
            xts = ComposedXts(algorithms.AES, key)
            e = Cipher(algorithms.AES(key), modes.XTS(iv)).encryptor()
            want = e.update(pt) + e.finalize()
            self.assertEqual(xts.encrypt(iv, pt), want, f"AES-XTS {n} B")
            self.assertEqual(xts.decrypt(iv, want), pt, f"AES-XTS {n} B")

    def test_sm4_xts_gbt17964_example(self):
        # GB/T 17964-2021 example: the same key, IV and plaintext under both tweak orders
        # (the first block is the same, as its tweak is E(K2, IV) in both).
        key = bytes.fromhex("2B7E151628AED2A6ABF7158809CF4F3C000102030405060708090A0B0C0D0E0F")
        iv = bytes.fromhex("F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF")
        pt = bytes.fromhex("6BC1BEE22E409F96E93D7E117393172AAE2D8A571E03AC9C9EB76FAC45AF8E51"
                           "30C81C46A35CE411E5FBC1191A0A52EFF69F2445DF4F9B17")
        vectors = {
            pb.SM4_XTS_GB: "E9538251C71D7B80BBE4483FEF497BD12C5C581BD6242FC51E08964FB4F60FDB"
                           "0BA42F63499279213D318D2C11F6886E903BE7F93A1B3479",
            pb.SM4_XTS: "E9538251C71D7B80BBE4483FEF497BD1B3DB1A3E60408C575D63FF7DB39F8326"
                        "0869F9E2585FEC9F0B863BF8FD784B8627D16C0DB6D2CFC7",
        }
        for alg, ct_hex in vectors.items():
            ct = bytes.fromhex(ct_hex)
            what = pb.Algorithm.Name(alg)
            resp = self.stub.Encrypt(pb.EncryptRequest(algorithm=alg, key=inline(key),
                                                       plaintext=pt, nonce=iv))
            self.assertEqual(resp.ciphertext.hex().upper(), ct_hex, what)
            self.assertEqual((resp.nonce, resp.tag), (iv, b""), what)
            back = self.stub.Decrypt(pb.DecryptRequest(algorithm=alg, key=inline(key), nonce=iv,
                                                       ciphertext=ct))
            self.assertEqual(back.plaintext, pt, what)
            # The composed reference reproduces the example too.
            xts = ComposedXts(algorithms.SM4, key, gb=(alg == pb.SM4_XTS_GB))
            self.assertEqual(xts.encrypt(iv, pt), ct, what)

    def test_sm4_xts_both_variants_match_composed_xts_both_ways(self):
        sizes = [16, 17, 31, 32, 33, 100, 1000, 4096 + 5] + [RNG.randrange(16, 5000)
                                                            for _ in range(4)]
        for alg in (pb.SM4_XTS, pb.SM4_XTS_GB):
            for n in sizes:
                key, iv, pt = rand(32), rand(16), rand(n)
                xts = ComposedXts(algorithms.SM4, key, gb=(alg == pb.SM4_XTS_GB))
                what = f"{pb.Algorithm.Name(alg)} {n} B"
                resp = self.stub.Encrypt(pb.EncryptRequest(algorithm=alg, key=inline(key),
                                                           plaintext=pt, nonce=iv))
                self.assertEqual(len(resp.ciphertext), n, what)
                self.assertEqual(resp.ciphertext, xts.encrypt(iv, pt), what)
                back = self.stub.Decrypt(pb.DecryptRequest(
                    algorithm=alg, key=inline(key), nonce=iv, ciphertext=xts.encrypt(iv, pt)))
                self.assertEqual(back.plaintext, pt, what)
                # Round trip with a server-drawn IV.
                drawn = self.stub.Encrypt(pb.EncryptRequest(algorithm=alg, key=inline(key),
                                                            plaintext=pt))
                self.assertEqual(len(drawn.nonce), 16, what)
                self.assertEqual(xts.decrypt(drawn.nonce, drawn.ciphertext), pt, what)
                self.assertEqual(self.stub.Decrypt(pb.DecryptRequest(
                    algorithm=alg, key=inline(key), nonce=drawn.nonce,
                    ciphertext=drawn.ciphertext)).plaintext, pt, what)

    def test_sm4_xts_keyring_key(self):
        # sm4xts.pem: a 32-byte SM4 KEY block, K1 || K2 of SM4-XTS.
        key = read_pem_block(os.path.join(KEYS_DIR, "sm4xts.pem"))
        self.assertEqual(len(key), 32)
        for alg in (pb.SM4_XTS, pb.SM4_XTS_GB):
            what = pb.Algorithm.Name(alg)
            xts = ComposedXts(algorithms.SM4, key, gb=(alg == pb.SM4_XTS_GB))
            iv, pt = rand(16), rand(RNG.randrange(16, 2000))
            resp = self.stub.Encrypt(pb.EncryptRequest(algorithm=alg, key=key_id("sm4xts"),
                                                       plaintext=pt, nonce=iv))
            self.assertEqual(resp.ciphertext, xts.encrypt(iv, pt), what)
            back = self.stub.Decrypt(pb.DecryptRequest(algorithm=alg, key=key_id("sm4xts"),
                                                       nonce=iv, ciphertext=xts.encrypt(iv, pt)))
            self.assertEqual(back.plaintext, pt, what)
        # The 32-byte XTS key is of another family than the 16-byte SM4 modes' key.
        for alg in (pb.SM4_CFB, pb.SM4_CTR):
            err = self.assertRpcError(grpc.StatusCode.FAILED_PRECONDITION, self.stub.Encrypt,
                                      pb.EncryptRequest(algorithm=alg, key=key_id("sm4xts"),
                                                        plaintext=b"x", nonce=rand(16)))
            self.assertEqual(rpc_status.error_info(err).reason, "WRONG_KEY_FAMILY")

    def test_sm4_xts_rejects_streams_and_bad_inputs(self):
        key, iv = rand(32), rand(16)
        for alg in (pb.SM4_XTS, pb.SM4_XTS_GB):
            what = pb.Algorithm.Name(alg)
            params = pb.EncryptStreamParams(algorithm=alg, key=inline(key), nonce=iv)
            reqs = [pb.EncryptStreamRequest(params=params, plaintext=rand(64))]
            with self.assertRaises(grpc.RpcError, msg=what) as cm:
                list(self.stub.EncryptStream(iter(reqs)))
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, what)
            dparams = pb.DecryptStreamParams(algorithm=alg, key=inline(key), nonce=iv)
            dreqs = [pb.DecryptStreamRequest(params=dparams),
                     pb.DecryptStreamRequest(ciphertext=rand(64))]
            with self.assertRaises(grpc.RpcError, msg=what) as cm:
                list(self.stub.DecryptStream(iter(dreqs)))
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, what)
            k1 = rand(16)
            for bad in (pb.EncryptRequest(algorithm=alg, key=inline(key), plaintext=rand(15),
                                          nonce=iv),  # shorter than one block
                        pb.EncryptRequest(algorithm=alg, key=inline(key), plaintext=b"",
                                          nonce=iv),
                        pb.EncryptRequest(algorithm=alg, key=inline(rand(16)), plaintext=rand(32),
                                          nonce=iv),  # a 16-byte key
                        pb.EncryptRequest(algorithm=alg, key=inline(k1 + k1), plaintext=rand(32),
                                          nonce=iv),  # K1 = K2
                        pb.EncryptRequest(algorithm=alg, key=inline(key), plaintext=rand(32),
                                          nonce=rand(12))):
                self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.Encrypt, bad)
            self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.Decrypt,
                                pb.DecryptRequest(algorithm=alg, key=inline(key), nonce=iv,
                                                  ciphertext=rand(15)))
            # The keyring's 16-byte SM4 key is of another family than an XTS key.
            err = self.assertRpcError(grpc.StatusCode.FAILED_PRECONDITION, self.stub.Encrypt,
                                      pb.EncryptRequest(algorithm=alg, key=key_id("sm4"),
                                                        plaintext=rand(32), nonce=iv))
            self.assertEqual(rpc_status.error_info(err).reason, "WRONG_KEY_FAMILY", what)

    # ---- Signatures --------------------------------------------------------------------------

    def test_ecdsa_p256_smcryptd_signs_cryptography_verifies(self):
        sk = ec.generate_private_key(ec.SECP256R1())
        pk = sk.public_key()
        for n in (0, 1, 100, 5000):
            data = rand(n)
            sig = self.stub.Sign(pb.SignRequest(algorithm=pb.ECDSA_P256, key=inline(der(sk)),
                                                data=data)).signature
            self.assertTrue(ecdsa_verify(pk, sig, data), f"DER signature over {n} B")
            self.assertFalse(ecdsa_verify(pk, sig, data + b"x"))
            raw = self.stub.Sign(pb.SignRequest(
                algorithm=pb.ECDSA_P256, key=inline(der(sk)), data=data,
                options=pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW))).signature
            self.assertEqual(len(raw), 64)
            self.assertTrue(ecdsa_verify(pk, raw_to_der(raw), data), f"raw signature over {n} B")
        dgst = digest(hashes.SHA256(), rand(50))
        sig = self.stub.Sign(pb.SignRequest(algorithm=pb.ECDSA_P256, key=inline(der(sk)),
                                            data=dgst,
                                            options=pb.SignatureOptions(prehashed=True))).signature
        self.assertTrue(ecdsa_verify(pk, sig, dgst, prehashed=True))
        # Keyring key: the private key file is read by cryptography for the public half.
        with open(os.path.join(KEYS_DIR, "p256.pem"), "rb") as f:
            ring_pk = serialization.load_pem_private_key(f.read(), None).public_key()
        data = rand(64)
        sig = self.stub.Sign(pb.SignRequest(algorithm=pb.ECDSA_P256, key=key_id("p256"),
                                            data=data)).signature
        self.assertTrue(ecdsa_verify(ring_pk, sig, data))

    def test_ecdsa_p256_cryptography_signs_smcryptd_verifies(self):
        sk = ec.generate_private_key(ec.SECP256R1())
        spki = der(sk.public_key())
        point = sk.public_key().public_bytes(serialization.Encoding.X962,
                                             serialization.PublicFormat.UncompressedPoint)
        compressed = sk.public_key().public_bytes(serialization.Encoding.X962,
                                                  serialization.PublicFormat.CompressedPoint)
        for n in (0, 1, 100, 5000):
            data = rand(n)
            sig = sk.sign(data, ec.ECDSA(hashes.SHA256()))
            r, s = utils.decode_dss_signature(sig)
            raw = r.to_bytes(32, "big") + s.to_bytes(32, "big")
            for key in (spki, point, compressed):
                self.assertTrue(self.stub.Verify(pb.VerifyRequest(
                    algorithm=pb.ECDSA_P256, key=inline(key), data=data, signature=sig)).valid)
            self.assertTrue(self.stub.Verify(pb.VerifyRequest(
                algorithm=pb.ECDSA_P256, key=inline(spki), data=data, signature=raw,
                options=pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW))).valid)
            self.assertFalse(self.stub.Verify(pb.VerifyRequest(
                algorithm=pb.ECDSA_P256, key=inline(spki), data=data + b"!", signature=sig)).valid)
            other = der(ec.generate_private_key(ec.SECP256R1()).public_key())
            self.assertFalse(self.stub.Verify(pb.VerifyRequest(
                algorithm=pb.ECDSA_P256, key=inline(other), data=data, signature=sig)).valid)
        self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.Verify,
                            pb.VerifyRequest(algorithm=pb.ECDSA_P256, key=inline(spki),
                                             data=b"x", signature=b"\x30\x01"))

    def test_sign_and_verify_batch_with_cryptography(self):
        sk = ec.generate_private_key(ec.SECP256R1())
        msgs = [rand(RNG.randrange(0, 100)) for _ in range(16)]
        results = self.stub.SignBatch(pb.SignBatchRequest(items=[
            pb.SignRequest(algorithm=pb.ECDSA_P256, key=inline(der(sk)), data=m) for m in msgs]))
        for r, m in zip(results.results, msgs):
            self.assertEqual(r.status.code, 0, r.status.message)
            self.assertTrue(ecdsa_verify(sk.public_key(), r.signature, m))
        sigs = [sk.sign(m, ec.ECDSA(hashes.SHA256())) for m in msgs]
        flip = {3, 7, 11}
        items = [pb.VerifyRequest(algorithm=pb.ECDSA_P256, key=inline(der(sk.public_key())),
                                  data=(m + b"x" if i in flip else m), signature=s)
                 for i, (m, s) in enumerate(zip(msgs, sigs))]
        results = self.stub.VerifyBatch(pb.VerifyBatchRequest(items=items)).results
        self.assertEqual([r.status.code for r in results], [0] * 16)
        self.assertEqual([r.valid for r in results], [i not in flip for i in range(16)])

    def test_rsa_pss_and_oaep_with_cryptography(self):
        sk = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pk = sk.public_key()
        pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(),
                            label=None)
        data = rand(300)
        sig = self.stub.Sign(pb.SignRequest(algorithm=pb.RSA_2048_PSS, key=inline(der(sk)),
                                            data=data)).signature
        pk.verify(sig, data, pss, hashes.SHA256())  # raises InvalidSignature on failure
        mine = sk.sign(data, pss, hashes.SHA256())
        self.assertTrue(self.stub.Verify(pb.VerifyRequest(
            algorithm=pb.RSA_2048_PSS, key=inline(der(pk)), data=data, signature=mine)).valid)
        self.assertFalse(self.stub.Verify(pb.VerifyRequest(
            algorithm=pb.RSA_2048_PSS, key=inline(der(pk)), data=data[1:], signature=mine)).valid)
        for n in (0, 1, 190):
            pt = rand(n)
            ct = self.stub.PublicKeyEncrypt(pb.PublicKeyEncryptRequest(
                algorithm=pb.RSA_2048_OAEP, key=inline(der(pk)), plaintext=pt)).ciphertext
            self.assertEqual(len(ct), 256)
            self.assertEqual(sk.decrypt(ct, oaep), pt)
            back = self.stub.PublicKeyDecrypt(pb.PublicKeyDecryptRequest(
                algorithm=pb.RSA_2048_OAEP, key=inline(der(sk)),
                ciphertext=pk.encrypt(pt, oaep))).plaintext
            self.assertEqual(back, pt)

    # ---- Keys, randomness --------------------------------------------------------------------

    def test_generate_key_pair_and_get_public_key_load_in_cryptography(self):
        pair = self.stub.GenerateKeyPair(pb.GenerateKeyPairRequest(algorithm=pb.ECDSA_P256))
        sk = serialization.load_der_private_key(pair.private_key_der, None)
        pk = serialization.load_der_public_key(pair.public_key_der)
        self.assertIsInstance(sk, ec.EllipticCurvePrivateKey)
        self.assertEqual(der(sk.public_key()), pair.public_key_der)
        self.assertEqual(serialization.load_pem_public_key(pair.public_key_pem.encode()).public_numbers(),
                         pk.public_numbers())
        data = rand(40)
        self.assertTrue(ecdsa_verify(pk, sk.sign(data, ec.ECDSA(hashes.SHA256())), data))
        got = self.stub.GetPublicKey(pb.GetPublicKeyRequest(algorithm=pb.ECDSA_P256,
                                                            key=inline(pair.private_key_der)))
        self.assertEqual(got.public_key_der, pair.public_key_der)
        with open(os.path.join(KEYS_DIR, "p256.pem"), "rb") as f:
            ring = serialization.load_pem_private_key(f.read(), None)
        got = self.stub.GetPublicKey(pb.GetPublicKeyRequest(algorithm=pb.ECDSA_P256,
                                                            key=key_id("p256")))
        self.assertEqual(got.public_key_der, der(ring.public_key()))
        omitted = self.stub.GenerateKeyPair(pb.GenerateKeyPairRequest(algorithm=pb.ECDSA_P256,
                                                                      omit_private_key=True))
        self.assertEqual(omitted.private_key_der, b"")
        serialization.load_der_public_key(omitted.public_key_der)

    def test_list_keys_pages_the_keyring_without_secrets(self):
        ids, token, pages, wire = [], "", 0, b""
        keys = {}
        while True:
            resp = self.stub.ListKeys(pb.ListKeysRequest(page_size=2, page_token=token))
            pages += 1
            wire += resp.SerializeToString()
            for k in resp.keys:
                ids.append(k.key_id)
                keys[k.key_id] = k
            token = resp.next_page_token
            if not token:
                break
        self.assertEqual(ids, ["aes256", "dek", "hmac", "p256", "sm2", "sm4", "sm4xts"])
        self.assertEqual(pages, 4)
        self.assertGreater(resp.keyring_load_time_unix_micros, 0)
        with open(os.path.join(KEYS_DIR, "p256.pem"), "rb") as f:
            ring = serialization.load_pem_private_key(f.read(), None)
        p256 = keys["p256"]
        self.assertEqual(p256.key_family, "EC P-256")
        self.assertEqual(set(p256.algorithms), {pb.ECDSA_P256, pb.HPKE_P256_SHA256_AES128GCM})
        self.assertEqual((p256.primary_version, p256.min_version), (1, 1))
        self.assertEqual(len(p256.versions), 1)
        self.assertTrue(p256.versions[0].has_private_key)
        self.assertEqual(p256.versions[0].public_key_sha256,
                         digest(hashes.SHA256(), der(ring.public_key())))
        for name, family in (("sm4", "SM4"), ("sm4xts", "SM4-XTS"), ("hmac", "HMAC")):
            self.assertEqual(keys[name].key_family, family)
            self.assertEqual(keys[name].versions[0].public_key_sha256, b"")
            self.assertNotIn(read_pem_block(os.path.join(KEYS_DIR, name + ".pem")), wire)
        # A token not made by the server: INVALID_ARGUMENT naming the field.
        err = self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.ListKeys,
                                  pb.ListKeysRequest(page_token="not-a-token"))
        info = rpc_status.error_info(err)
        self.assertEqual((info.reason, dict(info.metadata)),
                         ("INVALID_ARGUMENT", {"field": "page_token"}))
        self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.ListKeys,
                            pb.ListKeysRequest(page_size=1001))
        # GetPublicKey of a keyring key needs no algorithm; a secret key has no public key.
        got = self.stub.GetPublicKey(pb.GetPublicKeyRequest(key=key_id("p256")))
        self.assertEqual(got.public_key_der, der(ring.public_key()))
        err = self.assertRpcError(grpc.StatusCode.FAILED_PRECONDITION, self.stub.GetPublicKey,
                                  pb.GetPublicKeyRequest(key=key_id("sm4")))
        self.assertEqual(rpc_status.error_info(err).reason, "WRONG_KEY_FAMILY")

    def test_generate_random(self):
        a = self.stub.GenerateRandom(pb.GenerateRandomRequest(length=64)).data
        b = self.stub.GenerateRandom(pb.GenerateRandomRequest(length=64)).data
        self.assertEqual((len(a), len(b)), (64, 64))
        self.assertNotEqual(a, b)
        self.assertEqual(len(self.stub.GenerateRandom(pb.GenerateRandomRequest(length=1 << 20)).data),
                         1 << 20)
        self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.GenerateRandom,
                            pb.GenerateRandomRequest(length=0))

    # ---- Hybrid encryption -------------------------------------------------------------------

    def test_hybrid_round_trips_in_both_suites(self):
        for alg, header in ((pb.HPKE_P256_SHA256_AES128GCM, "01001000010001"),
                            (pb.HPKE_SM2_SM3_SM4GCM, "01ff10ff01ff01")):
            pair = self.stub.GenerateKeyPair(pb.GenerateKeyPairRequest(algorithm=alg))
            for n in (0, 1, 1000):
                pt, info = rand(n), rand(RNG.randrange(0, 20))
                ct = self.stub.HybridEncrypt(pb.HybridEncryptRequest(
                    algorithm=alg, key=inline(pair.public_key_der), plaintext=pt, info=info)).ciphertext
                self.assertEqual(ct[:7].hex(), header)
                self.assertEqual(len(ct), 88 + n)
                self.assertEqual(ct[7], 0x04)
                back = self.stub.HybridDecrypt(pb.HybridDecryptRequest(
                    algorithm=alg, key=inline(pair.private_key_der), ciphertext=ct, info=info))
                self.assertEqual(back.plaintext, pt)
                bad = bytearray(ct)
                bad[RNG.randrange(72, len(ct))] ^= 1
                err = self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.stub.HybridDecrypt,
                                          pb.HybridDecryptRequest(algorithm=alg,
                                                                  key=inline(pair.private_key_der),
                                                                  ciphertext=bytes(bad), info=info))
                self.assertEqual(err.details(), "decryption failed")
            chunks = [rand(RNG.randrange(1, 3000)) for _ in range(3)]
            params = pb.HybridStreamParams(algorithm=alg, key=inline(pair.public_key_der),
                                           info=b"i", aad=b"a")
            reqs = [pb.HybridEncryptStreamRequest(params=params)]
            reqs += [pb.HybridEncryptStreamRequest(plaintext=c) for c in chunks]
            wire = b"".join(r.ciphertext for r in self.stub.HybridEncryptStream(iter(reqs)))
            self.assertEqual(len(wire), 72 + 21 * (len(chunks) + 1) + sum(map(len, chunks)))
            dparams = pb.HybridStreamParams(algorithm=alg, key=inline(pair.private_key_der),
                                            info=b"i", aad=b"a")
            dreqs = [pb.HybridDecryptStreamRequest(params=dparams)]
            dreqs += [pb.HybridDecryptStreamRequest(ciphertext=wire[i:i + 1000])
                      for i in range(0, len(wire), 1000)]
            pt = b"".join(r.plaintext for r in self.stub.HybridDecryptStream(iter(dreqs)))
            self.assertEqual(pt, b"".join(chunks))

    def test_hybrid_encrypt_batch(self):
        """HybridEncryptBatch: items of both suites to generated keys, each opened by the unary
        HybridDecrypt; an item with a key of the other family fails alone (FAILED_PRECONDITION)."""
        pairs = {alg: self.stub.GenerateKeyPair(pb.GenerateKeyPairRequest(algorithm=alg))
                 for alg in (pb.HPKE_P256_SHA256_AES128GCM, pb.HPKE_SM2_SM3_SM4GCM)}
        algs = list(pairs)
        items = []
        for i in range(20):
            alg = algs[i % 2]
            items.append(pb.HybridEncryptRequest(algorithm=alg, key=inline(pairs[alg].public_key_der),
                                                 plaintext=rand(RNG.randrange(0, 500)),
                                                 info=rand(RNG.randrange(0, 20))))
        items[7] = pb.HybridEncryptRequest(algorithm=pb.HPKE_P256_SHA256_AES128GCM,
                                           key=inline(pairs[pb.HPKE_SM2_SM3_SM4GCM].public_key_der),
                                           plaintext=b"wrong family")
        results = self.stub.HybridEncryptBatch(pb.HybridEncryptBatchRequest(items=items)).results
        self.assertEqual(len(results), len(items))
        for i, (item, r) in enumerate(zip(items, results)):
            if i == 7:
                self.assertEqual(r.status.code, grpc.StatusCode.FAILED_PRECONDITION.value[0])
                self.assertEqual(r.ciphertext, b"")
                continue
            self.assertEqual(r.status.code, 0, r.status.message)
            self.assertEqual(len(r.ciphertext), 88 + len(item.plaintext))
            back = self.stub.HybridDecrypt(pb.HybridDecryptRequest(
                algorithm=item.algorithm, key=inline(pairs[item.algorithm].private_key_der),
                ciphertext=r.ciphertext, info=item.info))
            self.assertEqual(back.plaintext, item.plaintext)


# ---- Minimal protobuf wire reader for the reflection messages ---------------------------------

def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _fields(buf):
    """{field number: [values]} of a message: varints as int, length-delimited as bytes."""
    out, i = {}, 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            val, i = _read_varint(buf, i)
        elif wire == 2:
            n, i = _read_varint(buf, i)
            val, i = buf[i:i + n], i + n
        else:
            raise ValueError(f"unexpected wire type {wire}")
        out.setdefault(num, []).append(val)
    return out


def _read_varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, i


if __name__ == "__main__":
    print(f"python {sys.version.split()[0]} ({sys.executable}), grpcio {grpc.__version__}, "
          f"cryptography {__import__('cryptography').__version__}, smcryptd {TARGET}, "
          f"seed {SEED} (SMCRYPT_TEST_SEED={SEED} repeats this run)", flush=True)
    unittest.main()
