#!/usr/bin/env python3
"""size_check.py — the size rules of docs/contributing.md ("House style"): files over a line limit
and function definitions over a line limit (exit 1 when any).

A function's length is from the first line of its declarator (the line holding the
name's opening parenthesis, or the template line before it) to the line of its closing
brace, inclusive. Brace counting on source with comments, string/char literals and
preprocessor lines blanked; namespaces, classes, structs and extern "C" blocks are
descended into, function bodies (including lambdas inside them) count as one function.
"""
import argparse
import os
import re
import sys

EXTS = ('.cc', '.h', '.inc', '.cpp', '.hpp', '.c')


def blank(src):
    """Replaces comments, literals and preprocessor lines by spaces (keeps newlines)."""
    out = []
    i, n = 0, len(src)
    line_start = True
    while i < n:
        c = src[i]
        if line_start and c in ' \t':
            out.append(c); i += 1; continue
        if line_start and c == '#':
            # preprocessor line, with continuations
            while i < n and src[i] != '\n':
                if src[i] == '\\' and i + 1 < n and src[i + 1] == '\n':
                    out.append(' \n'); i += 2; continue
                out.append(' '); i += 1
            continue
        line_start = False
        if c == '\n':
            out.append(c); i += 1; line_start = True; continue
        if src.startswith('//', i):
            while i < n and src[i] != '\n':
                out.append(' '); i += 1
            continue
        if src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(''.join('\n' if ch == '\n' else ' ' for ch in src[i:j])); i = j
            continue
        m = re.match(r'R"([^(]*)\(', src[i:i + 20])
        if m and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == '_')):
            end = ')' + m.group(1) + '"'
            j = src.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append('""' + ''.join('\n' if ch == '\n' else ' ' for ch in src[i + 2:j])); i = j
            continue
        if c in '"\'':
            # digit separators (1'000) are not char literals
            if c == "'" and i > 0 and src[i - 1].isalnum() and i + 1 < n and src[i + 1].isalnum() \
                    and re.match(r'[0-9a-fA-FxXbB\']*$', _num_before(src, i)):
                out.append(' '); i += 1; continue
            q = c; j = i + 1
            while j < n and src[j] != q and src[j] != '\n':
                j += 2 if src[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(q + ' ' * (j - i - 2) + q); i = j
            continue
        out.append(c); i += 1
    return ''.join(out)


def _num_before(src, i):
    j = i
    while j > 0 and (src[j - 1].isalnum() or src[j - 1] in "'_"):
        j -= 1
    return src[j:i] if src[j:i][:1].isdigit() else 'x!'


SCOPE_RE = re.compile(r'^\s*(template\s*<.*>\s*)?(inline\s+)?(namespace|class|struct|union|enum|extern\s+"")\b', re.S)


def functions(text):
    """Yields (name, first_line, last_line) of function definitions in blanked text."""
    lines_at = []  # offset -> line via bisect
    import bisect
    nl = [i for i, ch in enumerate(text) if ch == '\n']

    def line(off):
        return bisect.bisect_left(nl, off) + 1

    def scan_scope(start, end):
        """Scans a namespace/class scope body text[start:end]."""
        i = start
        hdr = start
        while i < end:
            ch = text[i]
            if ch in ';':
                hdr = i + 1
            elif ch == '}':
                hdr = i + 1
            elif ch == '{':
                close = match(i)
                header = text[hdr:i]
                h = header.strip()
                if SCOPE_RE.match(h) and '(' not in h.split('{')[0].split(':')[0] or h.startswith('extern ""') \
                        or re.match(r'^(inline\s+)?namespace\b', h):
                    if re.match(r'^\s*(template\s*<.*>\s*)?enum\b', h):
                        pass
                    else:
                        scan_scope(i + 1, close)
                    i = close + 1
                    hdr = i
                    # class definitions end at ';' (possibly with declarators)
                    continue
                if '(' in h and not h.endswith('=') and not re.search(r'=\s*$', h) \
                        and _is_function_header(h):
                    # constructor init list brace-init: `: a_{x}, b_{y} {`
                    if _ctor_brace_init(h):
                        i = close + 1
                        continue
                    name = _name(h)
                    first = line(hdr + len(header) - len(header.lstrip()))
                    # start at the line of the name when a long return type wraps lines
                    yield_list.append((name, first, line(close)))
                    hdr = close + 1
                    i = close + 1
                    continue
                # initializer or other braced block at scope level: skip it
                i = close + 1
                hdr = i
                continue
            i += 1

    def match(i):
        depth = 0
        for j in range(i, len(text)):
            if text[j] == '{':
                depth += 1
            elif text[j] == '}':
                depth -= 1
                if depth == 0:
                    return j
        return len(text) - 1

    yield_list = []
    scan_scope(0, len(text))
    return yield_list


def _is_function_header(h):
    # last top-level ')' followed by qualifiers / trailing return / ctor-init list
    depth = 0
    last = -1
    for k, ch in enumerate(h):
        if ch in '([':
            depth += 1
        elif ch in ')]':
            depth -= 1
            if depth == 0 and ch == ')':
                last = k
    if last < 0:
        return False
    return True


def _ctor_brace_init(h):
    """True when the '{' ending `h` opens a brace-initializer of a member in a ctor-init list."""
    # find ') :' (not '::') after the parameter list
    m = re.search(r'\)\s*(noexcept\s*)?:(?!:)', h)
    if not m:
        return False
    tail = h[m.end():].rstrip()
    return bool(re.search(r'[A-Za-z0-9_>]$', tail))


def _name(h):
    depth = 0
    for k, ch in enumerate(h):
        if ch == '(' and depth == 0:
            m = re.search(r'([~A-Za-z_][A-Za-z0-9_:<>,~ ]*?|operator\s*\S+)\s*$', h[:k])
            nm = m.group(1).strip() if m else h[:k].strip()
            nm = re.sub(r'^.*\s', '', nm) if ' ' in nm and 'operator' not in nm else nm
            return nm
        if ch == '<':
            depth += 1
        elif ch == '>':
            depth -= 1
    return h[:40]


def tracked_files(root, dirs):
    """The files under `dirs` that git tracks (generated and ignored files left out), or,
    outside a git checkout, every file under them."""
    import subprocess
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '-z', '--', *dirs],
                             capture_output=True, check=True).stdout
        return sorted(os.path.join(root, f) for f in out.decode().split('\0') if f)
    except (OSError, subprocess.CalledProcessError):
        return sorted(os.path.join(dp, f) for d in dirs
                      for dp, _, fs in os.walk(os.path.join(root, d)) for f in fs)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--root', default='.')
    ap.add_argument('--file-limit', type=int, default=700)
    ap.add_argument('--func-limit', type=int, default=100)
    ap.add_argument('--file-dirs', nargs='*', default=['server', 'clients', 'crypto'])
    ap.add_argument('--func-dirs', nargs='*', default=['server', 'clients'])
    a = ap.parse_args()
    bad = 0
    print(f'files over {a.file_limit} lines in {" ".join(a.file_dirs)}:')
    for p in tracked_files(a.root, a.file_dirs):
        try:
            with open(p, encoding='utf-8') as fh:
                n = sum(1 for _ in fh)
        except (UnicodeDecodeError, OSError):
            continue
        if n > a.file_limit:
            print(f'  {n:5d}  {os.path.relpath(p, a.root)}')
            bad += 1
    print(f'functions over {a.func_limit} lines in {" ".join(a.func_dirs)}:')
    for p in tracked_files(a.root, a.func_dirs):
        if not p.endswith(EXTS):
            continue
        with open(p, encoding='utf-8') as fh:
            text = blank(fh.read())
        for name, l0, l1 in functions(text):
            if l1 - l0 + 1 > a.func_limit:
                print(f'  {l1 - l0 + 1:5d}  {os.path.relpath(p, a.root)}:{l0}-{l1}  {name}')
                bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
