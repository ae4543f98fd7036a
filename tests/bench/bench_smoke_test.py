#!/usr/bin/env python3
"""Smoke test for smcrypt-bench: every case runs (a minimal number of iterations, two
randomly interleaved repetitions; no timing is asserted), the JSON report carries the
expected names, each with its unit and every repetition, the summary and headline show
spreads, and bench/check_dispatch.py reads the report.

Usage: bench_smoke_test.py PATH/TO/smcrypt-bench
"""
import json
import os
import re
import subprocess
import sys
import tempfile

NAME = re.compile(r"^(smcrypt\.[a-z0-9_]+|openssl|libgcrypt|botan)/[A-Z0-9-]+/[a-z0-9_]+/[0-9]+$")


def main() -> int:
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        summary = os.path.join(tmp, "summary.txt")
        headline = os.path.join(tmp, "headline.txt")
        proc = subprocess.run(
            [binary, "--benchmark_min_time=0.00001", "--benchmark_min_warmup_time=0",
             "--benchmark_repetitions=2",
             "--benchmark_out=" + out, "--benchmark_out_format=json", "--paper",
             "--summary_out=" + summary, "--headline_out=" + headline],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        if proc.returncode != 0:
            print(proc.stdout[-4000:])
            print(f"FAIL: smcrypt-bench exited with {proc.returncode}")
            return 1
        with open(out) as f:
            report = json.load(f)
        with open(summary) as f:
            summary_text = f.read()
        with open(headline) as f:
            headline_text = f.read()
        check = subprocess.run(
            [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                          "..", "..", "bench", "check_dispatch.py"), out],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)

    failures = []
    context = report["context"]
    kernels = dict(kv.split("=") for kv in context["smcrypt_dispatched_kernels"].split(","))
    peers = context["smcrypt_peers"]
    if context.get("smcrypt_random_interleaving") != "true":
        failures.append("random interleaving is not on by default")
    if "smcrypt_headline_dispatched" not in context:
        failures.append("context lacks smcrypt_headline_dispatched")
    if not context.get("smcrypt_cpu"):
        failures.append("context lacks smcrypt_cpu (the CPU identity)")
    names = set()
    repetitions = {}
    for b in report["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        name = b.get("run_name", b["name"])
        names.add(name)
        repetitions[name] = repetitions.get(name, 0) + 1
        if not NAME.match(name):
            failures.append(f"badly formed name: {name}")
        if b.get("error_occurred"):
            failures.append(f"{name}: {b.get('error_message')}")
            continue
        if "items_per_second" not in b:
            failures.append(f"{name}: no items_per_second")
        # Signature cases count signatures (batch cases: per signature), not bytes; the
        # P-256 key generation and ECDH derive cases (the HPKE-P256 floor) count operations.
        if re.search(r"/(sign|verify)(_batch|_uncached|_uncached_batch)?/", name):
            continue
        if re.match(r"openssl/P-256/(keygen|ecdh_derive)/0$", name):
            continue
        if "bytes_per_second" not in b:
            failures.append(f"{name}: no bytes_per_second")

    # SM3's dispatched name is "<single>+<multi>" (or "<single>" without a multi-buffer
    # back end): single-stream cases carry the first name, batches the multi-buffer one.
    sm3_single, _, sm3_multi = kernels["SM3"].partition("+")
    sm3 = "smcrypt." + sm3_single
    sm3_batch = "smcrypt." + (sm3_multi or sm3_single)
    sm4 = "smcrypt." + kernels["SM4"]
    sm2 = "smcrypt." + kernels["SM2"]
    expected = [
        f"{sm3}/SM3/hash/8", f"{sm3}/SM3/hash/1048576", f"{sm3_batch}/SM3/batch16/1024",
        f"{sm3}/HMAC-SM3/mac/1024", f"{sm3}/SM3-KDF/derive/1024", f"{sm3_batch}/SM3-KDF/derive/32",
        "smcrypt.generic/SM3/hash/64", "smcrypt.generic/SM4-GCM/encrypt/1024",
        "smcrypt.generic/SM2/sign/32", "smcrypt.generic/SM4-CBC/decrypt/16384",
        f"{sm4}/SM4-ECB/encrypt/16", f"{sm4}/SM4-ECB/decrypt/1048576",
        f"{sm4}/SM4-CBC/encrypt/32", f"{sm4}/SM4-CBC/decrypt/1048576",
        f"{sm4}/SM4-CTR/encrypt/16384", f"{sm4}/SM4-GCM/encrypt/16384",
        f"{sm4}/SM4-GCM/decrypt/1024", f"{sm4}/SM4-CCM/encrypt/1024",
        f"{sm2}/SM2/sign/32", f"{sm2}/SM2/verify/32",
        f"{sm2}/SM2/encrypt/16", f"{sm2}/SM2/decrypt/32768", f"{sm2}/SM2/encrypt/1048576",
        f"{sm2}/HPKE-SM2-SM3-SM4GCM/encrypt/512", f"{sm2}/HPKE-SM2-SM3-SM4GCM/decrypt/1048576",
        "openssl/HPKE-P256-SHA256-AES128GCM/encrypt/30720", "openssl/SM2/decrypt/524288",
        f"{sm2}/HPKE-SM2-SM3-SM4GCM/encrypt_batch64/1024",
        "openssl/HPKE-P256-SHA256-AES128GCM/encrypt_batch64/512",
        "openssl/SM3/hash/8", "openssl/SHA-256/hash/1048576", "openssl/HMAC-SM3/mac/64",
        "openssl/SM4-CBC/decrypt/1048576", "openssl/AES-128-GCM/encrypt/16384",
        "openssl/AES-128-CCM/decrypt/1024", "openssl/AES-128-CTR/encrypt/16",
        "openssl/ECDSA-P256/sign/32", "openssl/ECDSA-SECP256K1/verify/32",
        "openssl/SM2/sign/32", "openssl/RSA-2048-OAEP/encrypt/32768",
        "openssl/RSA-3072-OAEP/decrypt/16",
        "openssl/P-256/keygen/0", "openssl/P-256/ecdh_derive/0",
    ]
    if sm3_multi:
        expected += [f"{sm3_batch}/HMAC-SM3/batch16/1024"]
    if "libgcrypt" in peers:
        expected += ["libgcrypt/SM3/hash/8192", "libgcrypt/SM4-GCM/encrypt/1024",
                     "libgcrypt/AES-128-CCM/decrypt/64"]
    if "botan" in peers:
        expected += ["botan/SM3/hash/8192", "botan/SM4-CCM/encrypt/1024",
                     "botan/SM2/verify/32", "botan/RSA-3072-OAEP/encrypt/4096"]
    for e in expected:
        if e not in names:
            failures.append(f"missing case: {e}")
    for name, n in repetitions.items():
        if n != 2:
            failures.append(f"{name}: {n} repetitions in the JSON, want 2")
    if check.returncode not in (0, 1) or "Dispatch check" not in check.stdout:
        failures.append(f"check_dispatch.py exited {check.returncode}: {check.stdout[-2000:]}")
    if "Every back end against the dispatched one" not in summary_text:
        failures.append("summary lacks the back-end table")
    # Ratios come with the range of the per-repetition ratios: "1.53 (1.41–1.62)".
    for text, what in ((summary_text, "summary"), (headline_text, "headline")):
        if not re.search(r"[0-9.]+ \([0-9.]+–[0-9.]+\)", text) or "±" not in text:
            failures.append(f"{what} lacks ratio ranges or spreads")
    if "dispatch chose" not in headline_text:
        failures.append("headline does not name the dispatched back end")
    for title in ["== Hash and MAC", "== Block modes", "== AEAD", "== Signatures",
                  "== Public-key encryption", "== Hybrid encryption", "\"ECC\" vs \"ECC+AES\"",
                  "Paper view", "SM4-GCM encrypt", "against OpenSSL's P-256 floor"]:
        if title not in summary_text:
            failures.append(f"summary lacks \"{title}\"")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(names)} cases, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
