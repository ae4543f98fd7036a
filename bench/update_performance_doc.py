#!/usr/bin/env python3
"""update_performance_doc.py — writes one run's tables into bench/PERFORMANCE.md and the
headline of docs/performance.md (called by `deploy/local/bench.sh --update-doc`).

bench/PERFORMANCE.md holds one section per CPU, keyed by lscpu's model name with its
family and model ("AMD EPYC (family 25, model 17)"), each section the full summary of
the latest run on that CPU with its date, dispatched back ends and command. Rerunning on
a CPU replaces only that CPU's section; the others are kept, and the index at the top
lists them all. The part of docs/performance.md between <!-- performance:begin --> and
<!-- performance:end --> gets the headline of this run's CPU and says which CPU it is; it
names bench/PERFORMANCE.md as code, not as a link, since the documentation site (MkDocs,
deploy/local/docs.sh) serves docs/ only and fails on a link outside it.

Usage: update_performance_doc.py --doc bench/PERFORMANCE.md --page docs/performance.md
           --cpu KEY --date YYYY-MM-DD --dispatched SM2=..,SM3=..,SM4=..
           --provenance TEXT --summary bench-summary.txt --headline bench-headline.txt
"""
import argparse
import json
import os
import re
import sys

TITLE = "# smcrypt performance"
INTRO = (
    "Do not edit by hand: `deploy/local/bench.sh --update-doc` measures on the machine it "
    "runs on and replaces that CPU's section below, keeping the other CPUs' sections. "
    "Figures are medians over randomly interleaved repetitions with their coefficient of "
    "variation (±); ratios are ratios of medians with the range (min–max) of the "
    "per-repetition ratios. How to read them: [README.md](README.md).")
INDEX_BEGIN, INDEX_END = "<!-- cpu-index:begin -->", "<!-- cpu-index:end -->"
# A section starts with <!-- cpu {"key": ..., "date": ..., "dispatched": ...} --> and ends
# with <!-- cpu-end -->.
SECTION = re.compile(r"<!-- cpu (\{.*?\}) -->\n(.*?)<!-- cpu-end -->\n?", re.S)
PAGE_BEGIN, PAGE_END = "<!-- performance:begin -->", "<!-- performance:end -->"


def anchor(heading):
    """GitHub's anchor of a Markdown heading."""
    a = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return a.replace(" ", "-")


def read_sections(path):
    if not os.path.exists(path):
        return []
    text = open(path).read()
    sections = [(json.loads(m.group(1)), m.group(0)) for m in SECTION.finditer(text)]
    if not sections and text.strip():
        sys.exit(f"update_performance_doc: {path} has no per-CPU sections (<!-- cpu {{...}} -->); "
                 "move its tables into one by hand once, or remove the file")
    return sections


def section(meta, provenance, summary):
    body = summary.rstrip("\n")
    return (f"<!-- cpu {json.dumps(meta, ensure_ascii=False)} -->\n"
            f"## {meta['key']}\n\n{provenance}\n\n```\n{body}\n```\n<!-- cpu-end -->\n")


def write_doc(path, sections):
    index = [f"- [{m['key']}](#{anchor(m['key'])}): {m['date']}; dispatched "
             f"{m['dispatched'].replace(',', ', ')}" for m, _ in sections]
    with open(path, "w") as f:
        f.write(f"{TITLE}\n\n{INTRO}\n\nCPUs measured:\n\n{INDEX_BEGIN}\n" + "\n".join(index) +
                f"\n{INDEX_END}\n")
        for _, text in sections:
            f.write("\n" + text)


def update_page(path, cpu, others, provenance, headline):
    text = open(path).read()
    if PAGE_BEGIN not in text or PAGE_END not in text:
        sys.exit(f"update_performance_doc: {path} lacks the {PAGE_BEGIN} / {PAGE_END} markers")
    head, rest = text.split(PAGE_BEGIN, 1)
    _, tail = rest.split(PAGE_END, 1)
    where = (f"The other CPUs measured ({', '.join(others)}) and every family, size and peer: "
             if others else "Every family, every size and every peer: ")
    body = (f"{PAGE_BEGIN}\nHeadline on **{cpu}**. {provenance}\n\n```\n{headline.rstrip()}\n"
            f"```\n\n{where}`bench/PERFORMANCE.md`.\n{PAGE_END}")
    with open(path, "w") as f:
        f.write(head + body + tail)


def main():
    p = argparse.ArgumentParser(description=" ".join(__doc__.splitlines()[:2]))
    p.add_argument("--doc", required=True, help="bench/PERFORMANCE.md: one section per CPU")
    p.add_argument("--page", required=True,
                   help="docs/performance.md: the headline between its performance markers")
    for flag in ("cpu", "date", "dispatched", "provenance", "summary", "headline"):
        p.add_argument("--" + flag, required=True)
    args = p.parse_args()
    meta = {"key": args.cpu, "date": args.date, "dispatched": args.dispatched}
    new = section(meta, args.provenance, open(args.summary).read())
    sections = read_sections(args.doc)
    for i, (m, _) in enumerate(sections):
        if m["key"] == args.cpu:
            sections[i] = (meta, new)
            break
    else:
        sections.append((meta, new))
    write_doc(args.doc, sections)
    print(f"update_performance_doc: wrote the section \"{args.cpu}\" of {args.doc} "
          f"({len(sections)} CPU(s))", file=sys.stderr)
    others = [m["key"] for m, _ in sections if m["key"] != args.cpu]
    update_page(args.page, args.cpu, others, args.provenance, open(args.headline).read())
    print(f"update_performance_doc: updated the headline of {args.page}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
