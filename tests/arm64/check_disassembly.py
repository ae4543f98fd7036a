"""Disassembly check of the arm64 kernel files for secret-indexed memory (label arm64, unit).

  check_disassembly.py --objdump aarch64-linux-gnu-objdump OBJECT...
  check_disassembly.py --objdump ... --self-test --cxx aarch64-linux-gnu-g++ --work DIR

What it checks, in every function of the given object files (the arm64 back ends:
crypto/CMakeLists.txt's list smcrypt_arm64_ct_checked, compiled at the build's -O level):

  * Every load and store addresses memory as base + immediate, pre/post-indexed by an
    immediate, or PC-relative, or base + a register that is a *counter*: a register the
    function writes only with immediates (mov #imm, mov xzr) and by adding or subtracting
    immediates to itself (add/sub xM, xM, #imm), i.e. one derived from no data at all.
    Any other register offset ([xN, xM], [xN, wM, uxtw #k], ...) is reported: in these
    kernels it would be a table lookup indexed by data, which is what they must not do
    (the S-box is TBL/TBX over registers, SM4E/SM3*/PMULL are register instructions).
  * Conditional branches (b.cond, cbz, cbnz, tbz, tbnz) are counted and listed per
    function; whether each depends on secret data is not decided here (the loop bounds
    are lengths, which are public), so they are reported, not failed.

This is weaker evidence than the x86 back ends' checks (valgrind memcheck with secrets
marked undefined, tests/ct; dudect timing, label slow): it inspects the code's shape, not
its behaviour, and it trusts the cores' timing of the instructions used: the Arm ARM
(DDI 0487, FEAT_DIT) makes them data-independent only with PSTATE.DIT set, which smcrypt
does not set (each kernel file's constant-time review says what it assumes).

--self-test compiles a function that indexes a table by its argument (and one that indexes
by a counter) with the same compiler and requires that the first is reported and the second
is not, so the check is shown to fail where it must.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

FUNC_RE = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSN_RE = re.compile(r"^\s*[0-9a-f]+:\s+([a-z][a-z0-9.]*)\s*(.*)$")
# A memory operand with a register offset: [xN, xM], [xN, xM, lsl #k], [xN, wM, uxtw #k].
REG_OFFSET_RE = re.compile(r"\[(x\d+|sp), ([xw]\d+)(?:, [a-z]+(?: #\d+)?)?\]")
MEMORY_OPS = re.compile(r"^(ld|st)[a-z0-9]*$")
COND_BRANCH = re.compile(r"^(b\.[a-z]+|cbz|cbnz|tbz|tbnz)$")
COUNTER_WRITE_RE = [
    re.compile(r"^mov\s+(?P<d>[xw]\d+), (#-?0x[0-9a-f]+|#-?\d+|[xw]zr)$"),
    re.compile(r"^movz?\s+(?P<d>[xw]\d+), #"),
    re.compile(r"^(add|sub)\s+(?P<d>[xw]\d+), (?P<s>[xw]\d+), #"),
    re.compile(r"^adrp?\s+(?P<d>x\d+), "),  # the address of a constant: no data either
]


def disassemble(objdump, obj):
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "-C", obj], check=True,
                         capture_output=True, text=True).stdout
    funcs = collections.OrderedDict()
    name = None
    for line in out.splitlines():
        m = FUNC_RE.match(line)
        if m:
            name = m.group(1)
            funcs[name] = []
            continue
        m = INSN_RE.match(line)
        if m and name is not None:
            funcs[name].append((m.group(1), m.group(2).split("//")[0].strip()))
    return funcs


def reg_num(reg):
    return int(reg[1:])


def written_register(op, args):
    """The general-purpose register an instruction writes first, or None."""
    if MEMORY_OPS.match(op) and op.startswith("st"):
        return None  # stores write memory (and maybe a base, checked separately)
    if op.startswith(("b", "cb", "tb", "ret", "cmp", "cmn", "tst", "nop", "prfm")):
        return None
    m = re.match(r"^([xw]\d+)\b", args)
    return m.group(1) if m else None


def second_written_register(op, args):
    """The second register a load pair writes (ldp, ldnp, ldaxp, ldxp), or None."""
    if op.startswith("ld") and op.endswith("p"):
        m = re.match(r"^[xw]\d+, ([xw]\d+)\b", args)
        return m.group(1) if m else None
    return None


def counters(insns):
    """Registers written only as counters (immediates, and ±immediate to themselves)."""
    written = collections.defaultdict(list)
    for op, args in insns:
        d = written_register(op, args)
        if d is not None:
            written[reg_num(d)].append((op, args))
        d2 = second_written_register(op, args)
        if d2 is not None:
            written[reg_num(d2)].append((op + "(2nd)", args))
        # Pre/post-indexed base updates ([xN, #i]! and [xN], #i) keep a counter a counter.
    good = set()
    for r, writes in written.items():
        ok = True
        for op, args in writes:
            text = f"{op} {args}"
            m = next((p.match(text) for p in COUNTER_WRITE_RE if p.match(text)), None)
            if m is None or ("s" in m.groupdict() and m.group("s") is not None
                             and reg_num(m.group("s")) != r):
                ok = False
                break
        if ok:
            good.add(r)
    return good, written


def check(funcs):
    findings, branches = [], {}
    for name, insns in funcs.items():
        good, written = counters(insns)
        n_branches = 0
        for op, args in insns:
            if COND_BRANCH.match(op):
                n_branches += 1
            if not MEMORY_OPS.match(op):
                continue
            m = REG_OFFSET_RE.search(args)
            if not m:
                continue
            off = reg_num(m.group(2))
            if off in good and off in written:
                continue
            findings.append(f"{name}: {op} {args}  (offset register {m.group(2)} is not a counter)")
        if n_branches:
            branches[name] = n_branches
    return findings, branches


def self_test(args):
    os.makedirs(args.work, exist_ok=True)
    src = os.path.join(args.work, "ct_self_test.cc")
    obj = os.path.join(args.work, "ct_self_test.o")
    with open(src, "w") as f:
        f.write("""
#include <cstddef>
#include <cstdint>
extern const uint8_t kTable[256];
// Indexed by data: must be reported.
uint8_t LookUp(const uint8_t* in) { return kTable[in[0]]; }
// Indexed by a counter only: must not be.
void Copy(const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(in[i] ^ 0x5a);
}
""")
    subprocess.run([args.cxx, "-O2", "-fno-tree-vectorize", "-c", src, "-o", obj], check=True)
    findings, _ = check(disassemble(args.objdump, obj))
    flagged = {f.split(":")[0] for f in findings}
    ok = True
    if not any(n.startswith("LookUp") for n in flagged):
        print("self-test FAILED: the data-indexed lookup was not reported", findings)
        ok = False
    if any(n.startswith("Copy") for n in flagged):
        print("self-test FAILED: the counter-indexed copy was reported", findings)
        ok = False
    if ok:
        print("self-test passed: the data-indexed load is reported, the counter-indexed one is not")
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--objdump", required=True)
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--cxx")
    p.add_argument("--work")
    p.add_argument("--sources", default="",
                   help="comma-separated source names: check only OBJECTs compiled from them")
    p.add_argument("objects", nargs="*")
    args = p.parse_args()
    if args.sources:
        wanted = set(args.sources.split(","))
        args.objects = [o for o in args.objects
                        if os.path.basename(o).rsplit(".", 1)[0] in wanted]
        found = {os.path.basename(o).rsplit(".", 1)[0] for o in args.objects}
        if found != wanted:
            print("object files missing for: " + ", ".join(sorted(wanted - found)))
            return 2
    if args.self_test:
        return self_test(args)
    if not args.objects:
        print("no object files given")
        return 2
    failed = False
    for obj in args.objects:
        funcs = disassemble(args.objdump, obj)
        findings, branches = check(funcs)
        n_insns = sum(len(i) for i in funcs.values())
        print(f"{os.path.basename(obj)}: {len(funcs)} functions, {n_insns} instructions, "
              f"{len(findings)} data-indexed memory accesses")
        for f in findings:
            print("  REPORTED " + f)
        for name, n in branches.items():
            print(f"  {n} conditional branches (not decided) in {name}")
        failed |= bool(findings) or not funcs
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
