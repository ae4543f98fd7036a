"""Disassembly check of the arm64 kernel files for data-indexed memory (label arm64, unit).

  check_disassembly.py --objdump aarch64-linux-gnu-objdump [--sources a.cc,b.cc] OBJECT...
  check_disassembly.py --objdump ... --self-test --cxx aarch64-linux-gnu-g++ --work DIR

What it checks, in every function of the given object files (the arm64 back ends:
crypto/CMakeLists.txt's list smcrypt_arm64_ct_checked):

  * No load, store or prefetch addresses memory through a register that may hold data:
    neither the base, nor a register offset, nor a register post-increment, nor vector
    offsets (an SVE gather). "May hold data" is a forward data-flow over the function's
    branches: a general-purpose register holds data after a narrow load from memory other
    than the stack (ldrb, ldrh, ldr w<n>, ldrsw, ...), a move from a vector register, a
    conditional select, or any operation with a data operand, until it is overwritten
    with something that is not. In these kernels the secrets live in vector registers,
    so a data-derived general-purpose register used as an address would be a table
    lookup indexed by data, which is what they must not do (the S-box is TBL/TBX over
    registers; SM4E, SM3* and PMULL are register instructions).
  * Conditional branches are counted and listed per function; whether one depends on
    data is not decided (the kernels branch on block counts), so they are reported, not
    failed.

Assumptions, which the kernels' contracts make true and which this check does not verify:
the functions' arguments are pointers and lengths (a secret passed by value in x0–x7
would not be followed), 64-bit loads into x<n> load pointers or lengths, and a call's
results are public (the kernels call only their own lambdas, memcpy and SecureZero).

This is weaker evidence than the x86 back ends' checks (valgrind memcheck with secrets
marked undefined, tests/ct; dudect timing, label slow): it inspects the code's shape, not
its behaviour, and it trusts the cores' timing of the instructions used: the Arm ARM
(DDI 0487, FEAT_DIT) makes them data-independent only with PSTATE.DIT set, which smcrypt
does not set (each kernel file's constant-time review says what it assumes).

--self-test compiles functions that index tables by data in the ways compilers emit
(register offset, a base computed from data, 16-byte entries, lane and broadcast loads,
a prefetch) and functions that address memory only by pointers and counters (forward,
reversed, strided, with a register reused), with the same compiler at -O0, -O2 and -Os,
and requires that every one of the first kind is reported and none of the second.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

FUNC_RE = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSN_RE = re.compile(r"^\s*([0-9a-f]+):\s+([a-z][a-z0-9.]*)\s*(.*)$")
GPR_RE = re.compile(r"\b([xw])(\d+)\b")
# The bracketed address of a memory operand, and a register post-increment after it.
ADDR_RE = re.compile(r"\[((?:x\d+|sp)(?:,[^\]]*)?)\](!?)(?:,\s*([xw]\d+|#-?\w+))?")
COND_BRANCH = re.compile(r"^(b\.[a-z]+|cbz|cbnz|tbz|tbnz)$")
BRANCHES = re.compile(r"^(b|b\.[a-z]+|bl|blr|br|ret|cbz|cbnz|tbz|tbnz)$")
CALLS = re.compile(r"^(bl|blr)$")
# Instructions that read or write memory through an address operand.
MEMORY = re.compile(r"^(ld|st|prfm|prfum|cas|swp)")
# Writes a general-purpose register from a vector register: data.
FROM_VECTOR = re.compile(r"^(umov|smov|fmov|mov)$")
CONDITIONAL_SELECT = re.compile(r"^(csel|csinc|csinv|csneg|cset|csetm|cinc|cinv|cneg)$")
COMPARES = re.compile(r"^(cmp|cmn|tst|ccmp|ccmn|fcmp|fcmpe|nop|hint|dmb|dsb|isb)$")


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
            funcs[name].append((int(m.group(1), 16), m.group(2), m.group(3).split("//")[0].strip()))
    return funcs


def gprs(text):
    """General-purpose register numbers named in `text` (sp, xzr and wzr excluded)."""
    return [int(n) for _, n in GPR_RE.findall(text) if int(n) < 31]


def address(args):
    """(base, [offset registers], z-register offset?, post-increment register) of a memory operand."""
    m = ADDR_RE.search(args)
    if not m:
        return None
    parts = [p.strip() for p in m.group(1).split(",")]
    base = parts[0]
    offsets = [p for p in parts[1:] if re.match(r"^[xw]\d+$", p)]
    zoff = any(re.match(r"^z\d+", p) for p in parts[1:])
    post = m.group(3) if m.group(3) and re.match(r"^[xw]\d+$", m.group(3)) else None
    return base, offsets, zoff, post


def writes(op, args):
    """[(register, source registers or None for data, public?)] the instruction writes.

    Source None means the value comes from memory or a vector register (data, unless the
    load reads the stack, which holds only spilled registers of this function)."""
    if BRANCHES.match(op):
        return []  # a call's results are taken as public (see the module's assumptions)
    out = []
    if MEMORY.match(op):
        addr = address(args)
        dests = args.split("[")[0]
        if op.startswith("ld") or op.startswith(("cas", "swp")):
            from_stack = addr is not None and addr[0] == "sp"
            for kind, n in GPR_RE.findall(dests):
                if int(n) >= 31:
                    continue
                # A 64-bit load into x<n> (ldr, ldp, ldur) is a pointer or a length; a
                # narrower one (ldrb, ldrh, ldrsw, ldr w<n>, ...) is data.
                wide = kind == "x" and op in ("ldr", "ldp", "ldur", "ldnp", "ldar", "ldapr")
                out.append((int(n), [] if from_stack or wide else None))
        if addr is not None and (addr[1] == [] and ("!" in args or addr[3] is not None or
                                                    re.search(r"\],\s*#", args))):
            base = addr[0]
            if base != "sp":
                srcs = [int(base[1:])] + ([int(addr[3][1:])] if addr[3] else [])
                out.append((int(base[1:]), srcs))
        return out
    if COMPARES.match(op):
        return []
    regs = GPR_RE.findall(args)
    if not regs or not args.startswith(regs[0][0] + regs[0][1]):
        return []  # the first operand is not a general-purpose register
    dest = int(regs[0][1])
    if dest >= 31:
        return []
    rest = args.split(",", 1)[1] if "," in args else ""
    if FROM_VECTOR.match(op) and re.search(r"\b(v\d+|[dsqhb]\d+)\b", rest):
        return [(dest, None)]
    if op in ("adr", "adrp"):
        return [(dest, [])]
    if CONDITIONAL_SELECT.match(op):
        return [(dest, None)]  # chosen by flags, which may come from data
    srcs = gprs(rest)
    if op in ("movk", "bfi", "bfxil", "bfm"):
        srcs.append(dest)  # they keep the destination's other bits
    return [(dest, srcs)]


def successors(insns, i):
    """Indices of the instructions that may run after insns[i]."""
    addr, op, args = insns[i]
    nxt = [i + 1] if i + 1 < len(insns) else []
    if op in ("ret", "br") or (op == "b" and not args):
        return []
    if op in ("b",) or COND_BRANCH.match(op):
        m = re.search(r"\b([0-9a-f]+) <", args)
        target = None
        if m:
            t = int(m.group(1), 16)
            target = next((j for j, ins in enumerate(insns) if ins[0] == t), None)
        out = [] if op == "b" else list(nxt)
        if target is not None:
            out.append(target)
        elif op == "b":
            return []  # a tail call out of the function
        return out
    return nxt


SIZES = {"x": 8, "w": 4, "q": 16, "d": 8, "s": 4, "h": 2, "b": 1}


def stack_slot(op, args):
    """(offset from sp, [(kind, GPR number or None, bytes)]) of a load or store of whole
    registers at [sp, #imm] (the spills and reloads of -O0 code), or None."""
    if not (op.startswith(("ldr", "str", "ldp", "stp", "ldur", "stur"))):
        return None
    m = re.search(r"\[sp(?:, #(-?(?:0x)?[0-9a-f]+))?\]", args)
    if not m:
        return None
    off = int(m.group(1), 0) if m.group(1) else 0
    if "]!" in args or re.search(r"\],\s*#", args):
        off = 0 if "]!" not in args else off  # push/pop: the slot is at the new sp
    regs = re.findall(r"\b([xwqdshb])(\d+)\b", args.split("[")[0])
    if op in ("strb", "ldrb", "ldrsb"):
        sizes = [1] * len(regs)
    elif op in ("strh", "ldrh", "ldrsh"):
        sizes = [2] * len(regs)
    elif op == "ldrsw":
        sizes = [4] * len(regs)
    else:
        sizes = [SIZES[k] for k, _ in regs]
    return off, [(k, int(n) if k in "xw" and int(n) < 31 else None, sz)
                 for (k, n), sz in zip(regs, sizes)]


def data_before(insns):
    """For each instruction, the registers that may hold data just before it runs.

    A forward data-flow over the function's branches, to a fixed point. A register holds
    data after a narrow load from memory other than the stack (ldrb, ldrh, ldr w<n>, ...),
    a move from a vector register, a conditional select (its flags may come from data), or
    an operation with a data operand. Registers that hold data nowhere are public; at entry
    every register is (the arguments are pointers and lengths, by the kernels' contract),
    and so are a call's results and a 64-bit load's (pointers). Stack slots are followed
    too: a reload holds data when what was spilled there did (vector registers always
    do), so -O0 code, which spills every value, is checked as well as optimised code."""
    n = len(insns)
    state = [None] * n
    if n == 0:
        return state
    state[0] = (frozenset(), frozenset())
    work = [0]
    while work:
        i = work.pop()
        regs, stack = set(state[i][0]), set(state[i][1])
        addr, op, args = insns[i]
        if CALLS.match(op):
            regs -= set(range(19))  # x0–x18: the callee's results and clobbers
        slot = stack_slot(op, args)
        if slot is not None and op.startswith("st"):
            off, items = slot
            for kind, num, size in items:
                held = kind in "qdsbhv" or (num is not None and num in regs)
                span = set(range(off, off + size))
                stack = (stack | span) if held else (stack - span)
                off += size
        for reg, srcs in writes(op, args):
            if slot is not None and op.startswith("ld"):
                off, items = slot
                for kind, num, size in items:
                    if num == reg:
                        srcs = None if set(range(off, off + size)) & stack else []
                    off += size
            if srcs is None or any(r in regs for r in srcs):
                regs.add(reg)
            else:
                regs.discard(reg)
        out = (frozenset(regs), frozenset(stack))
        for j in successors(insns, i):
            merged = out if state[j] is None else (state[j][0] | out[0], state[j][1] | out[1])
            if merged != state[j]:
                state[j] = merged
                work.append(j)
    return [None if st is None else st[0] for st in state]
    return state


def check(funcs):
    findings, branches = [], {}
    for name, insns in funcs.items():
        before = data_before(insns)
        n_branches = 0
        for i, (_, op, args) in enumerate(insns):
            data = before[i] or frozenset()
            if COND_BRANCH.match(op):
                n_branches += 1
            if not MEMORY.match(op):
                continue
            addr = address(args)
            if addr is None:
                continue
            base, offsets, zoff, post = addr
            why = []
            if base != "sp" and re.match(r"^x\d+$", base) and int(base[1:]) in data:
                why.append(f"base {base}")
            why += [f"offset {o}" for o in offsets if int(o[1:]) in data]
            if zoff:
                why.append("vector offsets (a gather)")
            if post and int(post[1:]) in data:
                why.append(f"post-increment {post}")
            if why:
                findings.append(f"{name}: {op} {args}  ({', '.join(why)} may hold data)")
        if n_branches:
            branches[name] = n_branches
    return findings, branches


SELF_TEST_SOURCE = """
#include <arm_neon.h>
#include <cstddef>
#include <cstdint>
extern const uint8_t kTable[256];
extern const uint32_t kWords[256];
struct Entry { uint32_t a, b; };
extern const Entry kEntries[256];
extern const uint64_t kWide[256][2];
// Indexed by data: each must be reported.
uint8_t Report_ByteIndex(const uint8_t* in) { return kTable[in[0]]; }
uint32_t Report_ScaledIndex(const uint8_t* in) { return kWords[in[1]]; }
uint32_t Report_BaseFromData(const uint8_t* in) { return kEntries[in[0]].b; }
uint64_t Report_WideEntry(const uint8_t* in) { return kWide[in[0]][0] ^ kWide[in[0]][1]; }
uint8x16_t Report_LaneLoad(const uint8_t* in, uint8x16_t v) {
  return vld1q_lane_u8(kTable + in[3], v, 5);
}
uint32x4_t Report_Broadcast(const uint8_t* in) { return vld1q_dup_u32(kWords + in[0]); }
void Report_Prefetch(const uint8_t* in) { __builtin_prefetch(kTable + in[0]); }
uint8_t Report_FromVector(uint8x16_t v) { return kTable[vgetq_lane_u8(v, 3)]; }
// Addressed by pointers and counters only: none may be reported.
void Pass_Copy(const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(in[i] ^ 0x5a);
}
void Pass_Reverse(const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[n - 1 - i] = in[i];
}
void Pass_Stride(const uint32_t* in, uint32_t* out, size_t n, size_t stride) {
  for (size_t i = 0; i < n; ++i) out[i] = in[i * stride] + kWords[i & 255];
}
uint32_t Pass_RegisterReused(const uint32_t* in, size_t n) {
  uint32_t acc = 0;
  for (size_t i = 0; i < n; ++i) acc += in[i];
  return acc + in[n / 2];
}
"""


def self_test(args):
    os.makedirs(args.work, exist_ok=True)
    src = os.path.join(args.work, "ct_self_test.cc")
    with open(src, "w") as f:
        f.write(SELF_TEST_SOURCE)
    want = set(re.findall(r"\b(Report_\w+)\(", SELF_TEST_SOURCE))
    ok = True
    for level in ("-O0", "-O2", "-Os"):
        obj = os.path.join(args.work, f"ct_self_test{level}.o")
        subprocess.run([args.cxx, level, "-c", src, "-o", obj], check=True)
        findings, _ = check(disassemble(args.objdump, obj))
        flagged = {re.match(r"(\w+)", f).group(1) for f in findings}
        missed = want - flagged
        wrong = {n for n in flagged if n.startswith("Pass_")}
        if missed:
            print(f"self-test FAILED at {level}: not reported: {sorted(missed)}")
            ok = False
        if wrong:
            print(f"self-test FAILED at {level}: reported wrongly: {sorted(wrong)}")
            for f in findings:
                print("  " + f)
            ok = False
    if ok:
        print(f"self-test passed at -O0, -O2, -Os: all {len(want)} data-indexed functions "
              "reported, no pointer- or counter-addressed one")
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
