#!/usr/bin/python3
"""make_corpus.py — writes the seed corpora of tests/fuzz/corpus/<target>/ (checked in).

Seeds are built from the standard test vectors in tests/testdata (GB/T 32905 and 32907
examples, GB/T 32918.5, RFC 8998, RFC 9180) and from valid key encodings, laid out as
each target reads its input (see the comment at the top of each *_fuzzer.cc). SM4-CBC
ciphertexts come from `openssl enc -sm4-cbc`; the RPC seeds are serialized request
messages, from stubs `protoc --python_out` generates from proto/. Deterministic: running
it again rewrites the same files.

Usage: tests/fuzz/make_corpus.py   (Debian's /usr/bin/python3 with python3-protobuf)
"""
import hashlib
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TESTDATA = ROOT / "tests" / "testdata"
CORPUS = HERE / "corpus"


def u16(n):
    return struct.pack(">H", n)


def field(b):
    return u16(len(b)) + b


def read_vectors(name):
    """key = value files; continuation lines (indented) are joined."""
    out, key = {}, None
    for line in (TESTDATA / name).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line[0].isspace() and key:
            out[key] += line.strip()
            continue
        sep = "=" if "=" in line else ":"
        key, value = (s.strip() for s in line.split(sep, 1))
        out.setdefault(key, value)
        if key in out and out[key] != value:
            key = None  # keep the first occurrence only
    return out


def hexb(s):
    return bytes.fromhex(s.replace(" ", ""))


def write(target, seeds):
    d = CORPUS / target
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    for i, seed in enumerate(seeds):
        name = f"seed-{i:02d}-{hashlib.sha1(seed).hexdigest()[:8]}"
        (d / name).write_bytes(seed)


def der_len(n):
    if n < 128:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


def der_int(b):
    b = b.lstrip(b"\0") or b"\0"
    if b[0] & 0x80:
        b = b"\0" + b
    return b"\x02" + der_len(len(b)) + b


def der_seq(*items):
    body = b"".join(items)
    return b"\x30" + der_len(len(body)) + body


def der_oct(b):
    return b"\x04" + der_len(len(b)) + b


def sm4_cbc(key, iv, data):
    return subprocess.run(
        ["openssl", "enc", "-sm4-cbc", "-K", key.hex(), "-iv", iv.hex()],
        input=data, capture_output=True, check=True).stdout


def pkcs8_seeds(pki):
    """Seeds of pkcs8_fuzzer: mode ‖ u16 password length ‖ password ‖ input."""
    def seed(mode, pw, body):
        return bytes([mode]) + u16(len(pw)) + pw + body
    oid = lambda enc: b"\x06" + der_len(len(enc)) + enc
    pbes2 = oid(hexb("2a864886f70d01050d"))
    pbkdf2 = oid(hexb("2a864886f70d01050c"))
    salt, iv, pw = bytes(range(16)), bytes(range(16, 32)), b"fuzz"
    pad = 16 - len(pki) % 16
    padded = pki + bytes([pad]) * pad
    # hmacWithSM3 (no parameters), keyLength 16, SM4-CBC: GmSSL 3's form.
    key = hashlib.pbkdf2_hmac("sm3", pw, salt, 1, 16)
    sm = der_seq(der_seq(pbes2, der_seq(
        der_seq(pbkdf2, der_seq(der_oct(salt), der_int(b"\x01"), der_int(b"\x10"),
                                der_seq(oid(hexb("2a811ccf5501831102"))))),
        der_seq(oid(hexb("2a811ccf55016802")), der_oct(iv)))),
        der_oct(sm4_cbc(key, iv, pki)))
    # hmacWithSHA256 (NULL), AES-256-CBC: OpenSSL's form.
    key = hashlib.pbkdf2_hmac("sha256", pw, salt, 1, 32)
    aes_ct = subprocess.run(
        ["openssl", "enc", "-aes-256-cbc", "-nopad", "-K", key.hex(), "-iv", iv.hex()],
        input=padded, capture_output=True, check=True).stdout
    aes = der_seq(der_seq(pbes2, der_seq(
        der_seq(pbkdf2, der_seq(der_oct(salt), der_int(b"\x01"),
                                der_seq(oid(hexb("2a864886f70d0209")), b"\x05\x00"))),
        der_seq(oid(hexb("60864801650304012a")), der_oct(iv)))),
        der_oct(aes_ct))
    gmssl = (TESTDATA / "pkcs8_gmssl_sm2keygen.pem").read_bytes()
    return [seed(0, pw, sm), seed(0, pw, aes), seed(0, b"1234", gmssl), seed(1, pw, pki)]


def main():
    # ---- SM3 (GB/T 32905-2016 Appendix A) ----
    abc = b"abc"
    abcd = b"abcd" * 16
    write("sm3_differential", [
        bytes([s]) + u16(a) + u16(b) + field(k) + m
        for s, (a, b, k, m) in enumerate([
            (1, 1, b"", abc), (10, 20, b"key", abcd), (63, 64, b"k" * 100, abcd * 5),
            (0, 0, b"\x0b" * 20, b""), (64, 1, b"Jefe", bytes(range(256)) * 2),
        ])
    ])

    # ---- SM4 modes (GB/T 32907-2016 Appendix A example 1) ----
    key = hexb("0123456789ABCDEFFEDCBA9876543210")
    iv = bytes(range(16))
    pt = key
    seeds = []
    for sel, mode, data in [(0, 0, pt), (1, 1, pt), (2, 2, pt * 3 + b"abc"), (3, 3, pt * 4),
                            (4, 4, pt * 9 + b"x"), (5, 2, sm4_cbc(key, iv, pt * 2 + b"tail")),
                            (6, 2, sm4_cbc(key, iv, b"")), (7, 0, b""), (0, 5, pt * 2 + b"cfb"),
                            (1, 6, pt + b"ofb"), (2, 7, pt * 3 + b"xts"), (3, 8, pt * 2),
                            (4, 7, b"short")]:
        seeds.append(bytes([sel, mode]) + key + iv + data)
    write("sm4_modes_differential", seeds)

    # ---- SM4-GCM / SM4-CCM (RFC 8998 Appendix A) ----
    seeds = []
    for sel, (name, ccm) in enumerate([("sm4_gcm_rfc8998.txt", 0), ("sm4_ccm_rfc8998.txt", 1)]):
        v = read_vectors(name)
        k, n, a, p = (hexb(v[x]) for x in ("key", "iv", "aad", "plaintext"))
        c = hexb(v["ciphertext"]) + hexb(v["tag"])
        seeds.append(bytes([sel, ccm, 16]) + u16(5) + k + field(n) + field(a) + p)
        seeds.append(bytes([sel + 2, ccm, 16]) + u16(77) + k + field(n) + field(a) + c)
        seeds.append(bytes([sel + 4, ccm, 12 if not ccm else 4]) + u16(0) + k + field(n[:7]) +
                     field(b"") + p[:17])
    write("sm4_aead_differential", seeds)

    # ---- SM2 (GB/T 32918.5-2017 examples) ----
    v = read_vectors("sm2_gbt32918_5_examples.txt")
    d, k = hexb(v["sign.d"]), hexb(v["sign.k"])
    uid, msg = v["sign.id"].strip('"').encode(), v["sign.message"].strip('"').encode()
    sig = der_seq(der_int(hexb(v["sign.r"])), der_int(hexb(v["sign.s"])))
    seeds = [bytes([s]) + d + k + u16(p) + bytes([x]) + field(uid) + field(msg) + sig
             for s, p, x in [(0, 0, 1), (1, 9, 0), (2, 300, 0x80)]]
    seeds.append(bytes([3]) + d + k + u16(17) + b"\x01" + field(b"") + field(b"") + sig[:-1])
    write("sm2_verify_differential", seeds)

    c1, c3, c2 = hexb(v["enc.C1"]), hexb(v["enc.C3"]), hexb(v["enc.C2"])
    der = der_seq(der_int(c1[1:33]), der_int(c1[33:]), der_oct(c3), der_oct(c2))
    write("sm2_decrypt", [
        b"\x00\x00" + c1 + c3 + c2,
        b"\x01\x01" + c1 + c2 + c3,
        b"\x02\x02" + der,
        b"\x00\x01" + c1[1:] + c3 + c2,  # unprefixed x1 ‖ y1
        b"\x02\x00" + der_seq(der_int(c1[1:33]), der_int(c1[33:]), der_oct(c3), der_oct(b"")),
        b"\x02\x02" + der + b"\x3d",  # trailing byte: OpenSSL decrypts it, smcrypt refuses
    ])

    # ---- SM2 key exchange: valid points (P_A and C1 of the examples) as the peer's R ----
    pa = b"\x04" + hexb(v["sign.xA"]) + hexb(v["sign.yA"])
    write("sm2_key_exchange", [
        b"\x00\x00" + u16(16) + field(pa) + field(b""),  # initiator, no confirmation
        b"\x00\x02" + u16(32) + field(c1) + field(bytes(32)),  # initiator, wrong S_B
        b"\x01\x01" + u16(1) + field(pa) + field(b""),  # responder, no confirmation
        b"\x01\x03" + u16(100) + field(c1) + field(b"") + bytes(32),  # responder, wrong S_A
        b"\x02\x00" + u16(16) + field(b"\x03" + hexb(v["sign.xA"])) + field(b""),  # compressed
        b"\x00\x00" + u16(16) + field(b"\x00") + field(b""),  # the point at infinity
    ])

    # ---- HPKE (RFC 9180 A.3.1 and the SM suite's vectors) ----
    seeds = []
    for suite, name, ids in [(1, "hpke_rfc9180_p256.txt", b"\x00\x10\x00\x01\x00\x01"),
                             (0, "hpke_sm2_sm3_sm4gcm.txt", b"\xff\x10\xff\x01\xff\x01")]:
        hv = read_vectors(name)
        info, enc, ct = hexb(hv["info"]), hexb(hv["enc"]), hexb(hv["ct"])
        wire = b"\x01" + ids + enc + ct
        seeds.append(bytes([suite, 0]) + u16(3) + field(info) + field(hexb(hv["pt"])) + wire)
        seeds.append(bytes([suite, 7]) + u16(600) + field(b"") + field(b"") + wire[:7] + enc)
    write("hpke_open", seeds)

    # ---- HPKE streams: header ‖ enc of the vectors, then chunk framing (flag ‖ length) ----
    seeds = []
    for suite, name, ids in [(1, "hpke_rfc9180_p256.txt", b"\x00\x10\x00\x01\x00\x01"),
                             (0, "hpke_sm2_sm3_sm4gcm.txt", b"\xff\x10\xff\x01\xff\x01")]:
        hv = read_vectors(name)
        info, enc, ct, pt = hexb(hv["info"]), hexb(hv["enc"]), hexb(hv["ct"]), hexb(hv["pt"])
        prefix = b"\x01" + ids + enc
        chunk = b"\x00" + struct.pack(">I", len(ct)) + ct
        final = b"\x01" + struct.pack(">I", 16) + ct[-16:]
        head = bytes([suite]) + u16(5) + field(info) + field(b"aad")
        seeds.append(head + field(pt) + field(bytes([7, 0, 20])) + prefix + chunk + final)
        seeds.append(head + field(b"") + field(b"") + prefix + final)
        seeds.append(head + field(pt * 3) + field(bytes([1, 72, 5])) + prefix[:40])
    write("hpke_stream", seeds)

    # ---- Segmented AEAD streams: the AES-128-GCM known-answer stream of
    # tests/crypto/stream/streaming_test.cc (key 00..0f, nonce 10..1b, aad "stream-aad") ----
    segments = [("38c61782d1af76", "697c45328c788d319a174f3ca02eeb4c"),
                ("a3ca7386ea7c504cfb38", "00069a9cd42c7360f6eeca04d59404d2"),
                ("65ea39888d", "d3894bc57073c8c26a003a734e8243fa")]
    wire = b"".join(field(hexb(c)) + bytes([16]) + hexb(t) for c, t in segments)
    empty = field(b"") + bytes([16]) + hexb("92e8512d4b32f4239568204e3a186091")
    seeds = [b"\x00" + u16(0) + field(b"hello, segmented world") + field(bytes([7, 10])) + wire,
             b"\x00" + u16(9) + field(b"") + field(b"") + empty,
             b"\x01" + u16(2) + field(b"x" * 300) + field(bytes([0, 1, 16, 17, 255])) + wire,
             b"\x06" + u16(7) + field(b"abc") + field(b"") + wire[:30]]
    write("aead_stream", seeds)

    # ---- Keys: every encoding in tests/testdata, raw points and scalars ----
    seeds = []
    for i, f in enumerate(sorted(TESTDATA.glob("*.der")) + sorted(TESTDATA.glob("*.pem"))):
        if f.name == "sm2_encoding_cipher.der":
            continue
        seeds.append(bytes([i]) + f.read_bytes())
    pub = hexb("04" + v["sign.xA"] + v["sign.yA"])
    ybit = pub[-1] & 1
    seeds += [b"\x00" + pub, b"\x01" + bytes([2 + ybit]) + pub[1:33], b"\x00" + d,
              b"\x07" + pub, b"\x08" + d]
    write("keys", seeds)

    # ---- Encrypted PKCS#8: the key GmSSL 3 wrote, PBES2 with one iteration ----
    write("pkcs8", pkcs8_seeds((TESTDATA / "sm2_encoding_key.der").read_bytes()))

    # ---- RPC requests ----
    write("rpc", rpc_seeds(d, pub, hexb("0123456789ABCDEFFEDCBA9876543210"), sig, c1 + c3 + c2))


def rpc_seeds(d, pub, sm4_key, sig, sm2_ct):
    tmp = tempfile.mkdtemp()
    try:
        subprocess.run(["protoc", "-I", str(ROOT / "proto"), f"--python_out={tmp}",
                        "smcrypt/v1/crypto.proto"], check=True)
        sys.path.insert(0, tmp)
        from smcrypt.v1 import crypto_pb2 as pb
    finally:
        pass
    A = pb.Algorithm
    seeds = []

    def add(rpc, msg):
        seeds.append(bytes([rpc]) + msg.SerializeToString())

    def stream(rpc, msgs):
        seeds.append(bytes([rpc]) + b"".join(field(m.SerializeToString()) for m in msgs))

    add(0, pb.HashRequest(algorithm=A.Value("SM3"), data=b"abc"))
    add(1, pb.HashBatchRequest(items=[pb.HashRequest(algorithm=A.Value("SM3"), data=b"a"),
                                      pb.HashRequest(algorithm=A.Value("SHA_256"), data=b"b")]))
    add(2, pb.HmacRequest(algorithm=A.Value("HMAC_SM3"), key=pb.KeyRef(key_id="hmac"), data=b"m"))
    add(3, pb.SignRequest(algorithm=A.Value("SM2"), key=pb.KeyRef(key_id="sm2"), data=b"m"))
    add(3, pb.SignRequest(algorithm=A.Value("SM2"), key=pb.KeyRef(inline_key=d),
                          data=b"message digest"))
    add(4, pb.VerifyRequest(algorithm=A.Value("SM2"), key=pb.KeyRef(inline_key=pub),
                            data=b"message digest", signature=sig))
    add(5, pb.SignBatchRequest(items=[pb.SignRequest(algorithm=A.Value("ECDSA_P256"),
                                                     key=pb.KeyRef(key_id="p256"), data=b"x")]))
    add(6, pb.VerifyBatchRequest(items=[pb.VerifyRequest(
        algorithm=A.Value("SM2"), key=pb.KeyRef(key_id="sm2pub"), data=b"x", signature=sig)]))
    add(7, pb.EncryptRequest(algorithm=A.Value("SM4_GCM"), key=pb.KeyRef(key_id="sm4"),
                             plaintext=b"hello", aad=b"a"))
    add(7, pb.EncryptRequest(algorithm=A.Value("SM4_CBC"), key=pb.KeyRef(inline_key=sm4_key),
                             plaintext=b"hello"))
    add(8, pb.DecryptRequest(algorithm=A.Value("SM4_CCM"), key=pb.KeyRef(key_id="sm4"),
                             nonce=b"\0" * 12, ciphertext=b"abc", tag=b"\0" * 16))
    add(8, pb.DecryptRequest(algorithm=A.Value("SM4_CBC"), key=pb.KeyRef(inline_key=sm4_key),
                             nonce=b"\0" * 16, ciphertext=b"\1" * 32))
    add(9, pb.EncryptBatchRequest(items=[pb.EncryptRequest(
        algorithm=A.Value("SM4_CTR"), key=pb.KeyRef(key_id="sm4"), plaintext=b"p")]))
    add(10, pb.PublicKeyEncryptRequest(algorithm=A.Value("SM2"), key=pb.KeyRef(key_id="sm2pub"),
                                       plaintext=b"p"))
    add(11, pb.PublicKeyDecryptRequest(algorithm=A.Value("SM2"), key=pb.KeyRef(inline_key=d),
                                       ciphertext=sm2_ct))
    add(12, pb.HybridEncryptRequest(algorithm=A.Value("HPKE_SM2_SM3_SM4GCM"),
                                    key=pb.KeyRef(key_id="sm2"), plaintext=b"p", info=b"i"))
    add(13, pb.HybridDecryptRequest(algorithm=A.Value("HPKE_P256_SHA256_AES128GCM"),
                                    key=pb.KeyRef(key_id="p256"),
                                    ciphertext=b"\x01\x00\x10\x00\x01\x00\x01" + pub + b"x" * 20))
    add(14, pb.GenerateKeyPairRequest(algorithm=A.Value("SM2")))
    add(15, pb.GetPublicKeyRequest(algorithm=A.Value("SM2"), key=pb.KeyRef(key_id="sm2")))
    add(16, pb.GenerateRandomRequest(length=32))
    add(17, pb.GetServerInfoRequest())
    stream(18, [pb.HashStreamRequest(algorithm=A.Value("SM3"), data=b"ab"),
                pb.HashStreamRequest(data=b"c")])
    stream(19, [pb.EncryptStreamRequest(params=pb.EncryptStreamParams(
        algorithm=A.Value("SM4_GCM"), key=pb.KeyRef(key_id="sm4")), plaintext=b"abc"),
        pb.EncryptStreamRequest(plaintext=b"def")])
    stream(20, [pb.DecryptStreamRequest(params=pb.DecryptStreamParams(
        algorithm=A.Value("SM4_CBC"), key=pb.KeyRef(key_id="sm4"), nonce=b"\0" * 16),
        ciphertext=b"\2" * 16), pb.DecryptStreamRequest(ciphertext=b"\3" * 16)])
    stream(21, [pb.HybridEncryptStreamRequest(params=pb.HybridStreamParams(
        algorithm=A.Value("HPKE_SM2_SM3_SM4GCM"), key=pb.KeyRef(key_id="sm2pub")),
        plaintext=b"abc")])
    stream(22, [pb.HybridDecryptStreamRequest(params=pb.HybridStreamParams(
        algorithm=A.Value("HPKE_SM2_SM3_SM4GCM"), key=pb.KeyRef(key_id="sm2")),
        ciphertext=b"\x01\xff\x10\xff\x01\xff\x01" + pub + b"\0\0\0\0\x05hello")])
    add(23, pb.HybridEncryptBatchRequest(items=[
        pb.HybridEncryptRequest(algorithm=A.Value("HPKE_SM2_SM3_SM4GCM"),
                                key=pb.KeyRef(key_id="sm2pub"), plaintext=b"p", info=b"i"),
        pb.HybridEncryptRequest(algorithm=A.Value("HPKE_SM2_SM3_SM4GCM"),
                                key=pb.KeyRef(inline_key=pub), plaintext=b"q"),
        pb.HybridEncryptRequest(algorithm=A.Value("HPKE_P256_SHA256_AES128GCM"),
                                key=pb.KeyRef(key_id="p256"), plaintext=b"r"),
        pb.HybridEncryptRequest(algorithm=A.Value("HPKE_P256_SHA256_AES128GCM"),
                                key=pb.KeyRef(key_id="sm4"), plaintext=b"s")]))
    kex = dict(algorithm=A.Value("SM2"), key=pb.KeyRef(key_id="sm2"),
               peer_key=pb.KeyRef(key_id="sm2pub"), key_length=16)
    stream(24, [pb.KeyExchangeRequest(params=pb.KeyExchangeParams(
        role=pb.KEY_EXCHANGE_ROLE_INITIATOR, confirmation=True, **kex)),
        pb.KeyExchangeRequest(peer_ephemeral_point=pub, peer_confirmation=b"\0" * 32)])
    stream(24, [pb.KeyExchangeRequest(params=pb.KeyExchangeParams(
        role=pb.KEY_EXCHANGE_ROLE_RESPONDER, confirmation=True, **kex),
        peer_ephemeral_point=pub), pb.KeyExchangeRequest(peer_confirmation=b"\1" * 32)])
    stream(24, [pb.KeyExchangeRequest(params=pb.KeyExchangeParams(
        role=pb.KEY_EXCHANGE_ROLE_RESPONDER, user_id=b"alice", peer_user_id=b"", **kex),
        peer_ephemeral_point=pub)])
    add(25, pb.RewrapRequest(algorithm=A.Value("SM4_GCM"), key=pb.KeyRef(key_id="sm4"),
                             nonce=b"\0" * 12, ciphertext=b"abc", tag=b"\0" * 16, aad=b"a"))
    add(25, pb.RewrapRequest(algorithm=A.Value("SM2"), key=pb.KeyRef(key_id="sm2"),
                             ciphertext=sm2_ct))
    add(26, pb.RewrapBatchRequest(items=[
        pb.RewrapRequest(algorithm=A.Value("SM4_CBC"), key=pb.KeyRef(key_id="sm4", key_version=1),
                         nonce=b"\0" * 16, ciphertext=b"\1" * 32),
        pb.RewrapRequest(algorithm=A.Value("HPKE_SM2_SM3_SM4GCM"), key=pb.KeyRef(key_id="sm2"),
                         ciphertext=b"\x01\xff\x10\xff\x01\xff\x01" + pub + b"x" * 20,
                         info=b"i")]))
    add(27, pb.GenerateDataKeyRequest(key_spec=pb.DATA_KEY_SPEC_AES_256,
                                      algorithm=A.Value("AES_256_GCM"),
                                      key=pb.KeyRef(key_id="aes"), aad=b"ctx"))
    add(27, pb.GenerateDataKeyRequest(key_spec=pb.DATA_KEY_SPEC_SM4_128, algorithm=A.Value("SM2"),
                                      key=pb.KeyRef(inline_key=pub)))
    add(28, pb.GenerateDataKeyRequest(key_spec=pb.DATA_KEY_SPEC_AES_128,
                                      algorithm=A.Value("HPKE_SM2_SM3_SM4GCM"),
                                      key=pb.KeyRef(key_id="sm2pub"), info=b"i"))
    shutil.rmtree(tmp)
    return seeds


if __name__ == "__main__":
    main()
