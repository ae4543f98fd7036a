#!/usr/bin/python3
"""max_connection_age_test.py SMCRYPTD PROTO_DIR WORK_DIR — smcryptd's --max_connection_age
(label deploy, about 15 s).

- A value that is not 0 nor from 1s to 24h (500ms, -1s, 25h) fails start-up with a message
  naming the flag and the allowed range.
- With --max_connection_age=1s, one channel making an SM3 Hash call every 50 ms for 4.5 s
  reconnects as connections age out: its calls all succeed, and the client sockets seen on
  the server's port (/proc/net/tcp and tcp6) over that time are at least 3 (4.5 s / 1.1 s, gRPC's
  age with its +10 % jitter, is 4 ages; one is left for reconnection time on a busy machine).
- Without the flag, the same calls use one connection throughout.
"""
import os
import re
import subprocess
import sys
import time
import unittest

SMCRYPTD = PROTO = WORK = None
grpc = pb = pb_grpc = None


def start(*flags):
    proc = subprocess.Popen([SMCRYPTD, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                             *flags], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        log += line
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", log)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise AssertionError(f"smcryptd did not start:\n{log}")


def client_ports(server_port):
    """Local ports of the loopback client sockets connected to SERVER_PORT."""
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):  # gRPC uses v4-mapped IPv6 sockets
        with open(table) as f:
            for line in f.readlines()[1:]:
                local, remote, state = line.split()[1:4]
                if state == "01" and int(remote.split(":")[1], 16) == server_port:
                    ports.add(int(local.split(":")[1], 16))
    return ports


class MaxConnectionAgeTest(unittest.TestCase):
    def test_bad_values_fail_start_up(self):
        for value in ("500ms", "-1s", "25h"):
            out = subprocess.run([SMCRYPTD, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                                  f"--max_connection_age={value}"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, timeout=60)
            self.assertNotEqual(out.returncode, 0, value)
            self.assertIn("--max_connection_age must be 0 (no limit) or from 1s to 24h", out.stdout,
                          value)

    def connections_used(self, *flags):
        proc, port = start(*flags)
        try:
            seen = set()
            with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
                stub = pb_grpc.CryptoServiceStub(ch)
                end = time.monotonic() + 4.5
                while time.monotonic() < end:
                    r = stub.Hash(pb.HashRequest(algorithm=pb.SM3, data=b"abc"), timeout=10)
                    self.assertEqual(len(r.digest), 32)
                    seen |= client_ports(port)
                    time.sleep(0.05)
            return seen
        finally:
            proc.terminate()
            proc.wait(30)
            proc.stdout.close()

    def test_connections_age_out(self):
        seen = self.connections_used("--max_connection_age=1s")
        print(f"--max_connection_age=1s: {len(seen)} connections in 4.5 s", flush=True)
        self.assertGreaterEqual(len(seen), 3, seen)

    def test_without_the_flag_one_connection(self):
        seen = self.connections_used()
        self.assertEqual(len(seen), 1, seen)


def main():
    global SMCRYPTD, PROTO, WORK, grpc, pb, pb_grpc
    SMCRYPTD, PROTO, WORK = sys.argv[1:4]
    gen = os.path.join(WORK, "gen")
    os.makedirs(gen, exist_ok=True)
    subprocess.run(["protoc", "-I", PROTO, f"--python_out={gen}", f"--grpc_python_out={gen}",
                    "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
                    "smcrypt/v1/crypto.proto"], check=True)
    sys.path.insert(0, gen)
    import grpc as grpc_module
    from smcrypt.v1 import crypto_pb2, crypto_pb2_grpc
    grpc, pb, pb_grpc = grpc_module, crypto_pb2, crypto_pb2_grpc
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[4:]])


if __name__ == "__main__":
    main()
