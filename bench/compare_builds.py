#!/usr/bin/env python3
"""compare_builds.py — throughput of two smcrypt-bench binaries, measured together.

Runs OLD and NEW in alternating rounds (ABBA order: old first in even rounds, new first in
odd ones), each run with Google Benchmark's random interleaving and repetitions, pinned to
one CPU. For every case both binaries have, prints the ratio NEW/OLD of the median
throughput (bytes/s, else items/s, else 1/time) per round, then the median of those ratios
and their range across rounds, and each binary's coefficient of variation across its
repetitions. A ratio is only meaningful beside its range: on a noisy machine a range that
contains 1.00 is no difference.

Usage:
  bench/compare_builds.py --old OLD_BIN --new NEW_BIN --filter REGEX
      [--rounds 3] [--repetitions 5] [--min_time 0.05] [--pin_cpu N] [--env K=V ...]
Output: a Markdown table on stdout; the raw Google Benchmark JSON of every run in --out_dir
(default: a temporary folder, named on stderr).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def throughput(entry):
    for key in ("bytes_per_second", "items_per_second"):
        if key in entry and entry[key] > 0:
            return entry[key]
    return 1.0 / entry["real_time"] if entry.get("real_time") else None


def run_once(binary, args, out_path, env):
    cmd = [binary, f"--benchmark_filter={args.filter}",
           "--benchmark_enable_random_interleaving=true",
           f"--benchmark_repetitions={args.repetitions}",
           f"--benchmark_min_time={args.min_time}",
           f"--benchmark_out={out_path}", "--benchmark_out_format=json"]
    if args.pin_cpu is not None:
        cmd.append(f"--pin_cpu={args.pin_cpu}")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    with open(out_path) as f:
        data = json.load(f)
    samples = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") != "iteration":
            continue
        v = throughput(b)
        if v is not None:
            samples.setdefault(b.get("run_name", b["name"]), []).append(v)
    return samples, data.get("context", {})


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def cv(values):
    if len(values) < 2:
        return 0.0
    return statistics.stdev(values) / statistics.mean(values)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", required=True)
    p.add_argument("--new", required=True)
    p.add_argument("--filter", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min_time", default="0.05")
    p.add_argument("--pin_cpu", type=int, default=os.cpu_count() - 1)
    p.add_argument("--env", action="append", default=[],
                   help="K=V added to both runs' environment (e.g. SMCRYPT_CPU_DISABLE=avx512)")
    p.add_argument("--out_dir")
    args = p.parse_args()

    env = dict(os.environ)
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="compare_builds.")
    os.makedirs(out_dir, exist_ok=True)
    print(f"compare_builds: raw JSON in {out_dir}", file=sys.stderr)

    medians = {"old": [], "new": []}  # per round: {case: median}
    cvs = {"old": {}, "new": {}}
    context = {}
    for r in range(args.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        for which in order:
            binary = args.old if which == "old" else args.new
            samples, context = run_once(binary, args, os.path.join(out_dir, f"{which}-{r}.json"), env)
            medians[which].append({c: statistics.median(v) for c, v in samples.items()})
            for c, v in samples.items():
                cvs[which].setdefault(c, []).append(cv(v))
            print(f"compare_builds: round {r + 1}/{args.rounds} {which} done", file=sys.stderr)

    cases = [c for c in medians["new"][0] if all(c in m for m in medians["old"] + medians["new"])]
    print(f"OLD {args.old}\nNEW {args.new}\n")
    print(f"CPU: {cpu_model()}, {context.get('num_cpus', '?')} CPUs at "
          f"{context.get('mhz_per_cpu', '?')} MHz; {args.rounds} rounds (ABBA), each run "
          f"{args.repetitions} repetitions of {args.min_time} s, random interleaving, "
          f"pinned to CPU {args.pin_cpu}. Ratio = NEW/OLD median throughput of the same round.\n")
    print("| case | old median | new median | ratio (median of rounds) | range | CV old | CV new |")
    print("|---|--:|--:|--:|---|--:|--:|")
    all_ratios = []
    for c in cases:
        ratios = [n[c] / o[c] for o, n in zip(medians["old"], medians["new"])]
        all_ratios.append(statistics.median(ratios))
        old_m = statistics.median([m[c] for m in medians["old"]])
        new_m = statistics.median([m[c] for m in medians["new"]])
        unit = 1e6 if old_m > 1e5 else 1.0
        print(f"| {c} | {old_m / unit:.1f} | {new_m / unit:.1f} | {statistics.median(ratios):.3f} | "
              f"{min(ratios):.3f}–{max(ratios):.3f} | {statistics.median(cvs['old'][c]) * 100:.1f} % | "
              f"{statistics.median(cvs['new'][c]) * 100:.1f} % |")
    if all_ratios:
        print(f"\n{len(all_ratios)} cases; median ratio {statistics.median(all_ratios):.3f}, "
              f"lowest {min(all_ratios):.3f}, highest {max(all_ratios):.3f}. Throughput columns in "
              f"MB/s (or M items/s) where above 10^5/s.")


if __name__ == "__main__":
    main()
