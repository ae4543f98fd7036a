#!/usr/bin/env python3
"""readme_cli_table_test.py PAGE SMCRYPT — runs the table of everyday tasks of docs/cli.md.

Every smcrypt line of the table between <!-- cli-table:begin --> and <!-- cli-table:end -->
in PAGE (docs/cli.md) runs, in order, in a temporary folder holding msg.txt and pw.txt, with
SMCRYPT_TARGET at a closed port (so a line that needed a server would fail), and must
exit 0; every OpenSSL line runs the same way in a second folder. Then the two columns are
checked against each other: equal SM3 digests, HMAC-SM3 tags and SM4-CBC ciphertexts;
smcrypt's SM2 signatures verified and its SM2 ciphertexts decrypted (with its
password-encrypted key) by OpenSSL, and OpenSSL's by smcrypt. Decryptions must give
msg.txt back, verifications must say so. GmSSL's lines are documentation (GmSSL is not
in Debian): they are only checked to be there.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

MSG = b"hello smcrypt: an everyday message\n"
PASSWORD = b"correct horse battery staple\n"


def fail(msg):
    print("readme_cli_table_test: FAIL: " + msg)
    sys.exit(1)


def table_rows(readme):
    text = open(readme, encoding="utf-8").read()
    m = re.search(r"<!-- cli-table:begin -->\n(.*?)<!-- cli-table:end -->", text, re.S)
    if not m:
        fail("no <!-- cli-table:begin --> ... <!-- cli-table:end --> table in " + readme)
    rows = []
    for line in m.group(1).splitlines():
        line = line.strip()
        if not line.startswith("|") or line.startswith("| ---") or line.startswith("| Task"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != 4:
            fail("table row without 4 cells: " + line)
        rows.append({"task": cells[0], "gmssl": commands(cells[1]),
                     "openssl": commands(cells[2]), "smcrypt": commands(cells[3])})
    if len(rows) < 10:
        fail("the table has only %d rows" % len(rows))
    return rows


def commands(cell):
    return [c for c in re.findall(r"`([^`]*)`", cell)
            if c.split(" ", 1)[0] in ("smcrypt", "openssl", "gmssl")]


def run(argv_or_line, cwd, env, tool=None):
    line = argv_or_line
    argv = shlex.split(line) if isinstance(line, str) else line
    if tool is not None:
        argv[0] = tool
    p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p


def main():
    if len(sys.argv) != 3:
        fail("usage: readme_cli_table_test.py PAGE SMCRYPT")
    readme, smcrypt = sys.argv[1], os.path.abspath(sys.argv[2])
    rows = table_rows(readme)
    env = dict(os.environ)
    env["SMCRYPT_TARGET"] = "127.0.0.1:1"  # nothing listens there: --local must not need it
    env.pop("SMCRYPT_LOCAL", None)
    with tempfile.TemporaryDirectory(prefix="readme_cli_table.") as tmp:
        dirs = {"smcrypt": os.path.join(tmp, "smcrypt"), "openssl": os.path.join(tmp, "openssl")}
        for d in dirs.values():
            os.mkdir(d)
            open(os.path.join(d, "msg.txt"), "wb").write(MSG)
            open(os.path.join(d, "pw.txt"), "wb").write(PASSWORD)
        out = {"smcrypt": {}, "openssl": {}}
        ran = 0
        for row in rows:
            if not row["smcrypt"]:
                fail("row %r has no smcrypt command" % row["task"])
            for col in ("smcrypt", "openssl"):
                for line in row[col]:
                    if col == "smcrypt" and "--local" not in line.split():
                        fail("smcrypt line without --local: " + line)
                    p = run(line, dirs[col], env, smcrypt if col == "smcrypt" else None)
                    ran += 1
                    if p.returncode != 0:
                        fail("%s exited %d\nstdout: %r\nstderr: %s" %
                             (line, p.returncode, p.stdout, p.stderr.decode(errors="replace")))
                    out[col].setdefault(row["task"], []).append(p.stdout)
                    sub = line.split()[1]
                    if col == "smcrypt" and sub in ("decrypt", "pkdecrypt", "open") \
                            or col == "openssl" and ("-decrypt" in line or " -d " in line):
                        if p.stdout != MSG:
                            fail("%s gave %r, not msg.txt" % (line, p.stdout))
                    if sub == "verify" and p.stdout != b"signature valid\n":
                        fail("%s printed %r" % (line, p.stdout))
                    if "-verify" in line and b"Signature Verified Successfully" not in p.stdout:
                        fail("%s printed %r" % (line, p.stdout))

        def first(col, prefix):
            for task, outs in out[col].items():
                if task.startswith(prefix):
                    return outs[0].split()[0].decode()
            fail("no row starting %r" % prefix)

        checks = 0
        for prefix in ("SM3 digest", "HMAC-SM3"):
            if first("smcrypt", prefix) != first("openssl", prefix):
                fail("%s: smcrypt %s, openssl %s" %
                     (prefix, first("smcrypt", prefix), first("openssl", prefix)))
            checks += 1
        a = open(os.path.join(dirs["smcrypt"], "msg.cbc"), "rb").read()
        b = open(os.path.join(dirs["openssl"], "msg.cbc"), "rb").read()
        if a != b or len(a) != (len(MSG) // 16 + 1) * 16:
            fail("SM4-CBC: smcrypt and openssl ciphertexts differ")
        checks += 1
        rnd = first("smcrypt", "16 random bytes")
        if not re.fullmatch(r"[0-9a-f]{32}", rnd):
            fail("random 16 printed %r" % rnd)

        s, o = dirs["smcrypt"], dirs["openssl"]
        cross = [
            # OpenSSL verifies smcrypt's signature and opens its encrypted key and ciphertext.
            (["openssl", "pkeyutl", "-verify", "-rawin", "-digest", "sm3", "-pkeyopt",
              "distid:1234567812345678", "-pubin", "-inkey", "sm2pub.pem", "-in", "msg.txt",
              "-sigfile", "msg.sig"], s, None, b"Signature Verified Successfully\n"),
            (["openssl", "pkeyutl", "-decrypt", "-inkey", "sm2.pem", "-passin", "file:pw.txt",
              "-in", "msg.sm2"], s, None, MSG),
            # smcrypt verifies OpenSSL's, with OpenSSL's `genpkey -aes256` key.
            (["smcrypt", "verify", "--local", "--key", "sm2pub.pem", "--inform", "der", "--sig",
              "msg.sig", "msg.txt"], o, smcrypt, b"signature valid\n"),
            (["smcrypt", "pkdecrypt", "--local", "--key", "sm2.pem", "--pass-file", "pw.txt",
              "--sm2-format", "der", "--inform", "der", "msg.sm2"], o, smcrypt, MSG),
            (["smcrypt", "decrypt", "--local", "--alg", "sm4-cbc", "--key-hex",
              "0123456789abcdeffedcba9876543210", "--iv", "000102030405060708090a0b0c0d0e0f",
              "--inform", "der", "msg.cbc"], o, smcrypt, MSG),
        ]
        for argv, cwd, tool, want in cross:
            p = run(list(argv), cwd, env, tool)
            if p.returncode != 0 or p.stdout != want:
                fail("%s (in the %s folder) exited %d, printed %r\nstderr: %s" %
                     (" ".join(argv), os.path.basename(cwd), p.returncode, p.stdout,
                      p.stderr.decode(errors="replace")))
            checks += 1
        print("readme_cli_table_test: %d table rows, %d commands run, %d cross-checks" %
              (len(rows), ran, checks))
        print("%d passed, 0 failed" % (ran + checks))


if __name__ == "__main__":
    main()
