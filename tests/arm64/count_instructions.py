"""Instructions executed per block by each arm64 back end, counted under qemu-user.

  count_instructions.py --emulator "qemu-aarch64-static -cpu max -L /" \
      --driver build-arm64/tests/arm64/kernel_insns [--quick] [--markdown]

Runs kernel_insns (one back end's entry, once) at two sizes under qemu with -singlestep
and -d exec,nochain, so qemu logs one line per executed instruction, and reports
(count(n2) - count(n1)) / (n2 - n1): the steady-state instructions per block (per
operation for SM2), start-up and tails cancelled. Only smcrypt's own code is counted:
-dfilter limits the log to the driver's text (`kernel_insns text-range`), which holds the
statically linked smcrypt libraries, so libc's memset of the test buffers and OpenSSL's
RNG (SM2's nonce) are left out. The count is exact for the code as
compiled; it is not a timing (qemu timings mean nothing), and how many cycles an
instruction takes is the CPU's business (bench/ARM64.md turns the counts
into estimates, marked as such).

--quick counts a few cases and checks their order (ce < neon < generic for SM4 ECB, pmull
< generic for GHASH, ce < generic and mb4_neon per block < generic for SM3): the smoke
test run by ctest (label arm64). "batch" runs one message per lane (n/lanes blocks each),
so its figure is per block of one message.
"""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile

# (algorithm, back end, operation, n1, n2, bytes per unit or 0 for "per operation").
# n1 and n2 are multiples of each back end's batch (generic SM4: 16 blocks), so no
# partial batch is counted.
CASES = [
    ("sm4", "ce", "ecb", 64, 128, 16),
    ("sm4", "ce", "ctr32", 64, 128, 16),
    ("sm4", "ce", "cbc_dec", 64, 128, 16),
    ("sm4", "ce", "cbc_enc", 64, 128, 16),
    ("sm4", "neon", "ecb", 64, 128, 16),
    ("sm4", "neon", "ctr32", 64, 128, 16),
    ("sm4", "neon", "cbc_dec", 64, 128, 16),
    ("sm4", "neon", "cbc_enc", 64, 128, 16),
    ("sm4", "generic", "ecb", 64, 128, 16),
    ("sm4", "generic", "ctr32", 64, 128, 16),
    ("sm4", "generic", "cbc_enc", 16, 32, 16),
    ("ghash", "pmull", "update", 64, 128, 16),
    ("ghash", "generic", "update", 64, 128, 16),
    ("sm3", "ce", "compress", 16, 32, 64),
    ("sm3", "generic", "compress", 16, 32, 64),
    ("sm3", "mb4_neon", "batch", 16, 32, 64),
    ("sm2", "generic", "sign", 1, 3, 0),
    ("sm2", "generic", "verify", 1, 3, 0),
]
QUICK = [c for c in CASES if c[2] in ("ecb", "update", "compress", "batch") and c[1] != "generic"] + [
    ("sm4", "generic", "ecb", 32, 64, 16), ("ghash", "generic", "update", 8, 16, 16),
    ("sm3", "generic", "compress", 2, 4, 64)]


class Skip(Exception):
    pass


def text_range(args):
    cmd = shlex.split(args.emulator) + [args.driver, "text-range"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    start, end = (int(x, 16) for x in r.stdout.split())
    return f"0x{start:x}+0x{end - start:x}"


def count(args, alg, kernel, op, n):
    with tempfile.NamedTemporaryFile(prefix="qemu-exec-", suffix=".log", delete=False) as f:
        log = f.name
    try:
        cmd = shlex.split(args.emulator) + ["-singlestep", "-d", "exec,nochain", "-dfilter",
                                            args.range, "-D", log,
                                            args.driver, alg, kernel, op, str(n)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode == 3:
            raise Skip(r.stderr.strip())
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr}")
        with open(log, "rb") as f:
            return sum(1 for line in f if line.startswith(b"Trace "))
    finally:
        if os.path.exists(log):
            os.unlink(log)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--emulator", required=True)
    p.add_argument("--driver", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args()
    if not shlex.split(args.emulator) or not os.access(args.driver, os.X_OK):
        print("count_instructions: --emulator must name a program and --driver an executable")
        return 2
    try:
        args.range = text_range(args)
    except (RuntimeError, ValueError, OSError) as e:
        print(f"count_instructions: {e}")
        return 1
    results = {}
    rows = []
    for alg, kernel, op, n1, n2, unit in (QUICK if args.quick else CASES):
        try:
            c1, c2 = count(args, alg, kernel, op, n1), count(args, alg, kernel, op, n2)
        except Skip as e:
            print(f"skipped {alg} {kernel} {op}: {e}", file=sys.stderr)
            continue
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            print(f"count_instructions: {e}")
            return 1
        per = (c2 - c1) / (n2 - n1)
        results[(alg, kernel, op)] = per
        per_byte = f"{per / unit:.2f}" if unit else "—"
        what = "operation" if unit == 0 else f"{unit}-byte block"
        rows.append((f"{alg.upper()} {op}", kernel, f"{per:,.1f}", what, per_byte))
    if args.markdown:
        print("| case | back end | instructions | per | per byte |")
        print("|---|---|--:|---|--:|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        for r in rows:
            print(f"{r[0]:<18} {r[1]:<8} {r[2]:>12} per {r[3]:<16} {r[4]:>6} per byte")
    if args.quick:
        order = [(("sm4", "ce", "ecb"), ("sm4", "neon", "ecb")),
                 (("sm4", "neon", "ecb"), ("sm4", "generic", "ecb")),
                 (("ghash", "pmull", "update"), ("ghash", "generic", "update")),
                 (("sm3", "ce", "compress"), ("sm3", "generic", "compress")),
                 (("sm3", "mb4_neon", "batch"), ("sm3", "generic", "compress"))]
        missing = [k for pair in order for k in pair if k not in results]
        if missing:
            print(f"FAILED: not counted (this CPU lacks their features?): {missing}")
            return 1
        bad = [(a, b) for a, b in order if not 0 < results[a] < results[b]]
        for a, b in bad:
            print(f"FAILED: {a} ({results[a]:.1f}) should take fewer instructions than "
                  f"{b} ({results[b]:.1f})")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
