"""arm64 smcrypt CLI and smcryptd under qemu-user, checked from the host (label arm64).

Run by ctest in an arm64 cross build (tests/arm64/CMakeLists.txt):

  arm64_service_test.py --emulator "qemu-aarch64-static -cpu max -L /" \
      --smcrypt build-arm64/clients/smcrypt/smcrypt --smcryptd build-arm64/server/smcryptd \
      --proto proto --work DIR --expect-kernels SM3=ce,SM4=ce

Checks, with the host's OpenSSL 3 (openssl command, Python hashlib) as the oracle:
  smcrypt --local   `hash --alg sm3` equals OpenSSL's SM3; `keygen` + `sign` of an SM2 key
                    verifies with `openssl pkeyutl` (default user ID), and `verify` accepts it
  smcryptd          started under qemu on a loopback port with an OpenSSL-made SM2 keyring;
                    the host's python3-grpcio calls Hash (SM3, against hashlib) and Sign (SM2,
                    verified by openssl pkeyutl); GetServerInfo and /metrics name only arm64
                    CPU features and back ends, and the back ends --expect-kernels names
                    (SMCRYPT_CPU_DISABLE, inherited by both programs, picks them)
The gRPC stubs are generated into DIR by protoc and grpc_python_plugin (host programs).
"""

import argparse
import hashlib
import os
import re
import shlex
import subprocess
import sys
import time
import unittest
import urllib.request

ARGS = None
# Back-end names of arm64 builds (docs/design.md, "Names used everywhere"), SM3 possibly as
# "<single>+<multi>"; the x86 names must never appear.
ARM64_KERNELS = {"generic", "neon", "ce", "pmull", "mb4_neon"}
ARM64_FEATURES = {"asimd", "pmull", "sha2", "sm3", "sm4", "sve"}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=kw.pop("text", True), timeout=120, **kw)


def emulated(binary, *args):
    return shlex.split(ARGS.emulator) + [binary, *args]


class LocalCliTest(unittest.TestCase):
    def setUp(self):
        self.dir = os.path.join(ARGS.work, "cli")
        os.makedirs(self.dir, exist_ok=True)
        self.msg = os.path.join(self.dir, "msg.txt")
        with open(self.msg, "wb") as f:
            f.write(b"smcrypt on arm64\n" * 100)

    def test_sm3_hash_equals_openssl(self):
        r = run(emulated(ARGS.smcrypt, "hash", "--local", "--alg", "sm3", self.msg))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.msg, "rb") as f:
            want = hashlib.new("sm3", f.read()).hexdigest()
        self.assertEqual(r.stdout.split()[0], want)

    def test_sm2_signature_verifies_with_openssl(self):
        key, pub, sig = (os.path.join(self.dir, n) for n in ("k.pem", "p.pem", "m.sig"))
        r = run(emulated(ARGS.smcrypt, "keygen", "--local", "--alg", "sm2", "--out", key,
                         "--pubout", pub))
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run(emulated(ARGS.smcrypt, "sign", "--local", "--key", key, "--outform", "der",
                         "--out", sig, self.msg))
        self.assertEqual(r.returncode, 0, r.stderr)
        o = run(["openssl", "pkeyutl", "-verify", "-rawin", "-digest", "sm3", "-pkeyopt",
                 "distid:1234567812345678", "-pubin", "-inkey", pub, "-in", self.msg,
                 "-sigfile", sig])
        self.assertEqual(o.returncode, 0, o.stdout + o.stderr)
        r = run(emulated(ARGS.smcrypt, "verify", "--local", "--key", pub, "--inform", "der",
                         "--sig", sig, self.msg))
        self.assertEqual(r.returncode, 0, r.stderr)


class ServerTest(unittest.TestCase):
    proc = None

    @classmethod
    def setUpClass(cls):
        work = os.path.join(ARGS.work, "server")
        gen, keys = os.path.join(work, "gen"), os.path.join(work, "keys")
        os.makedirs(gen, exist_ok=True)
        os.makedirs(keys, exist_ok=True)
        subprocess.run(["protoc", "-I", ARGS.proto, "--python_out", gen, "--grpc_python_out",
                        gen, "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
                        "smcrypt/v1/crypto.proto"], check=True)
        sys.path.insert(0, gen)
        cls.key = os.path.join(keys, "sm2.pem")
        cls.pub = os.path.join(work, "sm2.pub.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "SM2", "-out", cls.key], check=True,
                       capture_output=True)
        os.chmod(cls.key, 0o600)
        subprocess.run(["openssl", "pkey", "-in", cls.key, "-pubout", "-out", cls.pub],
                       check=True)
        cls.log = os.path.join(work, "smcryptd.log")
        with open(cls.log, "w") as log:
            cls.proc = subprocess.Popen(
                emulated(ARGS.smcryptd, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                         "--keys_dir=" + keys, "--drain_delay=0"),
                stdout=log, stderr=subprocess.STDOUT)
        cls.target = cls.metrics = None
        deadline = time.monotonic() + 60  # start-up self-tests run under emulation
        while time.monotonic() < deadline and (cls.target is None or cls.metrics is None):
            with open(cls.log) as f:
                text = f.read()
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
            if m:
                cls.target = "127.0.0.1:" + m.group(1)
            m = re.search(r"metrics on 127\.0\.0\.1:(\d+)", text)
            if m:
                cls.metrics = "http://127.0.0.1:%s/metrics" % m.group(1)
            if cls.proc.poll() is not None:
                break
            time.sleep(0.2)
        if cls.target is None or cls.metrics is None:
            cls.tearDownClass()
            with open(cls.log) as f:
                raise RuntimeError("smcryptd did not start; its log:\n" + f.read())
        import grpc
        from smcrypt.v1 import crypto_pb2, crypto_pb2_grpc
        cls.pb = crypto_pb2
        cls.channel = grpc.insecure_channel(cls.target)
        grpc.channel_ready_future(cls.channel).result(timeout=30)
        cls.stub = crypto_pb2_grpc.CryptoServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        if cls.proc is not None and cls.proc.poll() is None:
            cls.proc.terminate()
            try:
                cls.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                cls.proc.kill()
                cls.proc.wait()

    def test_hash_sm3_equals_hashlib(self):
        data = os.urandom(3000)
        r = self.stub.Hash(self.pb.HashRequest(algorithm=self.pb.SM3, data=data), timeout=30)
        self.assertEqual(r.digest, hashlib.new("sm3", data).digest())

    def test_sign_sm2_verifies_with_openssl(self):
        data = b"signed by smcryptd on arm64"
        r = self.stub.Sign(self.pb.SignRequest(algorithm=self.pb.SM2,
                                               key=self.pb.KeyRef(key_id="sm2"), data=data),
                           timeout=30)
        work = os.path.dirname(self.pub)
        msg, sig = os.path.join(work, "msg.bin"), os.path.join(work, "msg.sig")
        with open(msg, "wb") as f:
            f.write(data)
        with open(sig, "wb") as f:
            f.write(r.signature)
        o = run(["openssl", "pkeyutl", "-verify", "-rawin", "-digest", "sm3", "-pkeyopt",
                 "distid:1234567812345678", "-pubin", "-inkey", self.pub, "-in", msg,
                 "-sigfile", sig])
        self.assertEqual(o.returncode, 0, o.stdout + o.stderr)

    def test_server_info_names_arm64_features_and_back_ends(self):
        r = self.stub.GetServerInfo(self.pb.GetServerInfoRequest(), timeout=30)
        detected = set(filter(None, r.cpu_features_detected.split(",")))
        self.assertTrue(detected, "no CPU feature detected (qemu -cpu max has them all)")
        self.assertLessEqual(detected, ARM64_FEATURES)
        self.assertIn("asimd", detected)
        self.assertEqual({k.algorithm for k in r.kernels}, {"SM2", "SM3", "SM4"})
        # The start-up self-tests ran on the back ends named below.
        self.assertTrue(r.self_tests_passed, r.self_tests)
        self.assertGreater(len(r.self_tests), 5, r)
        for k in r.kernels:
            self.assertLessEqual(set(k.kernel.split("+")), ARM64_KERNELS, k)
        want = dict(kv.split("=") for kv in ARGS.expect_kernels.split(","))
        got = {k.algorithm: k.kernel for k in r.kernels}
        for alg, kernel in want.items():
            self.assertEqual(got.get(alg), kernel, r)
        masked = set(filter(None, os.environ.get("SMCRYPT_CPU_DISABLE", "").split(",")))
        enabled = set(filter(None, r.cpu_features_active.split(",")))
        self.assertFalse(enabled & masked, r)

    def test_metrics_name_arm64_back_ends(self):
        with urllib.request.urlopen(self.metrics, timeout=30) as f:
            text = f.read().decode()
        kernels = re.findall(r'smcrypt_kernel_info\{algorithm="(SM[234])",kernel="([^"]+)"\} 1',
                             text)
        self.assertEqual({a for a, _ in kernels}, {"SM2", "SM3", "SM4"}, text)
        for _, k in kernels:
            self.assertLessEqual(set(k.split("+")), ARM64_KERNELS, k)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    for name in ("emulator", "smcrypt", "smcryptd", "proto", "work", "expect-kernels"):
        p.add_argument("--" + name, required=True)
    ARGS, rest = p.parse_known_args()
    os.makedirs(ARGS.work, exist_ok=True)
    unittest.main(argv=[sys.argv[0], "-v"] + rest)


if __name__ == "__main__":
    main()
