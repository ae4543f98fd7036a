#!/usr/bin/env python3
"""check_dispatch.py — did dispatch pick the fastest smcrypt back end on this CPU?

Reads one or two Google Benchmark JSON outputs of smcrypt-bench (with the per-repetition
runs, i.e. without --benchmark_report_aggregates_only; best from randomly interleaved runs,
which is smcrypt-bench's default; `deploy/local/bench.sh --check-dispatch` makes two). For
every headline case that several smcrypt back ends ran, it compares the back end dispatch
chose (the JSON context's smcrypt_headline_dispatched, written by smcrypt-bench) with the
fastest back end of that run (highest median items/s):

  ratio = dispatched / fastest: the ratio of the medians, and the range (min–max) of the
          per-repetition ratios, repetition k of one against repetition k of the other
          (each case's repetitions in the order they ran).

A case passes a run when the range reaches 1.0 (max >= 1.0: in some repetition pair the
dispatched back end was at least as fast) or the median ratio is >= 0.95 (within 5 %); it
passes when it passes every run given. Prints a table; exits 1 when a case fails, 2 when
the input cannot be judged.

Usage: bench/check_dispatch.py RUN.json [RUN2.json] [--min_ratio 0.95]
"""
import argparse
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        data = json.load(f)
    context = data.get("context", {})
    if "smcrypt_headline_dispatched" not in context:
        sys.exit(f"check_dispatch: {path}: the context lacks smcrypt_headline_dispatched "
                 "(JSON from an older smcrypt-bench?)")
    dispatched = {}
    for item in filter(None, context["smcrypt_headline_dispatched"].split(",")):
        case, _, impl = item.partition("=")
        dispatched[case] = impl
    # case "alg/op/bytes" -> impl -> {repetition_index: items/s}
    reps = {}
    aggregates = 0
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            aggregates += 1
            continue
        if b.get("error_occurred") or "items_per_second" not in b:
            continue
        name = b.get("run_name", b["name"])
        parts = name.split("/")
        if len(parts) != 4 or not parts[0].startswith("smcrypt."):
            continue
        case = "/".join(parts[1:])
        reps.setdefault(case, {}).setdefault(parts[0], {})[b.get("repetition_index", 0)] = \
            b["items_per_second"]
    if not reps and aggregates:
        sys.exit(f"check_dispatch: {path} has aggregates only; run without "
                 "--benchmark_report_aggregates_only")
    if context.get("smcrypt_random_interleaving") != "true":
        print(f"check_dispatch: warning: {path} was not randomly interleaved; its ratios "
              "compare cases that ran at different times", file=sys.stderr)
    return dispatched, reps


def compare(dispatched_impl, by_impl):
    """Returns (fastest impl, median ratio, lo, hi, repetition pairs) or None."""
    if dispatched_impl not in by_impl or len(by_impl) < 2:
        return None
    medians = {impl: statistics.median(v.values()) for impl, v in by_impl.items()}
    fastest = max(medians, key=medians.get)
    d, f = by_impl[dispatched_impl], by_impl[fastest]
    ratios = [d[k] / f[k] for k in sorted(set(d) & set(f)) if f[k] > 0]
    ratio = medians[dispatched_impl] / medians[fastest]
    lo, hi = (min(ratios), max(ratios)) if ratios else (ratio, ratio)
    return fastest, ratio, lo, hi, len(ratios)


def short(impl):
    return impl[len("smcrypt."):] if impl.startswith("smcrypt.") else impl


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", metavar="RUN.json")
    p.add_argument("--min_ratio", type=float, default=0.95,
                   help="median ratio dispatched/fastest that passes without a range "
                        "reaching 1 (default 0.95)")
    args = p.parse_args()
    if len(args.runs) > 2:
        p.error("one or two runs")
    runs = [load(path) for path in args.runs]

    cases = []
    for dispatched, _ in runs:
        cases += [c for c in dispatched if c not in cases]
    header = ["case", "dispatched"]
    for i in range(len(runs)):
        header += [f"run {i + 1}: fastest", "dispatched/fastest", "reps"]
    header.append("verdict")
    rows = [header]
    failed, judged, skipped = [], 0, []
    for case in cases:
        results, impl = [], None
        for dispatched, reps in runs:
            impl = dispatched.get(case, impl)
            results.append(compare(dispatched.get(case), reps.get(case, {})))
        if all(r is None for r in results):
            skipped.append(case)
            continue
        judged += 1
        ok = True
        row = [case, short(impl)]
        for r in results:
            if r is None:
                row += ["-", "not measured", "-"]
                continue
            fastest, ratio, lo, hi, pairs = r
            passes = hi >= 1.0 or ratio >= args.min_ratio
            ok &= passes
            row += [short(fastest) + ("" if passes else " !"),
                    f"{ratio:.3f} ({lo:.3f}–{hi:.3f})", str(pairs)]
        row.append("ok" if ok else "FAIL")
        if not ok:
            failed.append(case)
        rows.append(row)

    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    print(f"Dispatch check: per headline case, the dispatched smcrypt back end against the "
          f"fastest one of each run; ratio = dispatched/fastest, median (min–max over "
          f"repetition pairs). A case passes when in every run the range reaches 1.000 or "
          f"the median is >= {args.min_ratio:.2f}.\n")
    for n, r in enumerate(rows):
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if n == 0:
            print("-" * (sum(widths) + 2 * (len(widths) - 1)))
    if skipped:
        print(f"\nNot compared (one back end, or the dispatched one not measured): "
              f"{', '.join(skipped)}")
    if judged == 0:
        print("\ncheck_dispatch: no case with several smcrypt back ends in the input")
        return 2
    print(f"\n{judged} cases, {len(failed)} failed" +
          (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
