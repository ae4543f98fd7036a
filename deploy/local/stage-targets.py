#!/usr/bin/env python3
"""stage-targets.py — the Ninja targets a deploy/local/test.sh stage must build so that the
tests it runs find every program they start, and nothing more.

  deploy/local/stage-targets.py BUILD_DIR [--install] -- CTEST_SELECTION...
  e.g. deploy/local/stage-targets.py build-asan -- -L 'unit|integration|fuzz' -LE slow

BUILD_DIR is a configured (not necessarily built) Ninja build folder. Prints one target per
line, for `cmake --build BUILD_DIR --target ...`:

  * every GoogleTest executable (gtest_discover_tests), whatever the selection: its tests are
    only known once it is built, and until then ctest lists a label-less placeholder
    <target>_NOT_BUILT that a -L selection would drop without a word, so none is left out;
  * every build output named by the command line of a test the selection picks
    (`ctest -N --show-only=json-v1 CTEST_SELECTION`; the command lines are read from the
    CTestTestfile.cmake files, as ctest omits a command whose program is not built yet):
    the test program itself, the programs a script under test is given (smcryptd, smcrypt,
    smcrypt-load, ...), object files;
  * with --install, what `cmake --install BUILD_DIR` copies (the cmake_install.cmake files).

Programs a test finds through a compile definition (SMCRYPTD_PATH and the like) are its
target's add_dependencies and are built with it. A selected test whose command line cannot
be found is an error (exit 1), so a test cannot lose its program silently; ctest itself fails
a test whose program is missing ("Could not find executable").
"""
import json
import os
import re
import subprocess
import sys


def ctest_selection(build_dir, selection):
    out = subprocess.run(["ctest", "-N", "--show-only=json-v1", *selection], cwd=build_dir,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["tests"]


ADD_TEST = re.compile(r'^add_test\(\[(=*)\[(.*?)\]\1\] (.*)\)$')
QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def add_test_lines(build_dir):
    """name -> arguments of every add_test() CMake wrote into the CTestTestfile.cmake files."""
    commands = {}
    for root, _, files in os.walk(build_dir):
        if "CTestTestfile.cmake" not in files:
            continue
        with open(os.path.join(root, "CTestTestfile.cmake"), encoding="utf-8") as f:
            for line in f:
                m = ADD_TEST.match(line.strip())
                if m:
                    commands[m.group(2)] = [re.sub(r'\\(.)', r'\1', a)
                                            for a in QUOTED.findall(m.group(3))]
    return commands


def gtest_targets(build_dir):
    """The targets of gtest_discover_tests: one <target>[N]_include.cmake each."""
    names = set()
    for root, _, files in os.walk(build_dir):
        for name in files:
            m = re.fullmatch(r'(.+)\[\d+\]_include\.cmake', name)
            if m:
                names.add(m.group(1))
    return names


def installed_files(build_dir):
    found = []
    for root, _, files in os.walk(build_dir):
        if "cmake_install.cmake" in files:
            with open(os.path.join(root, "cmake_install.cmake"), encoding="utf-8") as f:
                for line in f:
                    if "file(INSTALL" in line:
                        found += QUOTED.findall(line)
    return found


def main(argv):
    if "--" not in argv or len(argv) < 3:
        sys.exit(__doc__)
    options, selection = argv[1:argv.index("--")], argv[argv.index("--") + 1:]
    build_dir = os.path.realpath(options[0])
    outputs = set()
    for line in subprocess.run(["ninja", "-C", build_dir, "-t", "targets", "all"], check=True,
                               capture_output=True, text=True).stdout.splitlines():
        outputs.add(line.rsplit(": ", 1)[0])

    def build_outputs(words):
        found = set()
        for word in words:
            for part in [word] + word.split("=")[1:]:
                path = os.path.normpath(part)
                if path.startswith(build_dir + os.sep):
                    rel = os.path.relpath(path, build_dir)
                    if rel in outputs:
                        found.add(rel)
        return found

    gtests = gtest_targets(build_dir)
    targets = set(gtests)
    commands = add_test_lines(build_dir)
    for test in ctest_selection(build_dir, selection):
        name = test["name"]
        if name.endswith("_NOT_BUILT") and name[:-len("_NOT_BUILT")] in gtests:
            continue
        words = list(test.get("command") or []) + commands.get(name, [])
        if not words:
            # A test discovered from a built GoogleTest executable runs that executable,
            # which is in the list already; anything else must name its program.
            sys.exit(f"stage-targets: no command line found for test {name!r} in {build_dir}")
        targets |= build_outputs(words)
    if "--install" in options[1:]:
        targets |= build_outputs(installed_files(build_dir))
    unknown = [o for o in options[1:] if o != "--install"]
    if unknown:
        sys.exit(f"stage-targets: unknown option {unknown[0]}")
    print("\n".join(sorted(targets)))


if __name__ == "__main__":
    main(sys.argv)
