#!/usr/bin/env python3
"""stage-targets.py — the Ninja targets a deploy/local/test.sh stage must build so that the
tests it runs find every program they start, and nothing more.

  deploy/local/stage-targets.py BUILD_DIR [--install] -- CTEST_SELECTION...
  e.g. deploy/local/stage-targets.py build-asan -- -L 'unit|integration|fuzz' -LE slow

BUILD_DIR is a configured (not necessarily built) Ninja build folder. Prints one target per
line, for `cmake --build BUILD_DIR --target ...`:

  * every GoogleTest executable (gtest_discover_tests) whose tests the selection's -L / -LE
    can pick. Its tests are only known once it is built (until then ctest lists a label-less
    placeholder <target>_NOT_BUILT, which a -L selection drops without a word), so this is
    decided from the labels each gtest_discover_tests call gives (the TEST_PROPERTIES of the
    discovery step in build.ninja, with the LABELS of its CTestTestfile.cmake folders); -R and
    -E are not applied (test names are not known yet). Every GoogleTest executable is built
    when the selection has no -L (ctest would pick the placeholders, which fail), when it has
    options other than -L, -LE, -R and -E, and when an executable's labels cannot be read;
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
import shlex
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


def directory_labels(build_dir, folder):
    """The LABELS directory property of folder and the folders above it up to build_dir."""
    labels = []
    while True:
        testfile = os.path.join(folder, "CTestTestfile.cmake")
        if os.path.exists(testfile):
            with open(testfile, encoding="utf-8") as f:
                for m in re.finditer(r'set_directory_properties\(PROPERTIES LABELS "([^"]*)"\)',
                                     f.read()):
                    labels += m.group(1).split(";")
        if folder == build_dir or len(folder) <= len(build_dir):
            return labels
        folder = os.path.dirname(folder)


def gtest_label_sets(build_dir, target):
    """The labels of the tests of each gtest_discover_tests call on target, or None."""
    out = subprocess.run(["ninja", "-C", build_dir, "-t", "commands", target], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    words = shlex.split(out[-1]) if out else []
    sets = []
    for i, word in enumerate(words):
        if word != "-D" or i + 1 >= len(words) or words[i + 1] != f"TEST_TARGET={target}":
            continue
        props = ctest_file = None
        for w in words[i + 2:]:
            if w.startswith("TEST_TARGET="):
                break
            if w.startswith("TEST_PROPERTIES="):
                props = w[len("TEST_PROPERTIES="):].split(";")
            if w.startswith("CTEST_FILE="):
                ctest_file = w[len("CTEST_FILE="):]
        if props is None or ctest_file is None or len(props) % 2:
            return None
        labels = []
        for key, value in zip(props[0::2], props[1::2]):
            if key == "LABELS":
                labels.append(value)
        sets.append(labels + directory_labels(build_dir, os.path.dirname(ctest_file)))
    return sets or None


def label_filter(selection):
    """A function labels -> picked for the selection's -L / -LE, or None when the selection
    has options this does not know (then every GoogleTest executable is built)."""
    include, exclude, i = [], [], 0
    while i < len(selection):
        option = selection[i]
        if option in ("-L", "-LE", "-R", "-E") and i + 1 < len(selection):
            if option == "-L":
                include.append(re.compile(selection[i + 1]))
            elif option == "-LE":
                exclude.append(re.compile(selection[i + 1]))
            i += 2  # -R / -E: names, unknown before the build; not applied
        else:
            return None
    if not include:
        return None
    return lambda labels: (all(any(r.search(l) for l in labels) for r in include)
                           and not any(r.search(l) for r in exclude for l in labels))


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
    picked = label_filter(selection)
    targets, unpicked = set(), []
    for target in sorted(gtests):
        label_sets = gtest_label_sets(build_dir, target) if picked else None
        if label_sets is None or any(picked(labels) for labels in label_sets):
            targets.add(target)
        else:
            unpicked.append(f"{target} ({' / '.join(','.join(l) for l in label_sets)})")
    if unpicked:
        print(f"stage-targets: GoogleTest executables whose labels are not selected, not built: "
              f"{', '.join(unpicked)}", file=sys.stderr)
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
