#!/usr/bin/env python3
"""sizing_test.py — the `deploy` test of the overlays' resources against smcryptd's sizing.

For the dev and prod overlays: renders the overlay with `kubectl kustomize`, takes the
smcryptd container's CPU and memory limits and args, gives smcryptd a fake cgroup tree
with those limits (--cgroup_root, mirroring this host's cgroup mounts) plus the overlay's
args, reads the values it chooses (--print_sizing) and asserts that the documented
worst-case bound of those values (docs/service.md, "Memory under overload"), for the
connections the overlay plans for (--sizing_connections, default 64), stays below the
memory limit, with the margin docs/deployment.md ("Sizing") promises. The same
overlay with the built-in --max_concurrent_streams=256 fails the check.

Usage: sizing_test.py --src ROOT --smcryptd PATH   (exit 77: kubectl absent)
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

ARGS = None
MIB = 1 << 20


def quantity(text):
    """A Kubernetes quantity ("1Gi", "512Mi", "2", "500m") as a number."""
    m = re.fullmatch(r"([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?", str(text))
    if not m:
        raise AssertionError(f"cannot read quantity {text!r}")
    scale = {None: 1, "m": 1e-3, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
             "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[m.group(2)]
    return float(m.group(1)) * scale


def render(overlay):
    out = subprocess.run(
        ["kubectl", "kustomize", os.path.join(ARGS.src, "deploy/k8s/overlays", overlay)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise AssertionError(f"kubectl kustomize {overlay} failed: {out.stderr}")
    (deployment,) = [o for o in yaml.safe_load_all(out.stdout)
                     if o and o["kind"] == "Deployment"]
    (c,) = [c for c in deployment["spec"]["template"]["spec"]["containers"]
            if c["name"] == "smcryptd"]
    return c


def fake_cgroup_tree(root, memory_bytes, cpus):
    """Mirrors this host's cgroup mounts under /sys/fs/cgroup below `root`, each with the
    limits at its top (smcryptd reads them from its own cgroup up to the mount root)."""
    quota = int(round(cpus * 100000))
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if "-" not in fields:
                continue
            dash = fields.index("-")
            fstype, point = fields[dash + 1], fields[4]
            if fstype not in ("cgroup", "cgroup2") or not point.startswith("/sys/fs/cgroup"):
                continue
            d = os.path.join(root, point[len("/sys/fs/cgroup"):].lstrip("/"))
            os.makedirs(d, exist_ok=True)
            files = {}
            if fstype == "cgroup2":
                try:
                    with open(os.path.join(point, "cgroup.controllers")) as c:
                        files["cgroup.controllers"] = c.read()
                except OSError:
                    files["cgroup.controllers"] = ""
                files["memory.max"] = f"{memory_bytes}\n"
                files["cpu.max"] = f"{quota} 100000\n"
            else:
                options = fields[dash + 3].split(",")
                if "memory" in options:
                    files["memory.limit_in_bytes"] = f"{memory_bytes}\n"
                if "cpu" in options:
                    files["cpu.cfs_quota_us"] = f"{quota}\n"
                    files["cpu.cfs_period_us"] = "100000\n"
            for name, text in files.items():
                with open(os.path.join(d, name), "w") as out:
                    out.write(text)


def print_sizing(root, args):
    out = subprocess.run([ARGS.smcryptd, f"--cgroup_root={root}", "--print_sizing", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise AssertionError(f"smcryptd --print_sizing failed: {out.stderr}")
    values, sources = {}, {}
    for line in out.stdout.splitlines():
        m = re.fullmatch(r"(\w+)=(.*?)(?: \((.+)\))?", line)
        if m:
            values[m.group(1)] = m.group(2)
            sources[m.group(1)] = m.group(3)
    return values, sources, out.stdout


def flag(args, name, default):
    for a in args:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return default


def bound(values, max_message_bytes):
    """docs/service.md's worst case, plus 32 MiB for the idle size."""
    v = {k: int(values[k]) for k in ("max_inflight_bytes", "grpc_memory_quota",
                                      "max_concurrent_streams", "public_key_cache_size",
                                      "sizing_connections")}
    largest_call = 3 * max_message_bytes + 2048 + 64 * MIB
    return (32 * MIB + max(v["max_inflight_bytes"], largest_call) + v["grpc_memory_quota"]
            + v["sizing_connections"] * v["max_concurrent_streams"] * 80 * 1024
            + 3 * v["public_key_cache_size"] * 120000 + 32 * MIB)


class OverlaySizingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def check(self, overlay, extra_args=()):
        c = render(overlay)
        limits = c["resources"]["limits"]
        memory = int(quantity(limits["memory"]))
        cpus = quantity(limits["cpu"])
        root = os.path.join(self.tmp, overlay)
        fake_cgroup_tree(root, memory, cpus)
        args = [a for a in c.get("args", []) if not a.startswith("--cgroup_root=")]
        args += list(extra_args)
        values, sources, text = print_sizing(root, args)
        self.assertEqual(int(values["memory_limit_bytes"]), memory, text)
        self.assertAlmostEqual(float(values["cpu_limit"]), cpus, places=6, msg=text)
        max_message = int(flag(args, "max_message_bytes", 4 * MIB))
        worst = bound(values, max_message)
        self.assertEqual(int(values["memory_bound_bytes"]), worst,
                         f"smcryptd's bound is the documented formula\n{text}")
        return memory, cpus, values, sources, worst, text

    def test_overlays_fit_their_memory_limit(self):
        for overlay in ("dev", "prod"):
            with self.subTest(overlay=overlay):
                memory, cpus, values, sources, worst, text = self.check(overlay)
                print(f"{overlay}: limits {memory // MIB} MiB, {cpus:g} CPUs; "
                      + ", ".join(f"{k}={values[k]} ({sources[k]})" for k in values
                                  if sources.get(k))
                      + f"; worst case {worst // MIB} MiB")
                # The margin of docs/deployment.md, "Sizing": a quarter of the limit.
                self.assertLessEqual(worst, memory * 3 // 4, text)
                self.assertNotIn("warning=", text)
                self.assertLessEqual(int(values["worker_threads"]), max(1, int(cpus)), text)
                self.assertGreaterEqual(int(values["worker_threads"]), 1, text)

    def test_the_check_fails_for_the_unsized_stream_limit(self):
        # prod with the built-in 256 streams per connection: 64 x 256 x 80 KiB alone is
        # 1.25 GiB, past its 1 GiB; smcryptd warns and the check above would fail.
        memory, _, _, sources, worst, text = self.check(
            "prod", ["--max_concurrent_streams=256"])
        self.assertEqual(sources["max_concurrent_streams"], "flag")
        self.assertGreater(worst, memory)
        self.assertIn("warning=the worst-case memory of these flags", text)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", required=True)
    parser.add_argument("--smcryptd", required=True)
    ARGS, rest = parser.parse_known_args()
    if shutil.which("kubectl") is None:
        print("SKIP: kubectl not found (Debian kubernetes-client; deploy/local/install-deps.sh)")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
