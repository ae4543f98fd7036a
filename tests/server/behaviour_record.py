#!/usr/bin/python3
"""behaviour_record.py — a deterministic record of how smcryptd answers tricky requests.

Starts a given smcryptd twice on free loopback ports, each with a fresh keyring, sends a fixed
list of tricky requests to every CryptoService RPC and writes one text line per request: its
label, the gRPC status code name, the message, the google.rpc.ErrorInfo of the status details
(reason, domain, sorted metadata); for batches one line per item with the same, for streams
one line per response before the final status. A successful call prints only what is
deterministic (a digest, a ciphertext under a given nonce,
a `valid` flag, key versions, lengths of randomised outputs). Under each request follow the
audit lines (--audit_log) the server wrote for it, with the time and the peer's port masked.

The two servers:
  [open]        plaintext, --inline_private_keys=allow, no access policy
  [restricted]  mTLS (a test CA, clients "alice" with SAN DNS:alice.test and "bob" with CN
                bob only), --inline_private_keys=deny and an --access_policy that gives alice
                most keys, bob a few operations on a few keys, and nobody the key "denied"

Two runs against the same binary give byte-identical files, so the file of a binary built
before a change of the service layer, diffed with the file of the binary built after it, shows
every answer that changed. Record, then compare:

  /usr/bin/python3 tests/server/behaviour_record.py --smcryptd OLD/build/server/smcryptd \\
      --out /tmp/behaviour-before.txt
  /usr/bin/python3 tests/server/behaviour_record.py --smcryptd NEW/build/server/smcryptd \\
      --out /tmp/behaviour-after.txt
  diff -u /tmp/behaviour-before.txt /tmp/behaviour-after.txt && echo "behaviour unchanged"

The binaries must be of one smcrypt version's proto; this checkout's proto/ makes the Python
stubs (protoc and grpc_python_plugin, as tests/interop/run_python_client.sh does) and
tests/testdata the fixed keys. Needs Debian's /usr/bin/python3 with python3-grpcio and
python3-protobuf, protobuf-compiler, protobuf-compiler-grpc and the openssl command (test
certificates and the keys that are not fixed). --keep leaves the working folder (keyring,
policy, certificates, server logs) for a look.
"""

import argparse
import base64
import hashlib
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TESTDATA = os.path.join(REPO, "tests", "testdata")
CALL_TIMEOUT = 30  # seconds; no request here should come near it

# ---- set-up: stubs, keyring, certificates, servers -------------------------------------------


def generate_stubs(work):
    gen = os.path.join(work, "gen")
    os.makedirs(gen)
    plugin = shutil.which("grpc_python_plugin")
    if shutil.which("protoc") is None or plugin is None:
        sys.exit("behaviour_record: needs protoc and grpc_python_plugin "
                 "(apt-get install protobuf-compiler protobuf-compiler-grpc)")
    subprocess.run(["protoc", "-I", os.path.join(REPO, "proto"), "--python_out=" + gen,
                    "--grpc_python_out=" + gen, "--plugin=protoc-gen-grpc_python=" + plugin,
                    "smcrypt/v1/crypto.proto"], check=True)
    sys.dont_write_bytecode = True  # no __pycache__ in the checkout
    sys.path.insert(0, gen)
    sys.path.insert(0, os.path.join(REPO, "tests", "interop", "python"))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data, mode=0o600):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def pem_block(label, data):
    return b"-----BEGIN %s-----\n%s\n-----END %s-----\n" % (
        label.encode(), base64.b64encode(data), label.encode())


def openssl(*args, cwd=None):
    subprocess.run(["openssl", *args], check=True, cwd=cwd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# Fixed symmetric keys (their ciphertexts under given nonces are in the record).
SM4_KEY = bytes(range(16))
AES128_KEY = bytes(range(16, 32))
AES256_KEY = bytes(range(32, 64))
HMAC_KEY = b"behaviour-record hmac key 32 byt"
XTS_KEY = bytes(range(64, 96))
VER_KEYS = {1: b"\x11" * 16, 2: b"\x22" * 16, 3: b"\x33" * 16}


def make_keyring(keys):
    """The keyring both servers load. Asymmetric keys are tests/testdata's, except those that
    must differ from them (sm2b, ver-sm2.v2, rsa2048), drawn with openssl."""
    os.makedirs(keys, mode=0o700)
    write(os.path.join(keys, "sm2.pem"), read(os.path.join(TESTDATA, "sm2_encoding_key.pem")))
    write(os.path.join(keys, "sm2pub.pem"), read(os.path.join(TESTDATA, "sm2_encoding_pub.pem")))
    write(os.path.join(keys, "p256.pem"),
          read(os.path.join(TESTDATA, "sm2_encoding_p256_key.pem")))
    write(os.path.join(keys, "rsa3072.pem"),
          read(os.path.join(TESTDATA, "openssl_rsa3072_pkcs8.pem")))
    write(os.path.join(keys, "locked.pem"), read(os.path.join(TESTDATA, "sm2_encoding_key.pem")))
    openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
            "-out", os.path.join(keys, "rsa2048.pem"))
    openssl("genpkey", "-algorithm", "SM2", "-out", os.path.join(keys, "sm2b.pem"))
    write(os.path.join(keys, "ver-sm2.v1.pem"),
          read(os.path.join(TESTDATA, "sm2_encoding_key.pem")))
    openssl("genpkey", "-algorithm", "SM2", "-out", os.path.join(keys, "ver-sm2.v2.pem"))
    write(os.path.join(keys, "sm4.pem"), pem_block("SM4 KEY", SM4_KEY))
    write(os.path.join(keys, "sm4xts.pem"), pem_block("SM4 KEY", XTS_KEY))
    write(os.path.join(keys, "aes128.pem"), pem_block("AES KEY", AES128_KEY))
    write(os.path.join(keys, "aes256.pem"), pem_block("AES KEY", AES256_KEY))
    write(os.path.join(keys, "hmac.pem"), pem_block("HMAC KEY", HMAC_KEY))
    write(os.path.join(keys, "denied.pem"), pem_block("SM4 KEY", b"\x44" * 16))
    for v, k in VER_KEYS.items():
        write(os.path.join(keys, "ver.v%d.pem" % v), pem_block("SM4 KEY", k))
    write(os.path.join(keys, "ver.min_version"), b"2\n", mode=0o644)
    for f in os.listdir(keys):
        if f.endswith(".pem"):
            os.chmod(os.path.join(keys, f), 0o600)


POLICY = b"""# behaviour_record.py's policy: alice most keys and inline keys, bob a few operations on
# a few keys, everyone hash/info/random/keygen; no rule names the key "denied".
allow * sm2,sm2b,sm2pub,p256,rsa2048,rsa3072,sm4,sm4xts,aes*,hmac,ver,ver-sm2,locked,@inline san:alice.test
allow verify,public_key,encrypt  locked,sm2pub  cn:bob
allow encrypt,decrypt,mac        sm4,hmac       cn:bob
allow hash,info,random,keygen    *              *
"""


def make_certificates(d):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-days", "2", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=behaviour-ca",
            cwd=d)

    def mk(name, subj, ext):
        write(os.path.join(d, name + ".ext"), ext.encode())
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", name + ".key", "-out", name + ".csr", "-subj", subj, cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-days", "2", "-out", name + ".pem", "-extfile", name + ".ext",
                cwd=d)
        os.chmod(os.path.join(d, name + ".key"), 0o600)

    mk("server", "/CN=localhost", "subjectAltName=DNS:localhost\n")
    mk("alice", "/CN=alice/O=behaviour", "subjectAltName=DNS:alice.test\n"
       "extendedKeyUsage=clientAuth\n")
    mk("bob", "/CN=bob", "extendedKeyUsage=clientAuth\n")


class Smcryptd:
    """One smcryptd process on 127.0.0.1:0; its port is read from its log."""

    def __init__(self, binary, work, name, flags):
        self.log_path = os.path.join(work, name + ".log")
        self.audit_path = os.path.join(work, name + "-audit.jsonl")
        write(self.audit_path, b"")
        args = [binary, "--listen=127.0.0.1:0", "--metrics_listen=", "--reload_interval=0",
                "--audit_log=" + self.audit_path, *flags]
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        self.audit_offset = 0
        deadline = time.time() + 60
        self.port = None
        while self.port is None:
            m = re.search(rb"listening on 127\.0\.0\.1:(\d+)", read(self.log_path))
            if m:
                self.port = int(m.group(1))
            elif self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                sys.exit("behaviour_record: smcryptd did not start; its log:\n" +
                         read(self.log_path).decode(errors="replace"))
            else:
                time.sleep(0.05)
        self.target = "127.0.0.1:%d" % self.port

    def new_audit_lines(self):
        data = read(self.audit_path)
        new = data[self.audit_offset:]
        end = new.rfind(b"\n") + 1  # whole lines only
        self.audit_offset += end
        return new[:end].decode("utf-8", errors="replace").splitlines()

    def stop(self):
        if self.log.closed:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def mask_audit(line):
    line = re.sub(r'"time":"[^"]*"', '"time":"<time>"', line)
    return re.sub(r'("peer":"[a-z0-9]+:.*?):\d+"', r'\1:<port>"', line)


# ---- formatting --------------------------------------------------------------------------------


def h(data):
    """A short fingerprint of deterministic output bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def q(s):
    return '"' + s.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


def fmt_error_info(ei):
    md = ",".join("%s=%s" % (k, q(ei.metadata[k])) for k in sorted(ei.metadata))
    return "ErrorInfo{reason=%s domain=%s metadata={%s}}" % (ei.reason, ei.domain, md)


def fmt_details(details):
    """The details of a google.rpc.Status (ErrorInfo in full, other types by their url)."""
    import rpc_status
    parts = []
    for d in details:
        if d.type_url == rpc_status.ERROR_INFO_TYPE_URL:
            parts.append(fmt_error_info(rpc_status.ErrorInfo.FromString(d.value)))
        else:
            parts.append("detail{%s}" % d.type_url)
    return " ".join(parts) if parts else "no-details"


def fmt_rpc_error(e):
    import rpc_status
    out = "%s %s" % (e.code().name, q(e.details() or ""))
    bins = [v for k, v in (e.trailing_metadata() or ()) if k == "grpc-status-details-bin"]
    if not bins:
        return out + " no-details"
    st = rpc_status.Status.FromString(bins[0])
    out += " " + fmt_details(st.details)
    if st.code != e.code().value[0] or st.message != (e.details() or ""):
        out += " (status-details-bin says %d %s)" % (st.code, q(st.message))
    return out


def code_name(num):
    import grpc
    for c in grpc.StatusCode:
        if c.value[0] == num:
            return c.name
    return "CODE_%d" % num


def fmt_item_status(st):
    if st.code == 0 and not st.message and not st.details:
        return "OK"
    return "%s %s %s" % (code_name(st.code), q(st.message), fmt_details(st.details))


def fields(msg, hashed=(), lengths=()):
    """Set fields of a response: `hashed` ones by fingerprint, `lengths` by length, numbers and
    flags by value, other bytes, strings and messages as <set>."""
    out = []
    for fd, value in msg.ListFields():
        n = fd.name
        if n in hashed:
            out.append("%s=%s" % (n, h(value)))
        elif n in lengths:
            out.append("%s=len%d" % (n, len(value)))
        elif n == "status":
            continue  # a batch item's, printed before its fields
        elif (fd.type in (fd.TYPE_BYTES, fd.TYPE_MESSAGE, fd.TYPE_STRING) or
              fd.label == fd.LABEL_REPEATED):
            out.append("%s=<set>" % n)
        else:
            out.append("%s=%s" % (n, value))
    return " ".join(out) if out else "(empty)"


# ---- calls -------------------------------------------------------------------------------------


class Result:
    def __init__(self, text, items=(), value=None):
        self.text, self.items, self.value = text, list(items), value


def unary(method, req, show=lambda r: "", items=None):
    import grpc
    try:
        resp, _ = method.with_call(req, timeout=CALL_TIMEOUT)
    except grpc.RpcError as e:
        return Result(fmt_rpc_error(e))
    text = ("OK " + show(resp)).rstrip()
    lines = []
    if items is not None:
        for i, r in enumerate(resp.results):
            lines.append("item %d: %s" % (i, (fmt_item_status(r.status) + " " +
                                              (items(r) if r.status.code == 0 else "")).rstrip()))
        text += " results=%d" % len(resp.results)
    return Result(text, lines, resp)


def client_stream(method, reqs, show=lambda r: ""):
    import grpc
    try:
        resp, _ = method.with_call(iter(reqs), timeout=CALL_TIMEOUT)
    except grpc.RpcError as e:
        return Result(fmt_rpc_error(e))
    return Result(("OK " + show(resp)).rstrip(), value=resp)


def bidi(method, reqs, show=lambda r: ""):
    """All of `reqs`, then half-close; the responses (by `show`) and the final status."""
    import grpc
    resps = []
    try:
        for r in method(iter(reqs), timeout=CALL_TIMEOUT):
            resps.append(r)
        status = "OK"
    except grpc.RpcError as e:
        status = fmt_rpc_error(e)
    lines = ["response %d: %s" % (i, show(r)) for i, r in enumerate(resps)]
    return Result("%s responses=%d" % (status, len(resps)), lines, resps)


class Conversation:
    """A bidirectional stream driven one message at a time (KeyExchange relaying)."""
    _END = object()

    def __init__(self, method):
        self.q = queue.Queue()
        self.call = method(iter(self.q.get, self._END), timeout=CALL_TIMEOUT)

    def send(self, req):
        self.q.put(req)

    def recv(self):
        return next(self.call)

    def close(self):
        self.q.put(self._END)


# ---- the requests ------------------------------------------------------------------------------


class Recorder:
    def __init__(self, out, server, phase):
        self.out, self.server, self.phase = out, server, phase
        self.count = {}

    def record(self, label, fn):
        rpc = label.split("/")[0]
        self.count[rpc] = self.count.get(rpc, 0) + 1
        import grpc
        try:
            res = fn()
        except grpc.RpcError as e:  # a call of a multi-step case (KeyExchange) failed
            res = Result(fmt_rpc_error(e))
        except Exception as e:  # a request the record could not even make
            res = Result("CLIENT-ERROR %s: %s" % (type(e).__name__, e))
        self.out.append("[%s] %s: %s" % (self.phase, label, res.text))
        self.out.extend("    " + l for l in res.items)
        for line in self.server.new_audit_lines():
            self.out.append("    audit " + mask_audit(line))
        return res.value


def spki_point(pem):
    """The uncompressed point at the end of an EC SubjectPublicKeyInfo."""
    body = b"".join(l for l in pem.splitlines() if not l.startswith(b"-----"))
    return base64.b64decode(body)[-65:]


def open_cases(rec, pb, stub):
    """The plaintext server: inline private keys allowed, no policy."""
    A = pb
    K = lambda key_id, version=0: pb.KeyRef(key_id=key_id, key_version=version)
    I = lambda data: pb.KeyRef(inline_key=data)
    sm2_priv = read(os.path.join(TESTDATA, "sm2_encoding_key.pem"))
    sm2_pub = read(os.path.join(TESTDATA, "sm2_encoding_pub.pem"))
    sm2_pub_c = read(os.path.join(TESTDATA, "sm2_encoding_pub_compressed.pem"))
    p256_priv = read(os.path.join(TESTDATA, "sm2_encoding_p256_key.pem"))
    sm2_point = spki_point(sm2_pub)
    off_curve = b"\x04" + b"\x00" * 31 + b"\x01" + b"\x00" * 31 + b"\x02"
    digest = lambda r: "digest=" + h(r.digest)
    r = rec.record
    big = b"\xab" * ((4 << 20) + 1)

    # Hash, HashStream, HashBatch
    r("Hash/sm3", lambda: unary(stub.Hash, pb.HashRequest(algorithm=A.SM3, data=b"abc"), digest))
    r("Hash/sha256-empty", lambda: unary(stub.Hash, pb.HashRequest(algorithm=A.SHA_256), digest))
    r("Hash/algorithm-unspecified", lambda: unary(stub.Hash, pb.HashRequest(data=b"abc")))
    r("Hash/algorithm-unknown-99", lambda: unary(stub.Hash, pb.HashRequest(algorithm=99)))
    r("Hash/algorithm-sm4-gcm", lambda: unary(stub.Hash, pb.HashRequest(algorithm=A.SM4_GCM)))
    r("Hash/oversize-message", lambda: unary(stub.Hash, pb.HashRequest(algorithm=A.SM3, data=big)))
    hs = lambda resp: "digest=%s total_bytes=%d" % (h(resp.digest), resp.total_bytes)
    r("HashStream/sm3-two-chunks", lambda: client_stream(stub.HashStream, [
        pb.HashStreamRequest(algorithm=A.SM3, data=b"ab"), pb.HashStreamRequest(data=b"c")], hs))
    r("HashStream/no-message", lambda: client_stream(stub.HashStream, []))
    r("HashStream/algorithm-in-second-message", lambda: client_stream(stub.HashStream, [
        pb.HashStreamRequest(data=b"ab"), pb.HashStreamRequest(algorithm=A.SM3, data=b"c")]))
    r("HashStream/algorithm-changed", lambda: client_stream(stub.HashStream, [
        pb.HashStreamRequest(algorithm=A.SM3, data=b"ab"),
        pb.HashStreamRequest(algorithm=A.SHA_256, data=b"c")]))
    r("HashStream/algorithm-repeated", lambda: client_stream(stub.HashStream, [
        pb.HashStreamRequest(algorithm=A.SHA_256, data=b"ab"),
        pb.HashStreamRequest(algorithm=A.SHA_256, data=b"c")], hs))
    r("HashStream/hmac-algorithm", lambda: client_stream(stub.HashStream, [
        pb.HashStreamRequest(algorithm=A.HMAC_SM3, data=b"ab")]))
    r("HashStream/oversize-message", lambda: client_stream(stub.HashStream, [
        pb.HashStreamRequest(algorithm=A.SM3, data=b"ab"), pb.HashStreamRequest(data=big)]))
    r("HashBatch/mixed", lambda: unary(stub.HashBatch, pb.HashBatchRequest(items=[
        pb.HashRequest(algorithm=A.SM3, data=b"abc"), pb.HashRequest(data=b"abc"),
        pb.HashRequest(algorithm=A.SHA_256, data=b"abc"), pb.HashRequest(algorithm=A.AES_128_GCM),
        pb.HashRequest(algorithm=99)]), items=digest))
    r("HashBatch/no-items", lambda: unary(stub.HashBatch, pb.HashBatchRequest(), items=digest))
    r("HashBatch/65537-items", lambda: unary(stub.HashBatch, pb.HashBatchRequest(
        items=[pb.HashRequest()] * 65537), items=digest))

    # Hmac
    mac = rec.record("Hmac/keyring-hmac-sm3", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.HMAC_SM3, key=K("hmac"), data=b"message"), lambda x: "mac=" + h(x.mac)))
    mac = mac.mac if mac is not None else b"\x00" * 32
    hv = lambda x: "mac=%s valid=%s" % (h(x.mac) if x.mac else "(empty)", x.valid)
    r("Hmac/inline-empty-key", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.HMAC_SHA_256, key=I(b""), data=b"message"), hv))
    r("Hmac/verify-truncated-16", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.HMAC_SM3, key=K("hmac"), data=b"message", expected_mac=mac[:16]), hv))
    r("Hmac/verify-wrong-mac", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.HMAC_SM3, key=K("hmac"), data=b"message", expected_mac=bytes(32)), hv))
    r("Hmac/expected-mac-15-bytes", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.HMAC_SM3, key=K("hmac"), data=b"message", expected_mac=mac[:15])))
    r("Hmac/sm4-key", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.HMAC_SM3, key=K("sm4"), data=b"m")))
    r("Hmac/algorithm-sm3", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.SM3, key=K("hmac"), data=b"m")))
    r("Hmac/no-key", lambda: unary(stub.Hmac, pb.HmacRequest(algorithm=A.HMAC_SM3, data=b"m")))
    r("Hmac/unknown-key_id", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.HMAC_SM3, key=K("nosuchkey"), data=b"m")))
    r("Hmac/key_id-ending-in-version", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.HMAC_SM3, key=K("hmac.v2"), data=b"m")))
    r("Hmac/key_id-bad-characters", lambda: unary(stub.Hmac, pb.HmacRequest(
        algorithm=A.HMAC_SM3, key=K("../hmac"), data=b"m")))

    # Sign, Verify, SignBatch, VerifyBatch
    sv = sig_fields
    sig = rec.record("Sign/sm2-keyring", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("sm2"), data=b"message"), lambda x: "signature=<set>"))
    sig = sig.signature if sig is not None else b""
    r("Sign/sm2-raw-encoding", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("sm2"), data=b"message",
        options=pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW)), sv))
    r("Sign/ecdsa-with-sm2-key", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.ECDSA_P256, key=K("sm2"), data=b"m")))
    r("Sign/sm2-with-p256-key", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("p256"), data=b"m")))
    r("Sign/public-key-entry", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("sm2pub"), data=b"m")))
    r("Sign/inline-public-key", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=I(sm2_pub), data=b"m")))
    r("Sign/inline-private-pem", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=I(sm2_priv), data=b"m",
        options=pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW)), sv))
    r("Sign/inline-garbage", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=I(b"not a key"), data=b"m")))
    r("Sign/inline-zero-scalar", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.ECDSA_P256, key=I(bytes(32)), data=b"m")))
    r("Sign/user_id-with-ecdsa", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.ECDSA_P256, key=K("p256"), data=b"m",
        options=pb.SignatureOptions(user_id=b"alice"))))
    r("Sign/prehashed-31-bytes", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("sm2"), data=bytes(31), options=pb.SignatureOptions(prehashed=True))))
    r("Sign/prehashed-with-user_id", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("sm2"), data=bytes(32),
        options=pb.SignatureOptions(prehashed=True, user_id=b"x"))))
    r("Sign/rsa-pss-raw-encoding", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.RSA_2048_PSS, key=K("rsa2048"), data=b"m",
        options=pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW))))
    r("Sign/rsa-2048-pss-with-3072-key", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.RSA_2048_PSS, key=K("rsa3072"), data=b"m")))
    r("Sign/rsa-3072-pss", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.RSA_3072_PSS, key=K("rsa3072"), data=b"m"), sv))
    r("Sign/versioned-newest", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("ver-sm2"), data=b"m",
        options=pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW)), sv))
    r("Sign/versioned-v1", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("ver-sm2", 1), data=b"m",
        options=pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW)), sv))
    r("Sign/versioned-v3-unknown", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("ver-sm2", 3), data=b"m")))
    r("Sign/plain-key-version-2", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=K("sm2", 2), data=b"m")))
    r("Sign/key_version-with-inline", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM2, key=pb.KeyRef(inline_key=sm2_priv, key_version=1), data=b"m")))
    r("Sign/algorithm-unspecified", lambda: unary(stub.Sign, pb.SignRequest(
        key=K("sm2"), data=b"m")))
    r("Sign/algorithm-sm3", lambda: unary(stub.Sign, pb.SignRequest(
        algorithm=A.SM3, key=K("sm2"), data=b"m")))
    vv = lambda x: "valid=%s" % x.valid
    r("Verify/sm2-valid", lambda: unary(stub.Verify, pb.VerifyRequest(
        algorithm=A.SM2, key=K("sm2pub"), data=b"message", signature=sig), vv))
    r("Verify/sm2-other-data", lambda: unary(stub.Verify, pb.VerifyRequest(
        algorithm=A.SM2, key=K("sm2"), data=b"messagE", signature=sig), vv))
    r("Verify/compressed-inline-point", lambda: unary(stub.Verify, pb.VerifyRequest(
        algorithm=A.SM2, key=I(sm2_pub_c), data=b"message", signature=sig), vv))
    r("Verify/bad-der", lambda: unary(stub.Verify, pb.VerifyRequest(
        algorithm=A.SM2, key=K("sm2pub"), data=b"message", signature=b"\x30\x03\x02\x01")))
    r("Verify/raw-63-bytes", lambda: unary(stub.Verify, pb.VerifyRequest(
        algorithm=A.SM2, key=K("sm2pub"), data=b"m", signature=bytes(63),
        options=pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW))))
    r("Verify/raw-zero-r-s", lambda: unary(stub.Verify, pb.VerifyRequest(
        algorithm=A.SM2, key=K("sm2pub"), data=b"m", signature=bytes(64),
        options=pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW)), vv))
    r("Verify/inline-off-curve-point", lambda: unary(stub.Verify, pb.VerifyRequest(
        algorithm=A.SM2, key=I(off_curve), data=b"m", signature=sig)))
    r("Verify/sm4-key", lambda: unary(stub.Verify, pb.VerifyRequest(
        algorithm=A.SM2, key=K("sm4"), data=b"m", signature=sig)))
    raw = pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW)
    r("SignBatch/mixed", lambda: unary(stub.SignBatch, pb.SignBatchRequest(items=[
        pb.SignRequest(algorithm=A.SM2, key=K("sm2"), data=b"a", options=raw),
        pb.SignRequest(algorithm=A.SM2, key=K("nosuchkey"), data=b"b"),
        pb.SignRequest(algorithm=A.SM2, key=K("sm4"), data=b"c"),
        pb.SignRequest(algorithm=A.ECDSA_P256, key=I(p256_priv), data=b"d", options=raw),
        pb.SignRequest(key=K("sm2"), data=b"e"),
        pb.SignRequest(algorithm=A.SM2, key=K("ver-sm2", 1), data=b"f", options=raw),
        pb.SignRequest(algorithm=A.SM2, key=K("ver-sm2", 9), data=b"g"),
        pb.SignRequest(algorithm=A.SM2, key=I(sm2_pub), data=b"h"),
        pb.SignRequest(algorithm=A.SM2, key=K("sm2"), data=bytes(31),
                       options=pb.SignatureOptions(prehashed=True))]), items=sv))
    r("SignBatch/no-items", lambda: unary(stub.SignBatch, pb.SignBatchRequest(), items=sv))
    r("VerifyBatch/mixed", lambda: unary(stub.VerifyBatch, pb.VerifyBatchRequest(items=[
        pb.VerifyRequest(algorithm=A.SM2, key=K("sm2pub"), data=b"message", signature=sig),
        pb.VerifyRequest(algorithm=A.SM2, key=K("sm2pub"), data=b"other", signature=sig),
        pb.VerifyRequest(algorithm=A.SM2, key=K("sm2pub"), data=b"m", signature=b"\x30"),
        pb.VerifyRequest(algorithm=A.SM2, key=K("nosuchkey"), data=b"m", signature=sig),
        pb.VerifyRequest(algorithm=A.ECDSA_P256, key=K("sm2pub"), data=b"m", signature=sig),
        pb.VerifyRequest(algorithm=A.SM2, key=I(b"\x04junk"), data=b"m", signature=sig),
        pb.VerifyRequest(algorithm=A.RSA_2048_OAEP, key=K("rsa2048"), data=b"m", signature=sig),
    ]), items=vv))

    # Encrypt, Decrypt, EncryptBatch
    ev = lambda x: fields(x, hashed=("ciphertext", "tag"), lengths=())
    iv = bytes(range(100, 116))
    n12 = bytes(range(200, 212))

    def enc(label, **kw):
        return rec.record("Encrypt/" + label, lambda: unary(stub.Encrypt, pb.EncryptRequest(**kw), ev))

    enc("sm4-cbc-given-iv", algorithm=A.SM4_CBC, key=K("sm4"), plaintext=b"sixteen byte msg!", nonce=iv)
    gcm = enc("sm4-gcm-given-nonce", algorithm=A.SM4_GCM, key=K("sm4"), plaintext=b"gcm plaintext",
              nonce=n12, aad=b"aad")
    r("Encrypt/sm4-ctr-drawn-nonce", lambda: unary(stub.Encrypt, pb.EncryptRequest(
        algorithm=A.SM4_CTR, key=K("sm4"), plaintext=b"abc"),
        lambda x: fields(x, lengths=("nonce", "ciphertext"))))
    enc("aes256-gcm-tag-12", algorithm=A.AES_256_GCM, key=K("aes256"), plaintext=b"x", nonce=n12,
        tag_length=12)
    enc("sm4-ecb-with-nonce", algorithm=A.SM4_ECB, key=K("sm4"), plaintext=b"x", nonce=iv)
    enc("sm4-cbc-iv-15", algorithm=A.SM4_CBC, key=K("sm4"), plaintext=b"x", nonce=iv[:15])
    enc("sm4-gcm-empty-nonce", algorithm=A.SM4_GCM, key=K("sm4"), plaintext=b"x", nonce=b"")
    enc("sm4-ccm-nonce-6", algorithm=A.SM4_CCM, key=K("sm4"), plaintext=b"x", nonce=n12[:6])
    enc("sm4-ccm-tag-5", algorithm=A.SM4_CCM, key=K("sm4"), plaintext=b"x", tag_length=5)
    enc("sm4-gcm-tag-11", algorithm=A.SM4_GCM, key=K("sm4"), plaintext=b"x", tag_length=11)
    enc("sm4-ctr-with-aad", algorithm=A.SM4_CTR, key=K("sm4"), plaintext=b"x", aad=b"a")
    enc("sm4-ctr-with-tag-length", algorithm=A.SM4_CTR, key=K("sm4"), plaintext=b"x", tag_length=16)
    enc("sm4-ctr-with-padding", algorithm=A.SM4_CTR, key=K("sm4"), plaintext=b"x",
        padding=pb.PADDING_PKCS7)
    enc("sm4-cbc-no-padding-unaligned", algorithm=A.SM4_CBC, key=K("sm4"), plaintext=b"x" * 17,
        nonce=iv, padding=pb.PADDING_NONE)
    enc("aes256-with-aes128-key", algorithm=A.AES_256_CBC, key=K("aes128"), plaintext=b"x", nonce=iv)
    enc("aes128-with-sm4-key", algorithm=A.AES_128_CBC, key=K("sm4"), plaintext=b"x", nonce=iv)
    enc("sm4-with-sm2-key", algorithm=A.SM4_CBC, key=K("sm2"), plaintext=b"x", nonce=iv)
    enc("inline-sm4-15-bytes", algorithm=A.SM4_CBC, key=I(bytes(15)), plaintext=b"x", nonce=iv)
    enc("sm4-xts-16-byte-key", algorithm=A.SM4_XTS, key=K("sm4"), plaintext=b"x" * 32, nonce=iv)
    enc("sm4-xts-15-bytes-data", algorithm=A.SM4_XTS, key=K("sm4xts"), plaintext=b"x" * 15, nonce=iv)
    enc("sm4-xts-equal-halves", algorithm=A.SM4_XTS_GB, key=I(bytes(32)), plaintext=b"x" * 32,
        nonce=iv)
    enc("sm4-xts", algorithm=A.SM4_XTS, key=K("sm4xts"), plaintext=b"x" * 33, nonce=iv)
    ver3 = enc("versioned-newest", algorithm=A.SM4_CTR, key=K("ver"), plaintext=b"v", nonce=iv)
    enc("versioned-v2", algorithm=A.SM4_CTR, key=K("ver", 2), plaintext=b"v", nonce=iv)
    enc("versioned-v1-retired", algorithm=A.SM4_CTR, key=K("ver", 1), plaintext=b"v", nonce=iv)
    enc("versioned-v4-unknown", algorithm=A.SM4_CTR, key=K("ver", 4), plaintext=b"v", nonce=iv)
    enc("hpke-algorithm", algorithm=A.HPKE_SM2_SM3_SM4GCM, key=K("sm4"), plaintext=b"v")
    enc("no-key", algorithm=A.SM4_CTR, plaintext=b"v", nonce=iv)
    enc("empty-keyref", algorithm=A.SM4_CTR, key=pb.KeyRef(), plaintext=b"v", nonce=iv)
    dv = lambda x: "plaintext=" + h(x.plaintext)
    ct, tag = (gcm.ciphertext, gcm.tag) if gcm is not None else (b"", b"")

    def dec(label, **kw):
        return rec.record("Decrypt/" + label, lambda: unary(stub.Decrypt, pb.DecryptRequest(**kw), dv))

    gcm_args = dict(algorithm=A.SM4_GCM, key=K("sm4"), nonce=n12, aad=b"aad")
    dec("sm4-gcm", ciphertext=ct, tag=tag, **gcm_args)
    dec("sm4-gcm-ciphertext-tampered", ciphertext=bytes([ct[0] ^ 1]) + ct[1:] if ct else b"",
        tag=tag, **gcm_args)
    dec("sm4-gcm-other-aad", ciphertext=ct, tag=tag,
        **dict(gcm_args, aad=b"AAD"))
    dec("sm4-gcm-no-tag", ciphertext=ct, **gcm_args)
    dec("sm4-gcm-tag-3-bytes", ciphertext=ct, tag=tag[:3], **gcm_args)
    dec("sm4-gcm-nonce-other", ciphertext=ct, tag=tag, **dict(gcm_args, nonce=iv))
    dec("sm4-cbc-bad-padding", algorithm=A.SM4_CBC, key=K("sm4"), nonce=iv, ciphertext=bytes(16))
    dec("sm4-cbc-17-bytes", algorithm=A.SM4_CBC, key=K("sm4"), nonce=iv, ciphertext=bytes(17))
    dec("sm4-cbc-with-tag", algorithm=A.SM4_CBC, key=K("sm4"), nonce=iv, ciphertext=bytes(16),
        tag=bytes(16))
    v3ct = ver3.ciphertext if ver3 is not None else b""
    dec("versioned-v3", algorithm=A.SM4_CTR, key=K("ver", 3), nonce=iv, ciphertext=v3ct)
    dec("versioned-v1-retired", algorithm=A.SM4_CTR, key=K("ver", 1), nonce=iv, ciphertext=v3ct)
    dec("unknown-key", algorithm=A.SM4_CTR, key=K("nosuchkey"), nonce=iv, ciphertext=v3ct)
    r("EncryptBatch/mixed", lambda: unary(stub.EncryptBatch, pb.EncryptBatchRequest(items=[
        pb.EncryptRequest(algorithm=A.SM4_CTR, key=K("sm4"), plaintext=b"a", nonce=iv),
        pb.EncryptRequest(algorithm=A.SM4_CTR, key=K("nosuchkey"), plaintext=b"b", nonce=iv),
        pb.EncryptRequest(algorithm=A.SM4_CBC, key=K("sm4"), plaintext=b"c", nonce=iv[:8]),
        pb.EncryptRequest(key=K("sm4"), plaintext=b"d"),
        pb.EncryptRequest(algorithm=A.SM4_CTR, key=K("ver", 1), plaintext=b"e", nonce=iv),
        pb.EncryptRequest(algorithm=A.SM4_CTR, key=K("ver"), plaintext=b"f", nonce=iv),
        pb.EncryptRequest(algorithm=A.SM4_CTR, key=I(bytes(15)), plaintext=b"g", nonce=iv),
        pb.EncryptRequest(algorithm=A.AES_128_GCM, key=K("sm4"), plaintext=b"h", nonce=n12),
        pb.EncryptRequest(algorithm=A.AES_128_GCM, key=I(AES128_KEY), plaintext=b"i", nonce=n12)]),
        items=ev))

    # EncryptStream, DecryptStream
    esv = lambda x: fields(x, hashed=("ciphertext", "tag", "nonce"))
    ES = lambda **kw: pb.EncryptStreamRequest(**kw)
    EP = pb.EncryptStreamParams
    r("EncryptStream/ctr-two-chunks", lambda: bidi(stub.EncryptStream, [
        ES(params=EP(algorithm=A.SM4_CTR, key=K("sm4"), nonce=iv), plaintext=b"a" * 20),
        ES(plaintext=b"b" * 20)], esv))
    gs = rec.record("EncryptStream/gcm-two-segments", lambda: bidi(stub.EncryptStream, [
        ES(params=EP(algorithm=A.SM4_GCM, key=K("sm4"), nonce=n12, aad=b"aad"), plaintext=b"one"),
        ES(plaintext=b"two"), ES(plaintext=b"three")], esv))
    r("EncryptStream/no-message", lambda: bidi(stub.EncryptStream, [], esv))
    r("EncryptStream/no-params-first", lambda: bidi(stub.EncryptStream, [
        ES(plaintext=b"a"), ES(params=EP(algorithm=A.SM4_CTR, key=K("sm4")))], esv))
    r("EncryptStream/params-again", lambda: bidi(stub.EncryptStream, [
        ES(params=EP(algorithm=A.SM4_CTR, key=K("sm4"), nonce=iv), plaintext=b"a" * 16),
        ES(params=EP(algorithm=A.SM4_CBC, key=K("sm4"), nonce=iv), plaintext=b"b")], esv))
    r("EncryptStream/gcm-nonce-16", lambda: bidi(stub.EncryptStream, [
        ES(params=EP(algorithm=A.SM4_GCM, key=K("sm4"), nonce=iv), plaintext=b"a")], esv))
    r("EncryptStream/xts", lambda: bidi(stub.EncryptStream, [
        ES(params=EP(algorithm=A.SM4_XTS, key=K("sm4xts"), nonce=iv), plaintext=b"a" * 32)], esv))
    r("EncryptStream/unknown-key", lambda: bidi(stub.EncryptStream, [
        ES(params=EP(algorithm=A.SM4_CTR, key=K("nosuchkey")), plaintext=b"a")], esv))
    r("EncryptStream/algorithm-unspecified", lambda: bidi(stub.EncryptStream, [
        ES(params=EP(key=K("sm4")), plaintext=b"a")], esv))
    r("EncryptStream/oversize-message", lambda: bidi(stub.EncryptStream, [
        ES(params=EP(algorithm=A.SM4_CTR, key=K("sm4"), nonce=iv)), ES(plaintext=big)], esv))
    DS = lambda **kw: pb.DecryptStreamRequest(**kw)
    DP = pb.DecryptStreamParams
    dsv = lambda x: fields(x, hashed=("plaintext",))
    segs = [(x.ciphertext, x.tag) for x in (gs or []) if x.tag]
    gp = DP(algorithm=A.SM4_GCM, key=K("sm4"), nonce=n12, aad=b"aad")
    r("DecryptStream/gcm", lambda: bidi(stub.DecryptStream, [DS(params=gp)] + [
        DS(ciphertext=c, tag=t) for c, t in segs], dsv))
    r("DecryptStream/gcm-segments-swapped", lambda: bidi(stub.DecryptStream, [DS(params=gp)] + [
        DS(ciphertext=c, tag=t) for c, t in [segs[1], segs[0]] + segs[2:]], dsv))
    r("DecryptStream/gcm-last-segment-dropped", lambda: bidi(stub.DecryptStream, [DS(params=gp)] + [
        DS(ciphertext=c, tag=t) for c, t in segs[:-1]], dsv))
    r("DecryptStream/gcm-tag-lengths-differ", lambda: bidi(stub.DecryptStream, [DS(params=gp)] + [
        DS(ciphertext=segs[0][0], tag=segs[0][1]), DS(ciphertext=segs[1][0], tag=segs[1][1][:12])],
        dsv))
    r("DecryptStream/no-nonce", lambda: bidi(stub.DecryptStream, [
        DS(params=DP(algorithm=A.SM4_CTR, key=K("sm4")), ciphertext=b"abc")], dsv))
    r("DecryptStream/cbc-bad-padding", lambda: bidi(stub.DecryptStream, [
        DS(params=DP(algorithm=A.SM4_CBC, key=K("sm4"), nonce=iv)), DS(ciphertext=bytes(20)),
        DS(ciphertext=bytes(12))], dsv))
    r("DecryptStream/params-in-second-message", lambda: bidi(stub.DecryptStream, [
        DS(ciphertext=b"abc"), DS(params=DP(algorithm=A.SM4_CTR, key=K("sm4"), nonce=iv))], dsv))
    r("DecryptStream/no-message", lambda: bidi(stub.DecryptStream, [], dsv))

    # PublicKeyEncrypt, PublicKeyDecrypt
    pke = rec.record("PublicKeyEncrypt/sm2", lambda: unary(stub.PublicKeyEncrypt, pb.PublicKeyEncryptRequest(
        algorithm=A.SM2, key=K("sm2"), plaintext=b"secret"), lambda x: fields(x, lengths=("ciphertext",))))
    pke_ct = pke.ciphertext if pke is not None else b"\x04"
    r("PublicKeyEncrypt/rsa-oaep-191-bytes", lambda: unary(stub.PublicKeyEncrypt,
      pb.PublicKeyEncryptRequest(algorithm=A.RSA_2048_OAEP, key=K("rsa2048"), plaintext=bytes(191))))
    r("PublicKeyEncrypt/sm2-format-with-rsa", lambda: unary(stub.PublicKeyEncrypt,
      pb.PublicKeyEncryptRequest(algorithm=A.RSA_2048_OAEP, key=K("rsa2048"), plaintext=b"x",
                                 sm2_format=pb.SM2_CIPHERTEXT_FORMAT_DER)))
    r("PublicKeyEncrypt/rsa-3072-key-for-2048", lambda: unary(stub.PublicKeyEncrypt,
      pb.PublicKeyEncryptRequest(algorithm=A.RSA_2048_OAEP, key=K("rsa3072"), plaintext=b"x")))
    r("PublicKeyEncrypt/unknown-algorithm-unknown-key", lambda: unary(stub.PublicKeyEncrypt,
      pb.PublicKeyEncryptRequest(algorithm=77, key=K("nosuchkey"), plaintext=b"x")))
    r("PublicKeyEncrypt/sm4-key", lambda: unary(stub.PublicKeyEncrypt,
      pb.PublicKeyEncryptRequest(algorithm=A.SM2, key=K("sm4"), plaintext=b"x")))
    r("PublicKeyEncrypt/inline-off-curve", lambda: unary(stub.PublicKeyEncrypt,
      pb.PublicKeyEncryptRequest(algorithm=A.SM2, key=I(off_curve), plaintext=b"x")))
    pkd = lambda **kw: pb.PublicKeyDecryptRequest(**kw)
    r("PublicKeyDecrypt/sm2", lambda: unary(stub.PublicKeyDecrypt, pkd(
        algorithm=A.SM2, key=K("sm2"), ciphertext=pke_ct), dv))
    r("PublicKeyDecrypt/sm2-tampered", lambda: unary(stub.PublicKeyDecrypt, pkd(
        algorithm=A.SM2, key=K("sm2"), ciphertext=pke_ct[:-1] + bytes([pke_ct[-1] ^ 1])), dv))
    r("PublicKeyDecrypt/sm2-c1c2c3-for-c1c3c2", lambda: unary(stub.PublicKeyDecrypt, pkd(
        algorithm=A.SM2, key=K("sm2"), ciphertext=pke_ct,
        sm2_format=pb.SM2_CIPHERTEXT_FORMAT_C1C2C3), dv))
    r("PublicKeyDecrypt/sm2-der-format-garbage", lambda: unary(stub.PublicKeyDecrypt, pkd(
        algorithm=A.SM2, key=K("sm2"), ciphertext=pke_ct, sm2_format=pb.SM2_CIPHERTEXT_FORMAT_DER), dv))
    r("PublicKeyDecrypt/public-key-entry", lambda: unary(stub.PublicKeyDecrypt, pkd(
        algorithm=A.SM2, key=K("sm2pub"), ciphertext=pke_ct), dv))
    r("PublicKeyDecrypt/short-ciphertext", lambda: unary(stub.PublicKeyDecrypt, pkd(
        algorithm=A.SM2, key=K("sm2"), ciphertext=bytes(10)), dv))
    r("PublicKeyDecrypt/rsa-garbage", lambda: unary(stub.PublicKeyDecrypt, pkd(
        algorithm=A.RSA_2048_OAEP, key=K("rsa2048"), ciphertext=bytes(256)), dv))
    r("PublicKeyDecrypt/inline-private", lambda: unary(stub.PublicKeyDecrypt, pkd(
        algorithm=A.SM2, key=I(sm2_priv), ciphertext=pke_ct), dv))

    # HybridEncrypt, HybridEncryptBatch, HybridDecrypt and their streams
    SUITE = A.HPKE_SM2_SM3_SM4GCM
    hlen = lambda x: fields(x, lengths=("ciphertext",))
    he = rec.record("HybridEncrypt/sm2-suite", lambda: unary(stub.HybridEncrypt, pb.HybridEncryptRequest(
        algorithm=SUITE, key=K("sm2"), plaintext=b"hybrid", info=b"info"), hlen))
    he_ct = he.ciphertext if he is not None else bytes(100)
    hp = rec.record("HybridEncrypt/p256-suite-inline", lambda: unary(stub.HybridEncrypt, pb.HybridEncryptRequest(
        algorithm=A.HPKE_P256_SHA256_AES128GCM, key=I(read(os.path.join(TESTDATA, "sm2_encoding_p256_pub.pem"))),
        plaintext=b"hybrid"), hlen))
    hp_ct = hp.ciphertext if hp is not None else bytes(100)
    r("HybridEncrypt/p256-suite-sm2-key", lambda: unary(stub.HybridEncrypt, pb.HybridEncryptRequest(
        algorithm=A.HPKE_P256_SHA256_AES128GCM, key=K("sm2"), plaintext=b"x")))
    r("HybridEncrypt/algorithm-sm2", lambda: unary(stub.HybridEncrypt, pb.HybridEncryptRequest(
        algorithm=A.SM2, key=K("sm2"), plaintext=b"x")))
    r("HybridEncrypt/versioned-v1", lambda: unary(stub.HybridEncrypt, pb.HybridEncryptRequest(
        algorithm=SUITE, key=K("ver-sm2", 1), plaintext=b"x"), hlen))
    r("HybridEncryptBatch/mixed", lambda: unary(stub.HybridEncryptBatch, pb.HybridEncryptBatchRequest(items=[
        pb.HybridEncryptRequest(algorithm=SUITE, key=K("sm2"), plaintext=b"a"),
        pb.HybridEncryptRequest(algorithm=SUITE, key=K("nosuchkey"), plaintext=b"b"),
        pb.HybridEncryptRequest(algorithm=SUITE, key=K("p256"), plaintext=b"c"),
        pb.HybridEncryptRequest(key=K("sm2"), plaintext=b"d"),
        pb.HybridEncryptRequest(algorithm=SUITE, key=I(sm2_point), plaintext=b"e"),
        pb.HybridEncryptRequest(algorithm=SUITE, key=I(off_curve), plaintext=b"f"),
        pb.HybridEncryptRequest(algorithm=SUITE, key=K("ver-sm2", 2), plaintext=b"g")]),
        items=hlen))
    hd = lambda **kw: pb.HybridDecryptRequest(**kw)
    r("HybridDecrypt/sm2-suite", lambda: unary(stub.HybridDecrypt, hd(
        algorithm=SUITE, key=K("sm2"), ciphertext=he_ct, info=b"info"), dv))
    r("HybridDecrypt/tampered", lambda: unary(stub.HybridDecrypt, hd(
        algorithm=SUITE, key=K("sm2"), ciphertext=he_ct[:-1] + bytes([he_ct[-1] ^ 1]), info=b"info"), dv))
    r("HybridDecrypt/other-info", lambda: unary(stub.HybridDecrypt, hd(
        algorithm=SUITE, key=K("sm2"), ciphertext=he_ct, info=b"INFO"), dv))
    r("HybridDecrypt/short-input", lambda: unary(stub.HybridDecrypt, hd(
        algorithm=SUITE, key=K("sm2"), ciphertext=he_ct[:50]), dv))
    r("HybridDecrypt/other-suite-header", lambda: unary(stub.HybridDecrypt, hd(
        algorithm=SUITE, key=K("sm2"), ciphertext=hp_ct), dv))
    r("HybridDecrypt/version-byte-2", lambda: unary(stub.HybridDecrypt, hd(
        algorithm=SUITE, key=K("sm2"), ciphertext=b"\x02" + he_ct[1:]), dv))
    r("HybridDecrypt/inline-p256-private", lambda: unary(stub.HybridDecrypt, hd(
        algorithm=A.HPKE_P256_SHA256_AES128GCM, key=I(p256_priv), ciphertext=hp_ct), dv))
    r("HybridDecrypt/public-key-entry", lambda: unary(stub.HybridDecrypt, hd(
        algorithm=SUITE, key=K("sm2pub"), ciphertext=he_ct, info=b"info"), dv))
    HES = pb.HybridEncryptStreamRequest
    HP = pb.HybridStreamParams
    hsv = lambda x: fields(x, lengths=("ciphertext",))
    hstream = rec.record("HybridEncryptStream/two-chunks", lambda: bidi(stub.HybridEncryptStream, [
        HES(params=HP(algorithm=SUITE, key=K("sm2"), info=b"i", aad=b"a"), plaintext=b"one"),
        HES(plaintext=b"two")], hsv))
    r("HybridEncryptStream/chunk-over-1MiB", lambda: bidi(stub.HybridEncryptStream, [
        HES(params=HP(algorithm=SUITE, key=K("sm2"))), HES(plaintext=bytes((1 << 20) + 1))], hsv))
    r("HybridEncryptStream/no-message", lambda: bidi(stub.HybridEncryptStream, [], hsv))
    r("HybridEncryptStream/params-in-second-message", lambda: bidi(stub.HybridEncryptStream, [
        HES(plaintext=b"one"), HES(params=HP(algorithm=SUITE, key=K("sm2")))], hsv))
    r("HybridEncryptStream/params-again", lambda: bidi(stub.HybridEncryptStream, [
        HES(params=HP(algorithm=SUITE, key=K("sm2")), plaintext=b"one"),
        HES(params=HP(algorithm=SUITE, key=K("sm2b")), plaintext=b"two")], hsv))
    HDS = pb.HybridDecryptStreamRequest
    hct = b"".join(x.ciphertext for x in (hstream or []))
    hdp = HP(algorithm=SUITE, key=K("sm2"), info=b"i", aad=b"a")
    r("HybridDecryptStream/split-anywhere", lambda: bidi(stub.HybridDecryptStream, [
        HDS(params=hdp, ciphertext=hct[:10]), HDS(ciphertext=hct[10:90]), HDS(ciphertext=hct[90:])],
        dsv))
    r("HybridDecryptStream/final-chunk-missing", lambda: bidi(stub.HybridDecryptStream, [
        HDS(params=hdp, ciphertext=hct[:-21])], dsv))
    r("HybridDecryptStream/other-aad", lambda: bidi(stub.HybridDecryptStream, [
        HDS(params=HP(algorithm=SUITE, key=K("sm2"), info=b"i", aad=b"b"), ciphertext=hct)], dsv))
    r("HybridDecryptStream/no-params-first", lambda: bidi(stub.HybridDecryptStream, [
        HDS(ciphertext=hct), HDS(params=hdp)], dsv))

    # KeyExchange
    kx(rec, pb, stub, K, I, sm2_priv, sm2_point, off_curve)

    # GenerateKeyPair, GetPublicKey, GenerateRandom, GetServerInfo
    kp = lambda x: fields(x)
    r("GenerateKeyPair/sm2", lambda: unary(stub.GenerateKeyPair, pb.GenerateKeyPairRequest(
        algorithm=A.SM2), kp))
    r("GenerateKeyPair/rsa-2048-omit-private", lambda: unary(stub.GenerateKeyPair,
      pb.GenerateKeyPairRequest(algorithm=A.RSA_2048_OAEP, omit_private_key=True), kp))
    r("GenerateKeyPair/sm4", lambda: unary(stub.GenerateKeyPair, pb.GenerateKeyPairRequest(
        algorithm=A.SM4_GCM), kp))
    r("GenerateKeyPair/algorithm-unspecified", lambda: unary(stub.GenerateKeyPair,
      pb.GenerateKeyPairRequest(), kp))
    pk = lambda x: "public_key_der=%s versions=[%s]" % (h(x.public_key_der), ",".join(
        str(v.version) for v in x.versions))
    pkr = lambda x: "versions=[%s]" % ",".join(str(v.version) for v in x.versions)
    r("GetPublicKey/sm2-keyring", lambda: unary(stub.GetPublicKey, pb.GetPublicKeyRequest(
        algorithm=A.SM2, key=K("sm2")), pk))
    r("GetPublicKey/sm2-inline-private", lambda: unary(stub.GetPublicKey, pb.GetPublicKeyRequest(
        algorithm=A.SM2, key=I(sm2_priv)), pk))
    r("GetPublicKey/versioned", lambda: unary(stub.GetPublicKey, pb.GetPublicKeyRequest(
        algorithm=A.SM2, key=K("ver-sm2")), pkr))
    r("GetPublicKey/versioned-v1", lambda: unary(stub.GetPublicKey, pb.GetPublicKeyRequest(
        algorithm=A.SM2, key=K("ver-sm2", 1)), pk))
    r("GetPublicKey/sm4-key", lambda: unary(stub.GetPublicKey, pb.GetPublicKeyRequest(
        algorithm=A.SM2, key=K("sm4"))))
    r("GetPublicKey/inline-public-key", lambda: unary(stub.GetPublicKey, pb.GetPublicKeyRequest(
        algorithm=A.SM2, key=I(sm2_pub)), pk))
    r("GetPublicKey/algorithm-sm4-ctr", lambda: unary(stub.GetPublicKey, pb.GetPublicKeyRequest(
        algorithm=A.SM4_CTR, key=K("sm4"))))
    rv = lambda x: fields(x, lengths=("data",))
    r("GenerateRandom/32", lambda: unary(stub.GenerateRandom, pb.GenerateRandomRequest(length=32), rv))
    r("GenerateRandom/0", lambda: unary(stub.GenerateRandom, pb.GenerateRandomRequest(length=0), rv))
    r("GenerateRandom/1048577", lambda: unary(stub.GenerateRandom, pb.GenerateRandomRequest(
        length=(1 << 20) + 1), rv))
    r("GetServerInfo/plain", lambda: unary(stub.GetServerInfo, pb.GetServerInfoRequest(), info))


def info(x):
    """The deterministic part of GetServerInfo: limits, policy, keyring size, algorithms and the
    self-test names (not the version, CPU or kernels)."""
    return ("max_message_bytes=%d max_inflight=%d max_inflight_bytes=%d inline_private_keys=%s "
            "keyring_size=%d batching=%s algorithms=[%s] self_tests_passed=%s self_tests=%d" % (
                x.max_message_bytes, x.max_inflight, x.max_inflight_bytes, x.inline_private_keys,
                x.keyring_size, x.batching.enabled, ",".join(x.algorithms), x.self_tests_passed,
                len(x.self_tests)))


def sig_fields(x):
    """A signature by its length when that is fixed (raw r || s, RSA-PSS), not for DER."""
    return fields(x, lengths=("signature",) if len(x.signature) in (64, 256, 384) else ())


def kx_show(x):
    return fields(x, lengths=("ephemeral_point", "confirmation", "shared_key"))


def kx(rec, pb, stub, K, I, sm2_priv, sm2_point, off_curve):
    A = pb
    r = rec.record
    KR = pb.KeyExchangeRequest
    P = pb.KeyExchangeParams
    INIT, RESP = pb.KEY_EXCHANGE_ROLE_INITIATOR, pb.KEY_EXCHANGE_ROLE_RESPONDER

    def exchange():
        # The server on both sides: for "sm2" as initiator, for "sm2b" as responder.
        a = Conversation(stub.KeyExchange)
        b = Conversation(stub.KeyExchange)
        try:
            a.send(KR(params=P(algorithm=A.SM2, key=K("sm2"), role=INIT, peer_key=K("sm2b"),
                               user_id=b"A", peer_user_id=b"B", key_length=24, confirmation=True)))
            ra = a.recv()
            b.send(KR(params=P(algorithm=A.SM2, key=K("sm2b"), role=RESP, peer_key=K("sm2"),
                               user_id=b"B", peer_user_id=b"A", key_length=24, confirmation=True),
                      peer_ephemeral_point=ra.ephemeral_point))
            rb = b.recv()
            a.send(KR(peer_ephemeral_point=rb.ephemeral_point, peer_confirmation=rb.confirmation))
            ka = a.recv()
            b.send(KR(peer_confirmation=ka.confirmation))
            kb = b.recv()
            # One stream ends before the other is closed, so that their audit lines come in
            # one order.
            a.close()
            rest = list(a.call)
            b.close()
            rest += list(b.call)
            return Result("OK initiator=[%s | %s] responder=[%s | %s] equal_keys=%s extra=%d" % (
                kx_show(ra), kx_show(ka), kx_show(rb), kx_show(kb),
                ka.shared_key == kb.shared_key, len(rest)))
        finally:
            a.close()
            b.close()
            a.call.cancel()
            b.call.cancel()

    r("KeyExchange/both-roles-with-confirmation", exchange)
    base = dict(algorithm=A.SM2, key=K("sm2"), peer_key=K("sm2b"))
    r("KeyExchange/no-message", lambda: bidi(stub.KeyExchange, [], kx_show))
    r("KeyExchange/no-params-first", lambda: bidi(stub.KeyExchange, [
        KR(peer_ephemeral_point=sm2_point)], kx_show))
    r("KeyExchange/role-unspecified", lambda: bidi(stub.KeyExchange, [
        KR(params=P(**base))], kx_show))
    r("KeyExchange/algorithm-sm4", lambda: bidi(stub.KeyExchange, [
        KR(params=P(**dict(base, algorithm=A.SM4_GCM), role=INIT))], kx_show))
    r("KeyExchange/initiator-half-close-before-key", lambda: bidi(stub.KeyExchange, [
        KR(params=P(role=INIT, **base))], kx_show))
    r("KeyExchange/initiator-off-curve-peer-point", lambda: bidi(stub.KeyExchange, [
        KR(params=P(role=INIT, **base)), KR(peer_ephemeral_point=off_curve)], kx_show))
    r("KeyExchange/initiator-wrong-confirmation", lambda: bidi(stub.KeyExchange, [
        KR(params=P(role=INIT, confirmation=True, **base)),
        KR(peer_ephemeral_point=sm2_point, peer_confirmation=bytes(32))], kx_show))
    r("KeyExchange/responder-without-peer-point", lambda: bidi(stub.KeyExchange, [
        KR(params=P(role=RESP, **base))], kx_show))
    r("KeyExchange/responder-no-confirmation", lambda: bidi(stub.KeyExchange, [
        KR(params=P(role=RESP, **base), peer_ephemeral_point=sm2_point)], kx_show))
    r("KeyExchange/responder-wrong-confirmation", lambda: bidi(stub.KeyExchange, [
        KR(params=P(role=RESP, confirmation=True, **base), peer_ephemeral_point=sm2_point),
        KR(peer_confirmation=bytes(32))], kx_show))
    r("KeyExchange/params-again", lambda: bidi(stub.KeyExchange, [
        KR(params=P(role=INIT, **base)), KR(params=P(role=INIT, **base))], kx_show))
    r("KeyExchange/key-length-65537", lambda: bidi(stub.KeyExchange, [
        KR(params=P(role=INIT, key_length=65537, **base))], kx_show))
    r("KeyExchange/no-peer-key", lambda: bidi(stub.KeyExchange, [
        KR(params=P(algorithm=A.SM2, key=K("sm2"), role=INIT))], kx_show))
    r("KeyExchange/sm4-key", lambda: bidi(stub.KeyExchange, [
        KR(params=P(**dict(base, key=K("sm4")), role=INIT))], kx_show))
    r("KeyExchange/inline-private-key", lambda: bidi(stub.KeyExchange, [
        KR(params=P(**dict(base, key=I(sm2_priv)), role=INIT))], kx_show))


def restricted_cases(rec, pb, alice, bob):
    """The mTLS server: --inline_private_keys=deny and the access policy (POLICY)."""
    A = pb
    K = lambda key_id, version=0: pb.KeyRef(key_id=key_id, key_version=version)
    I = lambda data: pb.KeyRef(inline_key=data)
    sm2_priv = read(os.path.join(TESTDATA, "sm2_encoding_key.pem"))
    sm2_pub = read(os.path.join(TESTDATA, "sm2_encoding_pub.pem"))
    r = rec.record
    iv = bytes(range(100, 116))
    raw = pb.SignatureOptions(encoding=pb.SIGNATURE_ENCODING_RAW)
    sv = sig_fields
    ev = lambda x: fields(x, hashed=("ciphertext", "tag"))
    dv = lambda x: "plaintext=" + h(x.plaintext)
    vv = lambda x: "valid=%s" % x.valid

    sig = None
    for who, stub in (("alice", alice), ("bob", bob)):
        res = r("Sign/%s-sm2" % who, lambda: unary(stub.Sign, pb.SignRequest(
            algorithm=A.SM2, key=K("sm2"), data=b"m", options=raw), sv))
        sig = sig or (res.signature if res is not None else None)
        r("Sign/%s-denied-key" % who, lambda: unary(stub.Sign, pb.SignRequest(
            algorithm=A.SM2, key=K("denied"), data=b"m")))
        r("Sign/%s-inline-private" % who, lambda: unary(stub.Sign, pb.SignRequest(
            algorithm=A.SM2, key=I(sm2_priv), data=b"m")))
        r("Sign/%s-locked-unknown-algorithm" % who, lambda: unary(stub.Sign, pb.SignRequest(
            algorithm=99, key=K("locked"), data=b"m")))
        r("Verify/%s-locked" % who, lambda: unary(stub.Verify, pb.VerifyRequest(
            algorithm=A.SM2, key=K("locked"), data=b"m", signature=sig or b"", options=raw), vv))
        r("Verify/%s-inline-public" % who, lambda: unary(stub.Verify, pb.VerifyRequest(
            algorithm=A.SM2, key=I(sm2_pub), data=b"m", signature=sig or b"", options=raw), vv))
        r("Hmac/%s-hmac" % who, lambda: unary(stub.Hmac, pb.HmacRequest(
            algorithm=A.HMAC_SM3, key=K("hmac"), data=b"m"), lambda x: "mac=" + h(x.mac)))
        r("Hmac/%s-unknown-key" % who, lambda: unary(stub.Hmac, pb.HmacRequest(
            algorithm=A.HMAC_SM3, key=K("nosuchkey"), data=b"m")))
        r("Encrypt/%s-sm4" % who, lambda: unary(stub.Encrypt, pb.EncryptRequest(
            algorithm=A.SM4_CTR, key=K("sm4"), plaintext=b"m", nonce=iv), ev))
        r("Encrypt/%s-inline" % who, lambda: unary(stub.Encrypt, pb.EncryptRequest(
            algorithm=A.SM4_CTR, key=I(SM4_KEY), plaintext=b"m", nonce=iv), ev))
        r("Encrypt/%s-versioned-v1-retired" % who, lambda: unary(stub.Encrypt, pb.EncryptRequest(
            algorithm=A.SM4_CTR, key=K("ver", 1), plaintext=b"m", nonce=iv), ev))
        r("Decrypt/%s-denied-key-unspecified-algorithm" % who, lambda: unary(stub.Decrypt,
          pb.DecryptRequest(key=K("denied"), ciphertext=b"m", nonce=iv), dv))
        r("Decrypt/%s-sm4" % who, lambda: unary(stub.Decrypt, pb.DecryptRequest(
            algorithm=A.SM4_CTR, key=K("sm4"), ciphertext=b"m", nonce=iv), dv))
        r("PublicKeyEncrypt/%s-denied-unknown-algorithm" % who, lambda: unary(
            stub.PublicKeyEncrypt, pb.PublicKeyEncryptRequest(algorithm=99, key=K("denied"))))
        r("PublicKeyEncrypt/%s-locked" % who, lambda: unary(stub.PublicKeyEncrypt,
          pb.PublicKeyEncryptRequest(algorithm=A.SM2, key=K("locked"), plaintext=b"m"),
          lambda x: fields(x, lengths=("ciphertext",))))
        r("PublicKeyDecrypt/%s-locked" % who, lambda: unary(stub.PublicKeyDecrypt,
          pb.PublicKeyDecryptRequest(algorithm=A.SM2, key=K("locked"), ciphertext=bytes(120)), dv))
        r("PublicKeyDecrypt/%s-inline-private" % who, lambda: unary(stub.PublicKeyDecrypt,
          pb.PublicKeyDecryptRequest(algorithm=A.SM2, key=I(sm2_priv), ciphertext=bytes(120)), dv))
        r("HybridDecrypt/%s-sm2" % who, lambda: unary(stub.HybridDecrypt, pb.HybridDecryptRequest(
            algorithm=A.HPKE_SM2_SM3_SM4GCM, key=K("sm2"), ciphertext=bytes(100)), dv))
        r("GetPublicKey/%s-denied-unknown-algorithm" % who, lambda: unary(stub.GetPublicKey,
          pb.GetPublicKeyRequest(algorithm=99, key=K("denied"))))
        r("GetPublicKey/%s-locked" % who, lambda: unary(stub.GetPublicKey,
          pb.GetPublicKeyRequest(algorithm=A.SM2, key=K("locked")),
          lambda x: "public_key_der=" + h(x.public_key_der)))
        r("GenerateKeyPair/%s-sm2" % who, lambda: unary(stub.GenerateKeyPair,
          pb.GenerateKeyPairRequest(algorithm=A.SM2), fields))
        r("SignBatch/%s-mixed" % who, lambda: unary(stub.SignBatch, pb.SignBatchRequest(items=[
            pb.SignRequest(algorithm=A.SM2, key=K("sm2"), data=b"a", options=raw),
            pb.SignRequest(algorithm=A.SM2, key=K("denied"), data=b"b"),
            pb.SignRequest(algorithm=A.SM2, key=I(sm2_priv), data=b"c"),
            pb.SignRequest(algorithm=A.SM2, key=K("locked"), data=b"d"),
            pb.SignRequest(algorithm=99, key=K("denied"), data=b"e"),
            pb.SignRequest(algorithm=A.SM2, key=K("ver-sm2", 1), data=b"f", options=raw)]),
            items=sv))
        r("VerifyBatch/%s-mixed" % who, lambda: unary(stub.VerifyBatch, pb.VerifyBatchRequest(items=[
            pb.VerifyRequest(algorithm=A.SM2, key=K("locked"), data=b"m", signature=sig or b"",
                             options=raw),
            pb.VerifyRequest(algorithm=A.SM2, key=K("denied"), data=b"m", signature=sig or b""),
            pb.VerifyRequest(algorithm=A.SM2, key=K("sm2"), data=b"m", signature=sig or b"",
                             options=raw)]), items=vv))
        r("EncryptBatch/%s-mixed" % who, lambda: unary(stub.EncryptBatch, pb.EncryptBatchRequest(items=[
            pb.EncryptRequest(algorithm=A.SM4_CTR, key=K("sm4"), plaintext=b"a", nonce=iv),
            pb.EncryptRequest(algorithm=A.SM4_CTR, key=K("denied"), plaintext=b"b", nonce=iv),
            pb.EncryptRequest(algorithm=99, key=K("denied"), plaintext=b"c"),
            pb.EncryptRequest(algorithm=A.SM4_CTR, key=I(SM4_KEY), plaintext=b"d", nonce=iv),
            pb.EncryptRequest(algorithm=A.AES_128_CTR, key=K("aes128"), plaintext=b"e", nonce=iv)]),
            items=ev))
        r("HybridEncryptBatch/%s-mixed" % who, lambda: unary(stub.HybridEncryptBatch,
          pb.HybridEncryptBatchRequest(items=[
              pb.HybridEncryptRequest(algorithm=A.HPKE_SM2_SM3_SM4GCM, key=K("locked"), plaintext=b"a"),
              pb.HybridEncryptRequest(algorithm=A.HPKE_SM2_SM3_SM4GCM, key=K("denied"), plaintext=b"b"),
              pb.HybridEncryptRequest(algorithm=A.HPKE_SM2_SM3_SM4GCM, key=I(sm2_pub), plaintext=b"c")]),
          items=lambda x: fields(x, lengths=("ciphertext",))))
        r("HashBatch/%s-mixed" % who, lambda: unary(stub.HashBatch, pb.HashBatchRequest(items=[
            pb.HashRequest(algorithm=A.SM3, data=b"abc"), pb.HashRequest()]),
            items=lambda x: "digest=" + h(x.digest)))
        r("EncryptStream/%s-denied-key" % who, lambda: bidi(stub.EncryptStream, [
            pb.EncryptStreamRequest(params=pb.EncryptStreamParams(
                algorithm=A.SM4_CTR, key=K("denied"), nonce=iv), plaintext=b"a")],
            lambda x: fields(x, hashed=("ciphertext", "nonce"))))
        r("DecryptStream/%s-sm4" % who, lambda: bidi(stub.DecryptStream, [
            pb.DecryptStreamRequest(params=pb.DecryptStreamParams(
                algorithm=A.SM4_CTR, key=K("sm4"), nonce=iv), ciphertext=b"abc")],
            lambda x: fields(x, hashed=("plaintext",))))
        r("HybridDecryptStream/%s-inline-private" % who, lambda: bidi(stub.HybridDecryptStream, [
            pb.HybridDecryptStreamRequest(params=pb.HybridStreamParams(
                algorithm=A.HPKE_SM2_SM3_SM4GCM, key=I(sm2_priv)), ciphertext=bytes(80))],
            lambda x: fields(x, hashed=("plaintext",))))
        r("HybridEncryptStream/%s-locked" % who, lambda: bidi(stub.HybridEncryptStream, [
            pb.HybridEncryptStreamRequest(params=pb.HybridStreamParams(
                algorithm=A.HPKE_SM2_SM3_SM4GCM, key=K("locked")), plaintext=b"a")],
            lambda x: fields(x, lengths=("ciphertext",))))
        r("KeyExchange/%s-sm2" % who, lambda: bidi(stub.KeyExchange, [
            pb.KeyExchangeRequest(params=pb.KeyExchangeParams(
                algorithm=A.SM2, key=K("sm2"), peer_key=K("sm2b"),
                role=pb.KEY_EXCHANGE_ROLE_INITIATOR))], kx_show))
        r("KeyExchange/%s-inline-private" % who, lambda: bidi(stub.KeyExchange, [
            pb.KeyExchangeRequest(params=pb.KeyExchangeParams(
                algorithm=A.SM2, key=I(sm2_priv), peer_key=K("sm2b"),
                role=pb.KEY_EXCHANGE_ROLE_INITIATOR))], kx_show))
        r("HashStream/%s-sm3" % who, lambda: client_stream(stub.HashStream, [
            pb.HashStreamRequest(algorithm=A.SM3, data=b"abc")], lambda x: "digest=" + h(x.digest)))
        r("GenerateRandom/%s-16" % who, lambda: unary(stub.GenerateRandom,
          pb.GenerateRandomRequest(length=16), lambda x: fields(x, lengths=("data",))))
        r("GetServerInfo/%s" % who, lambda: unary(stub.GetServerInfo, pb.GetServerInfoRequest(), info))


# ---- main --------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smcryptd", required=True, help="the smcryptd binary to record")
    ap.add_argument("--out", required=True, help="the record file to write")
    ap.add_argument("--keep", action="store_true", help="keep the working folder and say where")
    args = ap.parse_args()
    binary = os.path.abspath(args.smcryptd)
    if not os.access(binary, os.X_OK):
        sys.exit("behaviour_record: %s is not an executable" % binary)

    work = tempfile.mkdtemp(prefix="smcrypt-behaviour-")
    servers = []
    try:
        generate_stubs(work)
        import grpc
        from smcrypt.v1 import crypto_pb2 as pb
        from smcrypt.v1 import crypto_pb2_grpc as pb_grpc

        keys = os.path.join(work, "keys")
        make_keyring(keys)
        certs = os.path.join(work, "certs")
        os.makedirs(certs)
        make_certificates(certs)
        write(os.path.join(work, "policy.txt"), POLICY, mode=0o644)

        out = ["# smcryptd behaviour record (tests/server/behaviour_record.py): one line per",
               "# request, [server] RPC/case: status, then batch items, stream responses and",
               "# the audit lines the request wrote (time and peer port masked)."]
        counts = []

        srv = Smcryptd(binary, work, "open", ["--keys_dir=" + keys, "--inline_private_keys=allow"])
        servers.append(srv)
        channel = grpc.insecure_channel(srv.target)
        rec = Recorder(out, srv, "open")
        open_cases(rec, pb, pb_grpc.CryptoServiceStub(channel))
        channel.close()
        srv.stop()
        out.extend("    audit-after-stop " + mask_audit(l) for l in srv.new_audit_lines())
        counts.append(("open", rec.count))

        srv = Smcryptd(binary, work, "restricted", [
            "--keys_dir=" + keys, "--inline_private_keys=deny",
            "--access_policy=" + os.path.join(work, "policy.txt"),
            "--tls_cert=" + os.path.join(certs, "server.pem"),
            "--tls_key=" + os.path.join(certs, "server.key"),
            "--tls_client_ca=" + os.path.join(certs, "ca.pem")])
        servers.append(srv)
        ca = read(os.path.join(certs, "ca.pem"))
        stubs = {}
        channels = []
        for who in ("alice", "bob"):
            creds = grpc.ssl_channel_credentials(ca, read(os.path.join(certs, who + ".key")),
                                                 read(os.path.join(certs, who + ".pem")))
            ch = grpc.secure_channel(srv.target, creds,
                                     options=[("grpc.ssl_target_name_override", "localhost")])
            channels.append(ch)
            stubs[who] = pb_grpc.CryptoServiceStub(ch)
        rec = Recorder(out, srv, "restricted")
        restricted_cases(rec, pb, stubs["alice"], stubs["bob"])
        for ch in channels:
            ch.close()
        srv.stop()
        out.extend("    audit-after-stop " + mask_audit(l) for l in srv.new_audit_lines())
        counts.append(("restricted", rec.count))

        total = sum(sum(c.values()) for _, c in counts)
        out.append("# %d requests" % total)
        for phase, c in counts:
            out.append("# [%s] %s" % (phase, " ".join("%s=%d" % kv for kv in c.items())))
        with open(args.out, "w") as f:
            f.write("\n".join(out) + "\n")
        print("behaviour_record: %d requests, %d lines in %s" % (total, len(out) + 0, args.out))
    finally:
        for s in servers:
            s.stop()
        if args.keep:
            print("behaviour_record: working folder %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
