#!/usr/bin/env python3
"""deploy_test.py — the `deploy` tests: everything in deploy/ is valid and consistent.

- Kubernetes: every kustomize overlay (dev, prod, prometheus-operator) renders with
  `kubectl kustomize` of the kubectl on PATH without a warning (current kustomize syntax
  only); dev and prod hold no Prometheus Operator object (they apply without its CRDs); the
  PrometheusRule's groups are those of deploy/monitoring/alerts.yaml; every object of each
  overlay validates against the Kubernetes OpenAPI schemas (kubernetes-models, offline);
  every object and the pod template carry the six recommended app.kubernetes.io labels,
  the Deployment's (immutable) selector is the pinned pair of labels and no selector holds
  the others; the disruption budget evicts one replica at a time (maxUnavailable 1); the
  properties smcryptd relies on hold (non-root, read-only root, no privilege escalation,
  dropped capabilities, seccomp, gRPC probes on the health port, grace period at least
  preStop + --drain_delay + --shutdown_grace + 5 s, prod's keyring/TLS/inline-key
  policy, ...).
- Monitoring: every metric the Grafana dashboard and the alert rules use appears on a
  live smcryptd's /metrics or in deploy/monitoring/external-metrics.txt, and every label
  they group or filter by exists.
- Container image: the image holds smcryptd alone, built and installed by `cmake --install`;
  both final stages (runtime, from the build stage, and runtime-from-install, from an
  installed tree) copy the same file onto the same runtime-base, whose packages
  (deploy/packages/runtime.txt) provide every shared library smcryptd loads; the build stage
  and install-deps.sh install the one list deploy/packages/build.txt; the image carries the
  org.opencontainers.image labels.

Usage: deploy_test.py --src ROOT --build BUILD_DIR --smcryptd PATH --node_dir DIR
(run_deploy_test.sh sets DIR up with `npm ci`).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

ARGS = None

# Kubernetes' six recommended labels; version is checked against the image tag of the base.
RECOMMENDED_LABELS = {
    "app.kubernetes.io/name": "smcryptd",
    "app.kubernetes.io/instance": "smcryptd",
    "app.kubernetes.io/version": None,
    "app.kubernetes.io/component": "server",
    "app.kubernetes.io/part-of": "smcrypt",
    "app.kubernetes.io/managed-by": "kustomize",
}
# The Deployment's selector as first applied; it cannot change on a live Deployment.
SELECTOR = {"app.kubernetes.io/name": "smcryptd", "app.kubernetes.io/part-of": "smcrypt"}

# Packages every Debian 12 base image already has (Priority: required; debian:bookworm-slim
# and debootstrap --variant=minbase alike).
BASE_IMAGE_PACKAGES = {"libc6", "libgcc-s1", "zlib1g"}
# Labels Prometheus or Kubernetes service discovery attach to every series.
TARGET_LABELS = {"job", "instance", "namespace", "pod", "container", "service", "endpoint", "le"}
PROMQL_WORDS = {
    "sum", "max", "min", "avg", "count", "by", "without", "rate", "irate", "increase",
    "histogram_quantile", "and", "or", "unless", "on", "ignoring", "group_left", "group_right",
    "label_values", "bool", "offset", "time",
}


def node(script, *args):
    out = subprocess.run(["node", os.path.join(ARGS.node_dir, script), *args],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return out.returncode, out.stdout


def yaml_docs(path):
    rc, out = node("yaml2json.mjs", path)
    if rc != 0:
        raise AssertionError(f"cannot parse {path}: {out}")
    return json.loads(out)


OVERLAYS = ("dev", "prod", "prometheus-operator")
OPERATOR_GROUP = "monitoring.coreos.com"


def render(overlay, tmp, kubectl="kubectl", tag=""):
    """Renders an overlay into a file; anything on stderr (kustomize's deprecation
    warnings for bases, patchesStrategicMerge, commonLabels included) fails."""
    out = subprocess.run(
        [kubectl, "kustomize", os.path.join(ARGS.src, "deploy/k8s/overlays", overlay)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise AssertionError(f"{kubectl} kustomize {overlay} failed: {out.stderr}")
    other = [l for l in out.stderr.splitlines() if l.strip()]
    if other:
        raise AssertionError(f"{kubectl} kustomize {overlay} printed: {other}")
    path = os.path.join(tmp, f"{overlay}{tag}.yaml")
    with open(path, "w") as f:
        f.write(out.stdout)
    return path


def by_identity(objects):
    return {(o["apiVersion"], o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
            for o in objects}


def flag(args, name):
    """The value of --name=value in a container's args, or None."""
    for a in args:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return None


def duration_seconds(text):
    m = re.fullmatch(r"(?:(\d+)m)?(?:(\d+)s)?", text)
    if not m or not text:
        raise AssertionError(f"cannot read duration {text!r}")
    return int(m.group(1) or 0) * 60 + int(m.group(2) or 0)


# Seconds between smcryptd's last step (Shutdown's end) and the kubelet's SIGKILL, at least:
# the audit queue is written out and the process exits.
EXIT_MARGIN_SECONDS = 5


def grace_period_shortfall(pod, c):
    """Seconds by which terminationGracePeriodSeconds falls short of the preStop hook's
    sleep (a `sleep` action or an exec of `sleep N`) + --drain_delay + --shutdown_grace
    (smcryptd's defaults 5s and 20s when absent) + EXIT_MARGIN_SECONDS; 0 if none."""
    pre_stop = c.get("lifecycle", {}).get("preStop", {})
    hook = 0
    if "sleep" in pre_stop:
        hook = int(pre_stop["sleep"]["seconds"])
    elif "exec" in pre_stop:
        command = pre_stop["exec"]["command"]
        if os.path.basename(command[0]) != "sleep" or len(command) != 2:
            raise AssertionError(f"preStop {command}: only sleep N is understood here")
        hook = int(command[1])
    elif pre_stop:
        raise AssertionError(f"preStop {pre_stop}: only sleep is understood here")
    drain = duration_seconds(flag(c["args"], "drain_delay") or "5s")
    grace = duration_seconds(flag(c["args"], "shutdown_grace") or "20s")
    need = hook + drain + grace + EXIT_MARGIN_SECONDS
    return max(0, need - pod["terminationGracePeriodSeconds"])


class KubernetesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.files = {o: render(o, cls.tmp) for o in OVERLAYS}
        cls.objects = {o: yaml_docs(p) for o, p in cls.files.items()}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def one(self, overlay, kind, name=None):
        found = [o for o in self.objects[overlay]
                 if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
        self.assertEqual(len(found), 1, f"{overlay}: expected one {kind} {name or ''}")
        return found[0]

    def container(self, overlay):
        pod = self.one(overlay, "Deployment")["spec"]["template"]["spec"]
        (c,) = [c for c in pod["containers"] if c["name"] == "smcryptd"]
        return pod, c

    def test_objects_validate_against_the_openapi_schemas(self):
        for overlay, path in self.files.items():
            rc, out = node("validate.mjs", path)
            self.assertEqual(rc, 0, f"{overlay}: {out}")
            self.assertIn(f"{len(self.objects[overlay])} objects validated, 0 failures", out,
                          overlay)
            self.assertGreaterEqual(len(self.objects[overlay]), 6, overlay)

    def test_validator_rejects_a_wrong_object(self):
        # The schema check can fail: a string where an integer belongs is reported.
        bad = os.path.join(self.tmp, "bad.yaml")
        with open(self.files["prod"]) as f:
            text = f.read()
        with open(bad, "w") as f:
            f.write(text.replace("replicas: 3", "replicas: three", 1))
        rc, out = node("validate.mjs", bad)
        self.assertNotEqual(rc, 0, out)
        self.assertIn("replicas", out)
        # The PrometheusRule is checked against the operator's CRD schema too.
        with open(self.files["prometheus-operator"]) as f:
            text = f.read()
        self.assertIn("for: 10m", text)
        with open(bad, "w") as f:
            f.write(text.replace("for: 10m", "for: ten minutes", 1))
        rc, out = node("validate.mjs", bad)
        self.assertNotEqual(rc, 0, out)
        self.assertIn("PrometheusRule/smcryptd: data/spec/groups/0/rules/0/for", out)

    def test_every_object_is_present(self):
        core = ["Deployment", "Service", "Service", "HorizontalPodAutoscaler",
                "PodDisruptionBudget", "NetworkPolicy"]
        for overlay in self.objects:
            kinds = sorted(o["kind"] for o in self.objects[overlay])
            extra = ["PrometheusRule", "ServiceMonitor"] if overlay == "prometheus-operator" else []
            self.assertEqual(kinds, sorted(core + extra), overlay)
            ns = {o["metadata"].get("namespace") for o in self.objects[overlay]}
            self.assertEqual(ns, {"smcrypt-dev" if overlay == "dev" else "smcrypt"})

    def test_dev_and_prod_need_no_operator_crds(self):
        for overlay in ("dev", "prod"):
            groups = {o["apiVersion"].split("/")[0] for o in self.objects[overlay]}
            self.assertNotIn(OPERATOR_GROUP, groups, overlay)

    def test_prometheus_operator_overlay_is_prod_plus_its_objects(self):
        prod = by_identity(self.objects["prod"])
        po = by_identity(self.objects["prometheus-operator"])
        added = {k for k in po if k not in prod}
        self.assertEqual({k[1] for k in added}, {"ServiceMonitor", "PrometheusRule"})
        self.assertTrue(all(k[0] == OPERATOR_GROUP + "/v1" for k in added), added)
        for k, o in prod.items():
            self.assertEqual(po.get(k), o, f"prometheus-operator changes prod's {k}")

    def test_recommended_labels_on_every_object_and_the_pod_template(self):
        images = yaml_docs(os.path.join(ARGS.src, "deploy/k8s/base/kustomization.yaml"))[0]["images"]
        (tag,) = [i["newTag"] for i in images if i["name"] == "smcrypt"]
        want = dict(RECOMMENDED_LABELS, **{"app.kubernetes.io/version": str(tag)})
        for overlay in self.objects:
            for o in self.objects[overlay]:
                labels = o["metadata"].get("labels", {})
                for k, v in want.items():
                    self.assertEqual(labels.get(k), v, f"{overlay} {o['kind']}/{o['metadata']['name']}: {k}")
            template = self.one(overlay, "Deployment")["spec"]["template"]["metadata"]["labels"]
            for k, v in want.items():
                self.assertEqual(template.get(k), v, f"{overlay} pod template: {k}")

    def test_selectors_are_unchanged(self):
        """The Deployment's selector is immutable: it stays SELECTOR, and no selector holds
        a label that changes with a release or an installation (version, instance, ...)."""
        volatile = set(RECOMMENDED_LABELS) - set(SELECTOR)
        for overlay in self.objects:
            d = self.one(overlay, "Deployment")
            self.assertEqual(d["spec"]["selector"], {"matchLabels": SELECTOR}, overlay)
            template = d["spec"]["template"]["metadata"]["labels"]
            selectors = {"Deployment": d["spec"]["selector"]["matchLabels"]}
            for o in self.objects[overlay]:
                kind, spec = o["kind"], o["spec"]
                if kind == "Service":
                    selectors[f"Service/{o['metadata']['name']}"] = spec["selector"]
                elif kind == "PodDisruptionBudget":
                    selectors[kind] = spec["selector"]["matchLabels"]
                elif kind == "NetworkPolicy":
                    selectors[kind] = spec["podSelector"]["matchLabels"]
                elif kind == "ServiceMonitor":
                    selectors[kind] = spec["selector"]["matchLabels"]
            for i, t in enumerate(d["spec"]["template"]["spec"]["topologySpreadConstraints"]):
                selectors[f"topologySpreadConstraints[{i}]"] = t["labelSelector"]["matchLabels"]
            for where, sel in selectors.items():
                self.assertEqual(set(sel) & volatile, set(), f"{overlay} {where}")
                if where != "ServiceMonitor":  # it selects Services, whose labels hold SELECTOR
                    self.assertEqual(sel, SELECTOR, f"{overlay} {where}")
                    for k, v in sel.items():
                        self.assertEqual(template.get(k), v, f"{overlay} {where} selects no pod")

    def test_prometheus_rule_carries_the_groups_of_alerts_yaml(self):
        (rule,) = [o for o in self.objects["prometheus-operator"] if o["kind"] == "PrometheusRule"]
        (plain,) = yaml_docs(os.path.join(ARGS.src, "deploy/monitoring/alerts.yaml"))
        self.assertEqual(rule["spec"]["groups"], plain["groups"],
                         "run deploy/monitoring/prometheusrule.py")
        out = subprocess.run([sys.executable,
                              os.path.join(ARGS.src, "deploy/monitoring/prometheusrule.py"),
                              "--check"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        self.assertEqual(out.returncode, 0, out.stdout)
        # The shape the operator's CRD requires of each rule (beyond the schema check).
        for g in rule["spec"]["groups"]:
            self.assertTrue(g["name"])
            for r in g["rules"]:
                self.assertEqual(set(r) - {"alert", "expr", "for", "labels", "annotations"},
                                 set(), r.get("alert"))
                self.assertTrue(r["alert"] and r["expr"].strip())
                self.assertIn(r["labels"]["severity"], {"warning", "critical"}, r["alert"])
                self.assertTrue(r["annotations"]["summary"] and r["annotations"]["description"])

    def test_pod_security(self):
        for overlay in self.objects:
            pod, c = self.container(overlay)
            sc = pod["securityContext"]
            self.assertTrue(sc["runAsNonRoot"])
            self.assertNotEqual(sc["runAsUser"], 0)
            self.assertEqual(sc["seccompProfile"]["type"], "RuntimeDefault")
            self.assertFalse(pod["automountServiceAccountToken"])
            csc = c["securityContext"]
            self.assertFalse(csc["allowPrivilegeEscalation"])
            self.assertTrue(csc["readOnlyRootFilesystem"])
            self.assertEqual(csc["capabilities"]["drop"], ["ALL"])
            self.assertNotIn("add", csc["capabilities"])
            for kind in ("requests", "limits"):
                self.assertEqual(set(c["resources"][kind]), {"cpu", "memory"}, overlay)

    def test_probes_use_grpc_health_on_the_plaintext_health_port(self):
        for overlay in self.objects:
            _, c = self.container(overlay)
            health = flag(c["args"], "health_listen")
            self.assertIsNotNone(health, "--health_listen is needed: gRPC probes cannot use TLS")
            port = int(health.rsplit(":", 1)[1])
            self.assertIn(port, [p["containerPort"] for p in c["ports"]])
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                self.assertEqual(c[probe]["grpc"]["port"], port, f"{overlay} {probe}")
            self.assertEqual(c["readinessProbe"]["grpc"]["service"], "smcrypt.v1.CryptoService")

    def test_ports_match_the_flags(self):
        for overlay in self.objects:
            _, c = self.container(overlay)
            ports = {p["name"]: p["containerPort"] for p in c["ports"]}
            self.assertEqual(int(flag(c["args"], "listen").rsplit(":", 1)[1]), ports["grpc"])
            self.assertEqual(int(flag(c["args"], "metrics_listen").rsplit(":", 1)[1]),
                             ports["metrics"])

    def test_grace_period_covers_prestop_drain_delay_and_shutdown_grace(self):
        # The kubelet's terminationGracePeriodSeconds runs from the start of the preStop hook
        # (if any) to SIGKILL: hook, then SIGTERM, --drain_delay, --shutdown_grace, exit.
        for overlay in self.objects:
            pod, c = self.container(overlay)
            self.assertEqual(grace_period_shortfall(pod, c), 0, overlay)
        # The check can fail: a period one second short, or a preStop sleep on top.
        pod, c = self.container("prod")
        short = dict(pod, terminationGracePeriodSeconds=pod["terminationGracePeriodSeconds"] - 1)
        self.assertEqual(grace_period_shortfall(short, c), 1)
        slept = dict(c, lifecycle={"preStop": {"sleep": {"seconds": 5}}})
        self.assertEqual(grace_period_shortfall(pod, slept), 5)

    def test_services_monitor_and_spread(self):
        for overlay in self.objects:
            svcs = {o["metadata"]["name"]: o for o in self.objects[overlay] if o["kind"] == "Service"}
            self.assertEqual(svcs["smcryptd"]["spec"]["type"], "ClusterIP")
            self.assertEqual(svcs["smcryptd-headless"]["spec"]["clusterIP"], "None")
            pod, _ = self.container(overlay)
            labels = self.one(overlay, "Deployment")["spec"]["template"]["metadata"]["labels"]
            for s in svcs.values():
                for k, v in s["spec"]["selector"].items():
                    self.assertEqual(labels.get(k), v, f"{s['metadata']['name']} selects no pod")
            if overlay == "prometheus-operator":
                sm = self.one(overlay, "ServiceMonitor")
                port = sm["spec"]["endpoints"][0]["port"]
                matched = [s for s in svcs.values()
                           if all(s["metadata"]["labels"].get(k) == v
                                  for k, v in sm["spec"]["selector"]["matchLabels"].items())
                           and port in [p["name"] for p in s["spec"]["ports"]]]
                self.assertTrue(matched, "the ServiceMonitor matches no Service port")
            keys = {t["topologyKey"] for t in pod["topologySpreadConstraints"]}
            self.assertIn("kubernetes.io/hostname", keys)

    def test_autoscaling_and_disruption_budget(self):
        for overlay in self.objects:
            hpa = self.one(overlay, "HorizontalPodAutoscaler")
            self.assertEqual(hpa["spec"]["scaleTargetRef"]["name"], "smcryptd")
            self.assertEqual(hpa["spec"]["metrics"][0]["resource"]["name"], "cpu")
            self.assertLessEqual(hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"])
            pdb = self.one(overlay, "PodDisruptionBudget")
            # One replica evicted at a time at any replica count; a budget in minAvailable
            # would let a drain take all but that many at once (and block drains at 1).
            self.assertEqual(pdb["spec"].get("maxUnavailable"), 1, overlay)
            self.assertNotIn("minAvailable", pdb["spec"], overlay)

    def test_prod_uses_keyring_tls_and_refuses_inline_keys(self):
        pod, c = self.container("prod")
        args = c["args"]
        self.assertEqual(flag(args, "inline_private_keys"), "deny")
        mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        for f, secret in (("keys_dir", "smcrypt-keys"), ("tls_cert", "smcrypt-tls"),
                          ("tls_key", "smcrypt-tls")):
            path = flag(args, f)
            self.assertIsNotNone(path, f"--{f}")
            mount = [m for p, m in mounts.items() if path == p or path.startswith(p + "/")]
            self.assertEqual(len(mount), 1, f"--{f}={path} is not on a mounted volume")
            self.assertTrue(mount[0]["readOnly"])
            vol = volumes[mount[0]["name"]]
            self.assertEqual(vol["secret"]["secretName"], secret)
            self.assertEqual(vol["secret"]["defaultMode"] & 0o007, 0,
                             "key files must not be world-readable")
        policy = self.one("prod", "NetworkPolicy")
        grpc_rules = [r for r in policy["spec"]["ingress"]
                      if any(p["port"] == 50051 for p in r.get("ports", []))]
        self.assertTrue(all("from" in r for r in grpc_rules), "prod gRPC ingress must name its sources")

    def test_dev_has_no_keyring(self):
        _, c = self.container("dev")
        self.assertIsNone(flag(c["args"], "keys_dir"))

    def test_kustomizations_use_current_syntax(self):
        # Not bases, patchesStrategicMerge, commonLabels (deprecated; commonLabels would
        # also write every label into the selectors).
        allowed = {"apiVersion", "kind", "namespace", "resources", "patches", "labels",
                   "images", "namePrefix"}
        root = os.path.join(ARGS.src, "deploy/k8s")
        found = 0
        for dirpath, _, files in os.walk(root):
            if "kustomization.yaml" in files:
                found += 1
                (k,) = yaml_docs(os.path.join(dirpath, "kustomization.yaml"))
                self.assertLessEqual(set(k), allowed, dirpath)
        self.assertEqual(found, 4)


def read_list(path):
    """The packages of a deploy/packages list: one a line, `#` starts a comment."""
    with open(path) as f:
        return {l.split("#", 1)[0].strip() for l in f} - {""}


def start_smcryptd(*extra_args):
    proc = subprocess.Popen([ARGS.smcryptd, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                             *extra_args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = ""
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        log += line
        m = re.search(r"metrics on 127\.0\.0\.1:(\d+)", log)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise AssertionError(f"smcryptd did not start:\n{log}")


def promql_selectors(expr):
    """(metric name, {label names}) for every `name{...}` selector of a PromQL expression,
    plus the labels of every `by (...)` and `on (...)` clause under the key None."""
    out = []
    for m in re.finditer(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}", expr):
        labels = set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", m.group(2)))
        out.append((m.group(1), labels))
    for m in re.finditer(r"\b(?:by|on)\s*\(([^)]*)\)", expr):
        out.append((None, {x.strip() for x in m.group(1).split(",") if x.strip()}))
    # Every metric is referenced with a selector; a bare name would escape this check.
    # (`ignoring (...)` names labels that need not exist.)
    stripped = re.sub(r"\{[^}]*\}|\"[^\"]*\"|\[[^\]]*\]|\b(?:by|on|ignoring)\s*\([^)]*\)",
                      " ", expr)
    for word in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", stripped):
        if word in PROMQL_WORDS or word in TARGET_LABELS or word.startswith("$"):
            continue
        if any(word == name for name, _ in out):
            continue
        raise AssertionError(f"bare name {word!r} in {expr!r}: write it as {word}{{...}}")
    return out


class MonitoringTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # With mTLS, so that the certificate expiry series are there too.
        tls = tempfile.mkdtemp(prefix="smcrypt_deploy_tls_")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
                        "-keyout", f"{tls}/server.key", "-out", f"{tls}/server.pem",
                        "-subj", "/CN=localhost"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        try:
            proc, port = start_smcryptd(f"--tls_cert={tls}/server.pem",
                                        f"--tls_key={tls}/server.key",
                                        f"--tls_client_ca={tls}/server.pem")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                    text = r.read().decode()
            finally:
                proc.kill()
                proc.wait()
        finally:
            shutil.rmtree(tls)
        cls.metrics, cls.labels = set(), set()
        for line in text.splitlines():
            m = re.match(r"# TYPE (\S+) (\S+)", line)
            if m:
                name, kind = m.groups()
                cls.metrics.add(name)
                if kind == "histogram":
                    cls.metrics |= {name + "_bucket", name + "_sum", name + "_count"}
                continue
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}", line)
            if m:
                cls.labels |= set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)=", m.group(2)))
        cls.external = set()
        with open(os.path.join(ARGS.src, "deploy/monitoring/external-metrics.txt")) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    cls.external.add(line.split()[0])
        cls.exprs = []
        with open(os.path.join(ARGS.src, "deploy/monitoring/grafana-dashboard.json")) as f:
            dash = json.load(f)
        for p in dash["panels"]:
            for t in p.get("targets", []):
                cls.exprs.append(("dashboard: " + p["title"], t["expr"]))
        for v in dash["templating"]["list"]:
            if v["type"] == "query":
                cls.exprs.append(("dashboard variable " + v["name"], v["query"]))
        (rules,) = yaml_docs(os.path.join(ARGS.src, "deploy/monitoring/alerts.yaml"))
        for g in rules["groups"]:
            for r in g["rules"]:
                cls.exprs.append(("alert " + r["alert"], r["expr"]))

    def test_live_server_exports_the_core_metrics(self):
        for name in ("grpc_server_handled_total", "grpc_server_handling_seconds_bucket",
                     "grpc_server_msg_received_total", "grpc_server_msg_sent_total",
                     "smcrypt_decrypt_failures_total", "smcrypt_verify_failures_total",
                     "smcrypt_keyring_reloads_total", "smcrypt_tls_certificate_reloads_total",
                     "smcrypt_build_info",
                     "smcrypt_bytes_processed_total", "smcrypt_kernel_info",
                     "smcrypt_selftest_ok", "process_cpu_seconds_total",
                     "process_resident_memory_bytes", "process_virtual_memory_bytes",
                     "process_start_time_seconds", "process_open_fds", "process_max_fds",
                     "smcrypt_tls_certificate_expiry_timestamp_seconds"):
            self.assertIn(name, self.metrics)

    def test_every_metric_used_exists(self):
        used = set()
        for where, expr in self.exprs:
            for name, labels in promql_selectors(expr):
                if name is not None:
                    used.add(name)
                    self.assertIn(name, self.metrics | self.external, f"{where}: {name}")
        self.assertGreaterEqual(len(used), 8)
        self.assertLessEqual(self.external, used, "external-metrics.txt lists unused names")

    def test_every_label_used_exists(self):
        for where, expr in self.exprs:
            for name, labels in promql_selectors(expr):
                if name in self.external:
                    continue
                for label in labels:
                    self.assertIn(label, self.labels | TARGET_LABELS, f"{where}: label {label}")

    def test_alerts_cover_errors_latency_selftest_restarts_failures_reloads(self):
        names = {w for w, _ in self.exprs if w.startswith("alert ")}
        for a in ("SmcryptdErrorRatioHigh", "SmcryptdLatencyP99High", "SmcryptdSelfTestFailed",
                  "SmcryptdPodRestarting", "SmcryptdDecryptFailuresHigh",
                  "SmcryptdVerifyFailuresHigh", "SmcryptdKeyringReloadFailing",
                  "SmcryptdTlsCertificateReloadFailing"):
            self.assertIn("alert " + a, names)


class DockerfileTest(unittest.TestCase):
    STAGES = ["runtime-base", "build", "runtime-from-install", "runtime"]

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ARGS.src, "deploy/docker/Dockerfile")) as f:
            text = re.sub(r"\\\n", " ", f.read())
        cls.args = {}  # ARGs before the first FROM: name -> default
        cls.stages = {}
        stage = None
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            if word == "FROM":
                m = re.match(r"(\S+)\s+AS\s+(\S+)", rest, re.I)
                stage = m.group(2)
                cls.stages[stage] = {"base": m.group(1), "lines": []}
            if stage is None:
                if word == "ARG":
                    name, _, default = rest.partition("=")
                    cls.args[name] = default
                continue
            cls.stages[stage]["lines"].append((word, rest))

    def package_list(self, stage):
        """The deploy/packages list STAGE COPYs in and passes to apt-get install: (its path
        in the repository, its packages)."""
        copies = {}
        for word, rest in self.stages[stage]["lines"]:
            if word == "COPY" and not rest.startswith("--from"):
                src, dst = rest.split()
                copies[dst] = src
        installs = [rest for word, rest in self.stages[stage]["lines"]
                    if word == "RUN" and "apt-get install" in rest]
        self.assertEqual(len(installs), 1, stage)
        m = re.search(r"apt-get install [^$]*\$\(sed 's/#\.\*//' (\S+)\)", installs[0])
        self.assertIsNotNone(m, f"{stage}: apt-get install of a copied list: {installs[0]}")
        self.assertIn(m.group(1), copies, f"{stage}: {m.group(1)} is not COPYed in")
        src = copies[m.group(1)]
        self.assertRegex(src, r"^deploy/packages/[a-z]+\.txt$")
        return src, read_list(os.path.join(ARGS.src, src))

    def packages(self, stage):
        return self.package_list(stage)[1]

    def test_runtime_stage_is_minimal_and_non_root(self):
        self.assertEqual(list(self.stages), self.STAGES)
        self.assertTrue(self.args["BASE"].startswith("debian:bookworm"), "Debian 12 by default")
        for stage in ("runtime-base", "build"):
            self.assertEqual(self.stages[stage]["base"], "${BASE}")
        lines = self.stages["runtime-base"]["lines"]
        words = [w for w, _ in lines]
        self.assertNotIn("HEALTHCHECK", words)
        (user,) = [r for w, r in lines if w == "USER"]
        self.assertRegex(user, r"^[1-9][0-9]*:[1-9][0-9]*$", "numeric non-root USER")
        (expose,) = [r for w, r in lines if w == "EXPOSE"]
        self.assertEqual(set(expose.split()), {"50051", "9464", "8081"})
        (entry,) = [r for w, r in lines if w == "ENTRYPOINT"]
        self.assertTrue(entry.startswith("["), "exec-form ENTRYPOINT: no shell at run time")
        (cmd,) = [json.loads(r) for w, r in lines if w == "CMD"]
        self.assertEqual({a.rsplit(":", 1)[1] for a in cmd if re.match(r"--\w*listen=", a)},
                         set(expose.split()), "CMD listens on the EXPOSEd ports")
        # The labels that do not depend on the build (image.sh adds revision, created, source).
        (label,) = [r for w, r in lines if w == "LABEL"]
        labels = dict(re.findall(r'(org\.opencontainers\.image\.\w+)="([^"]*)"', label))
        self.assertEqual(set(labels), {f"org.opencontainers.image.{k}"
                                       for k in ("title", "description", "version")})
        self.assertEqual(labels["org.opencontainers.image.title"], "smcryptd")
        (version_arg,) = [r for w, r in lines if w == "ARG" and r.startswith("VERSION=")]
        with open(os.path.join(ARGS.src, "CMakeLists.txt")) as f:
            project = re.search(r"project\(smcrypt VERSION (\S+)", f.read()).group(1)
        self.assertEqual(version_arg, f"VERSION={project}")
        self.assertEqual(labels["org.opencontainers.image.version"], "${VERSION}")
        # The two final stages add the binaries and nothing else.
        for stage in ("runtime-from-install", "runtime"):
            self.assertEqual(self.stages[stage]["base"], "runtime-base")
            self.assertEqual({w for w, _ in self.stages[stage]["lines"]}, {"FROM", "COPY"}, stage)

    def copied_binaries(self, stage="runtime"):
        """source path (relative to the installed tree) -> destination"""
        out = {}
        for w, r in self.stages[stage]["lines"]:
            if w == "COPY":
                words = r.split()
                if words[0].startswith("--from="):
                    self.assertEqual(words[0], "--from=build", r)
                    words = words[1:]
                src, dst = words
                out[src] = dst
        return out

    def test_both_final_stages_copy_the_same_installed_files(self):
        prefix = self.build_prefix()
        from_build = {os.path.relpath(s, prefix): d for s, d in self.copied_binaries().items()}
        self.assertEqual(from_build, self.copied_binaries("runtime-from-install"))

    def build_prefix(self):
        (build_cmd,) = [r for w, r in self.stages["build"]["lines"]
                        if w == "RUN" and "cmake --install" in r]
        return re.search(r"cmake --install \S+ --prefix (\S+)", build_cmd).group(1)

    def test_copied_binaries_are_built_and_installed_by_cmake(self):
        copied = self.copied_binaries()
        self.assertTrue(copied)
        (build_cmd,) = [r for w, r in self.stages["build"]["lines"]
                        if w == "RUN" and "cmake --install" in r]
        targets = set(re.search(r"--target ([^&]*)", build_cmd).group(1).split())
        prefix = self.build_prefix()
        self.assertEqual(targets, {os.path.basename(s) for s in copied},
                         "build targets and copied binaries differ")
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(["cmake", "--install", ARGS.build, "--prefix", tmp],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(out.returncode, 0, out.stdout)
            for src in copied:
                rel = os.path.relpath(src, prefix)
                path = os.path.join(tmp, rel)
                self.assertTrue(os.access(path, os.X_OK), f"cmake --install does not produce {rel}")
            self.check_runtime_libraries([os.path.join(tmp, os.path.relpath(s, prefix))
                                          for s in copied])

    def check_runtime_libraries(self, binaries):
        if shutil.which("dpkg") is None:
            self.skipTest("dpkg not found: cannot map shared libraries to Debian packages")
        runtime = self.packages("runtime-base") | BASE_IMAGE_PACKAGES
        loads = {}  # library path -> binaries that load it
        for b in binaries:
            out = subprocess.run(["ldd", b], stdout=subprocess.PIPE, text=True, check=True).stdout
            for lib in re.findall(r"=>\s+(/\S+)", out):
                loads.setdefault(lib, []).append(os.path.basename(b))
        self.assertTrue(loads)
        # One dpkg query for every path (as linked and resolved; /lib is /usr/lib here).
        paths = sorted({p for lib in loads for p in (lib, os.path.realpath(lib))})
        out = subprocess.run(["dpkg", "-S", *paths], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
        owner = {}
        for line in out.splitlines():
            pkg, _, path = line.partition(": ")
            owner[path.strip()] = pkg.split(":")[0]
        for lib, users in sorted(loads.items()):
            pkg = owner.get(lib) or owner.get(os.path.realpath(lib))
            self.assertIsNotNone(pkg, f"{users}: no Debian package owns {lib}")
            self.assertIn(pkg, runtime, f"{users} load {lib} from {pkg}, which the runtime "
                                        "stage does not install")

    def test_image_holds_smcryptd_alone(self):
        for stage in ("runtime", "runtime-from-install"):
            self.assertEqual(set(self.copied_binaries(stage).values()),
                             {"/usr/local/bin/smcryptd"}, stage)
        runtime = self.packages("runtime-base")
        for pkg in ("libcurl4", "libgssapi-krb5-2", "libldap-2.5-0", "libssh2-1", "librtmp1"):
            self.assertNotIn(pkg, runtime)

    def test_stages_and_install_deps_read_the_shared_lists(self):
        """The build stage installs deploy/packages/build.txt and runtime-base
        deploy/packages/runtime.txt, and install-deps.sh installs both lists: what builds on
        the host builds in the image."""
        self.assertEqual(self.package_list("build")[0], "deploy/packages/build.txt")
        self.assertEqual(self.package_list("runtime-base")[0], "deploy/packages/runtime.txt")
        for stage in ("build", "runtime-base"):
            self.assertGreaterEqual(len(self.packages(stage)), 5, stage)
        out = subprocess.run(
            ["bash", "-c", 'source <(sed -n "/^packages=(/,/^done$/p" "$1"); '
             'printf "%s\\n" "${packages[@]}"', "_",
             os.path.join(ARGS.src, "deploy/local/install-deps.sh")],
            cwd=os.path.join(ARGS.src, "deploy/local"),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(out.returncode, 0, out.stdout)
        deps = set(out.stdout.split())
        for stage in ("build", "runtime-base"):
            missing = self.packages(stage) - deps
            self.assertEqual(missing, set(), f"install-deps.sh does not install {stage}'s list")

    def test_dockerignore_keeps_build_trees_out(self):
        with open(os.path.join(ARGS.src, ".dockerignore")) as f:
            entries = {l.strip() for l in f if l.strip() and not l.startswith("#")}
        for e in (".git", "build", "build-*", "**/node_modules"):
            self.assertIn(e, entries)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--src", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--smcryptd", required=True)
    p.add_argument("--node_dir", required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
