#!/usr/bin/env python3
"""Smoke test for smcrypt-rpc-ceiling (label integration): the echo server and a real
smcryptd on free loopback ports, the client over every RPC at two in-flight counts and the
big-N case with tiny durations (no timing is asserted). The JSON and markdown reports must
hold one row per RPC and count, each with calls measured and zero errors.

Usage: rpc_ceiling_smoke_test.py PATH/TO/smcrypt-rpc-ceiling PATH/TO/smcryptd
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time

RPCS = ["echo", "Hash", "Encrypt", "Sign", "Verify", "HybridEncrypt", "PublicKeyEncrypt"]
COUNTS = [1, 8]
BIG = (32, 4, ["echo", "HybridEncrypt"])  # in flight, channels, RPCs


def make_keys(directory):
    os.mkdir(directory)
    subprocess.run(["openssl", "genpkey", "-algorithm", "SM2", "-out",
                    os.path.join(directory, "signing.pem")], check=True, capture_output=True)
    with open(os.path.join(directory, "data.pem"), "w") as f:
        f.write("-----BEGIN SM4 KEY-----\n" + base64.b64encode(os.urandom(16)).decode() +
                "\n-----END SM4 KEY-----\n")
    os.chmod(directory, 0o700)
    for name in ("signing.pem", "data.pem"):
        os.chmod(os.path.join(directory, name), 0o600)


def start(cmd, log_path, pattern):
    """Starts `cmd` with its output in `log_path`; returns (process, port from `pattern`)."""
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        with open(log_path) as f:
            m = re.search(pattern, f.read())
        if m:
            return proc, int(m.group(1))
        time.sleep(0.05)
    proc.kill()
    with open(log_path) as f:
        raise RuntimeError(f"{cmd[0]} did not start:\n{f.read()}")


def main() -> int:
    client, smcryptd = sys.argv[1], sys.argv[2]
    failures = []
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            keys = os.path.join(tmp, "keys")
            make_keys(keys)
            echo, echo_port = start([client, "--serve_echo=127.0.0.1:0"],
                                    os.path.join(tmp, "echo.log"),
                                    r"echo listening on 127\.0\.0\.1:(\d+)")
            procs.append(echo)
            server, port = start([smcryptd, "--listen=127.0.0.1:0", "--metrics_listen=",
                                  "--keys_dir=" + keys, "--audit_log=none", "--drain_delay=0"],
                                 os.path.join(tmp, "smcryptd.log"),
                                 r"listening on 127\.0\.0\.1:(\d+)")
            procs.append(server)
            json_path = os.path.join(tmp, "report.json")
            md_path = os.path.join(tmp, "table.md")
            cmd = [client, f"--target=127.0.0.1:{port}", f"--echo=127.0.0.1:{echo_port}",
                   "--in_flight=" + ",".join(map(str, COUNTS)), "--channels=2",
                   "--rounds=1", "--warmup=0.05s", "--duration=0.15s",
                   f"--big_in_flight={BIG[0]}", f"--big_channels={BIG[1]}",
                   "--big_rpcs=" + ",".join(BIG[2]), "--json=" + json_path,
                   "--markdown=" + md_path]
            print("+", " ".join(cmd), flush=True)
            run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, timeout=120)
            print(run.stdout[-6000:], flush=True)
            if run.returncode != 0:
                print(f"FAIL: smcrypt-rpc-ceiling exited with {run.returncode}")
                return 1
            with open(json_path) as f:
                report = json.load(f)
            with open(md_path) as f:
                markdown = f.read()
        finally:
            for p in procs:
                p.terminate()
                p.wait(timeout=30)

    expected = [(r, n, 2) for n in COUNTS for r in RPCS] + [(r, BIG[0], BIG[1]) for r in BIG[2]]
    got = [(row["rpc"], row["in_flight"], row["channels"]) for row in report["rows"]]
    if got != expected:
        failures.append(f"rows {got}, want {expected}")
    for row in report["rows"]:
        name = f'{row["rpc"]} N={row["in_flight"]}'
        if row["errors"] != 0 or row["echo_errors"] != 0:
            failures.append(f"{name}: errors {row['errors_by_code']}, echo "
                            f"{row['echo_errors_by_code']}")
        if row["calls_measured"] <= 0 or row["echo_calls_measured"] <= 0:
            failures.append(f"{name}: no call measured")
        if not row["rps"] > 0 or not row["echo_rps"] > 0 or not row["share"] > 0:
            failures.append(f"{name}: rps {row['rps']}, echo {row['echo_rps']}, "
                            f"share {row['share']}")
    table_rows = [line for line in markdown.splitlines()
                  if re.match(r"^\| [A-Za-z]+ \| .* \| \d+ \| \d+ \|", line)]
    if len(table_rows) != len(expected):
        failures.append(f"markdown has {len(table_rows)} rows, want {len(expected)}")
    for line in table_rows:
        if line.split(" | ")[9] != "0":
            failures.append(f"markdown row with errors: {line}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"OK: {len(expected)} rows, no errors")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
