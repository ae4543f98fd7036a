#!/usr/bin/env python3
"""monitoring_test.py — the alert rules and the metrics of smcryptd through promtool
(label deploy):

- `promtool check rules` on deploy/monitoring/alerts.yaml and on the spec of the
  PrometheusRule generated from it;
- `promtool test rules` on tests/deploy/monitoring/alerts_test.yaml (synthetic series for the
  certificate-expiry, in-flight and error-ratio alerts);
- every alert has a runbook_url of the documented base whose anchor is a heading of
  docs/runbooks.md as mkdocs' toc extension spells it, and every section of that page but
  "Runbook links" is an alert;
- `promtool check metrics` on a real /metrics scrape of smcryptd serving mTLS, after calls
  of the smcrypt CLI (OK, an error, info), with the certificate-expiry gauge in it.

Usage: monitoring_test.py --src SRC --smcryptd SMCRYPTD --smcrypt SMCRYPT
Exit 77 (ctest's skip code) when promtool is absent (Debian package prometheus,
deploy/local/install-deps.sh installs it).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

import markdown
import yaml

ARGS = None
RUNBOOK_BASE = "https://smcrypt.example.com/docs/runbooks.html#"


def run(*cmd, stdin=None):
    return subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def alert_rules():
    with open(os.path.join(ARGS.src, "deploy/monitoring/alerts.yaml")) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"] if "alert" in r]


class RulesTest(unittest.TestCase):
    def test_alerts_yaml_passes_promtool_check_rules(self):
        out = run("promtool", "check", "rules",
                  os.path.join(ARGS.src, "deploy/monitoring/alerts.yaml"))
        self.assertEqual(out.returncode, 0, out.stdout)

    def test_prometheusrule_spec_passes_promtool_check_rules(self):
        path = os.path.join(ARGS.src, "deploy/k8s/overlays/prometheus-operator/prometheusrule.yaml")
        with open(path) as f:
            rule = yaml.safe_load(f)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            yaml.safe_dump(rule["spec"], f)
        try:
            out = run("promtool", "check", "rules", f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertIn(f"SUCCESS: {len(alert_rules())} rules found", out.stdout)

    def test_alert_unit_tests_pass(self):
        out = run("promtool", "test", "rules",
                  os.path.join(ARGS.src, "tests/deploy/monitoring/alerts_test.yaml"))
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertIn("SUCCESS", out.stdout)


class RunbookTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ARGS.src, "docs/runbooks.md")) as f:
            text = f.read()
        # mkdocs renders with python-markdown's toc extension: the anchors are its ids.
        md = markdown.Markdown(extensions=["toc"])
        md.convert(text)
        cls.sections = {}
        stack = list(md.toc_tokens)
        while stack:
            t = stack.pop()
            cls.sections[t["id"]] = (t["level"], t["name"])
            stack.extend(t["children"])

    def test_every_alert_has_a_runbook_url_to_a_heading(self):
        rules = alert_rules()
        self.assertGreaterEqual(len(rules), 10)
        for r in rules:
            url = r.get("annotations", {}).get("runbook_url", "")
            self.assertTrue(url.startswith(RUNBOOK_BASE), f"{r['alert']}: runbook_url {url!r}")
            anchor = url[len(RUNBOOK_BASE):]
            self.assertIn(anchor, self.sections, f"{r['alert']}: no heading #{anchor}")
            self.assertEqual(self.sections[anchor], (2, r["alert"]), r["alert"])

    def test_every_section_is_an_alert(self):
        names = {r["alert"] for r in alert_rules()}
        for level, name in self.sections.values():
            if level == 2 and name != "Runbook links":
                self.assertIn(name, names, f"docs/runbooks.md: section {name} has no alert")


class LiveMetricsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="smcrypt_monitoring_")
        self.addCleanup(shutil.rmtree, self.dir)
        out = run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
                  "-keyout", os.path.join(self.dir, "server.key"),
                  "-out", os.path.join(self.dir, "server.pem"), "-subj", "/CN=localhost",
                  "-addext", "subjectAltName=DNS:localhost")
        self.assertEqual(out.returncode, 0, out.stdout)

    def start(self):
        d = self.dir
        log = open(os.path.join(d, "smcryptd.log"), "w+")
        self.addCleanup(log.close)
        proc = subprocess.Popen(
            [ARGS.smcryptd, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
             f"--tls_cert={d}/server.pem", f"--tls_key={d}/server.key",
             f"--tls_client_ca={d}/server.pem"],
            stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.send_signal, signal.SIGKILL)
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            log.seek(0)
            text = log.read()
            port = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
            metrics = re.search(r"metrics on 127\.0\.0\.1:(\d+)", text)
            if port and metrics:
                return int(port.group(1)), int(metrics.group(1))
            time.sleep(0.1)
        log.seek(0)
        self.fail(f"smcryptd did not start:\n{log.read()}")

    def test_a_scrape_after_calls_passes_promtool_check_metrics(self):
        port, metrics_port = self.start()
        d = self.dir
        tls = ["--target", f"127.0.0.1:{port}", "--ca", f"{d}/server.pem", "--cert",
               f"{d}/server.pem", "--cert-key", f"{d}/server.key", "--server-name", "localhost"]
        out = run(ARGS.smcrypt, "hash", "--alg", "sm3", *tls, stdin="abc")
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertEqual(run(ARGS.smcrypt, "info", *tls).returncode, 0)
        out = run(ARGS.smcrypt, "keygen", "--alg", "sm4-gcm", "--out", f"{d}/k.key", *tls)
        self.assertEqual(out.returncode, 0, out.stdout)
        with open(f"{d}/garbage.bin", "wb") as f:
            f.write(os.urandom(64))
        out = run(ARGS.smcrypt, "decrypt", "--alg", "sm4-gcm", "--key", f"{d}/k.key",
                  "--format", "raw", f"{d}/garbage.bin", *tls)
        self.assertEqual(out.returncode, 1, out.stdout)  # decryption failed
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as r:
            text = r.read().decode()
        for series in ('smcrypt_tls_certificate_expiry_timestamp_seconds{certificate="server"}',
                       'smcrypt_tls_certificate_expiry_timestamp_seconds{certificate="client_ca"}',
                       'grpc_code="InvalidArgument",grpc_method="Decrypt"',
                       "process_start_time_seconds ", "process_open_fds ", "process_max_fds "):
            self.assertIn(series, text)
        out = run("promtool", "check", "metrics", stdin=text)
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertEqual(out.stdout.strip(), "", "promtool check metrics has remarks")


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", required=True)
    parser.add_argument("--smcryptd", required=True)
    parser.add_argument("--smcrypt", required=True)
    ARGS, rest = parser.parse_known_args()
    if shutil.which("promtool") is None:
        print("SKIP: promtool not found (Debian package prometheus; deploy/local/install-deps.sh)")
        return 77
    result = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
