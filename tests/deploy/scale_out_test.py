#!/usr/bin/env python3
"""scale_out_test.py — three smcryptd replicas behind client-side round_robin (label deploy).

Starts three smcryptd replicas on loopback ports and drives smcrypt-load at all three through
one gRPC target, `ipv4:127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`, the loopback equivalent of a
headless Service resolved by `dns:///` in Kubernetes (docs/deployment.md). Checks:

1. every replica's /metrics shows a share of the requests (round_robin spreads them);
2. mid-run one replica is stopped gracefully (SIGTERM: it turns NOT_SERVING, drains, exits 0)
   and another is killed outright (SIGKILL); the run still ends with every request OK — the
   clients' retry policy (UNAVAILABLE retried on another replica, clients/smcrypt/session.h
   kServiceConfigJson) loses no accepted request;
3. the replica that is left takes over, and smcrypt-load's OK count is at least what the
   replicas were seen to answer.

Usage: scale_out_test.py SMCRYPTD SMCRYPT_LOAD
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

RPC = "Hash"


class Replica:
    def __init__(self, binary):
        self.proc = subprocess.Popen(
            [binary, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--shutdown_grace=5s"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.log = ""
        deadline = time.time() + 60
        self.port = self.metrics_port = None
        while time.time() < deadline and (self.port is None or self.metrics_port is None):
            line = self.proc.stdout.readline()
            if not line:
                break
            self.log += line
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
            m = re.search(r"metrics on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.metrics_port = int(m.group(1))
        if self.port is None or self.metrics_port is None:
            self.proc.kill()
            raise RuntimeError(f"smcryptd did not start:\n{self.log}")
        # Keep draining the log so the pipe never fills.
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self):
        for line in self.proc.stdout:
            self.log += line

    def handled(self, code="OK"):
        """grpc_server_handled_total of CryptoService/RPC with `code`."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
            text = r.read().decode()
        total = 0.0
        for line in text.splitlines():
            if (line.startswith("grpc_server_handled_total{") and f'grpc_method="{RPC}"' in line
                    and f'grpc_code="{code}"' in line):
                total += float(line.rsplit(" ", 1)[1])
        return total


def main():
    smcryptd, load = sys.argv[1], sys.argv[2]
    replicas = [Replica(smcryptd) for _ in range(3)]
    failures = []
    try:
        target = "ipv4:" + ",".join(f"127.0.0.1:{r.port}" for r in replicas)
        with tempfile.TemporaryDirectory() as tmp:
            report_path = os.path.join(tmp, "report.json")
            cmd = [load, "--scenario", "run", "--target", target, "--rpc", RPC, "--alg", "SM3",
                   "--size", "1KiB", "--concurrency", "32", "--connections", "2",
                   "--duration", "9s", "--json", report_path, "--no-progress"]
            print("+", " ".join(cmd), flush=True)
            run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            time.sleep(3)
            shares = [r.handled() for r in replicas]
            print("requests per replica after 3 s:", shares, flush=True)
            total = sum(shares)
            for i, n in enumerate(shares):
                if total == 0 or n < 0.1 * total:
                    failures.append(f"replica {i} served {n} of {total} requests: round_robin "
                                    "does not spread them")
            # Graceful stop of replica 0, as Kubernetes does on scale-down or rollout.
            before_term = replicas[0].handled()
            replicas[0].proc.send_signal(signal.SIGTERM)
            time.sleep(2)
            # Replica 1 dies without notice (a node failure, an OOM kill).
            before_kill = replicas[1].handled()
            replicas[1].proc.kill()
            out, _ = run.communicate(timeout=120)
            print(out[-3000:], flush=True)
            if run.returncode != 0:
                failures.append(f"smcrypt-load exited with {run.returncode}")
            with open(report_path) as f:
                report = json.load(f)
        rc0 = replicas[0].proc.wait(timeout=30)
        if rc0 != 0:
            failures.append(f"replica 0 exited with {rc0} after SIGTERM, want 0 (drained)")
        steps = [s for sc in report["scenarios"] for s in sc.get("steps", [])]
        ops = sum(s["operations"] for s in steps)
        ok = sum(s["ok"] for s in steps)
        errors = {k: v for s in steps for k, v in s.get("errors_by_code", {}).items()}
        print(f"smcrypt-load: {ops} operations, {ok} OK, errors {errors}", flush=True)
        if errors or ok != ops or ops == 0:
            failures.append(f"requests were lost: {ops} operations, {ok} OK, {errors}")
        # The surviving replica took over the traffic of the two that left.
        survivor_after = replicas[2].handled()
        if survivor_after <= shares[2]:
            failures.append("replica 2 served nothing after the others stopped")
        # Every OK operation was answered OK by a replica: at least the counts read before
        # the stop and the kill plus the survivor's final count (replica 0's drain and
        # replica 1's last moments come on top and cannot be read any more).
        answered_at_least = before_term + before_kill + survivor_after
        if ok < answered_at_least - 2 * 32:  # requests counted by a replica, not yet by the client
            failures.append(f"smcrypt-load counted {ok} OK, the replicas answered at least "
                            f"{answered_at_least}")
    finally:
        for r in replicas:
            if r.proc.poll() is None:
                r.proc.kill()
            r.proc.wait()
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
