#!/usr/bin/python3
"""container_test.py — the `container` tests: the smcryptd image run the way deploy/k8s runs it.

Image: --image TAG uses an image already built; --build_dir DIR builds one first with
`deploy/local/image.sh --from-install DIR` (stage runtime-from-install: the Release build's
`cmake --install` tree on the runtime stage users get).

ImageTest: the image's user is numeric and non-root, smcryptd starts in it (--version) with
a read-only root and no capabilities, it holds no other program of smcrypt's (no smcrypt CLI,
no smcrypt-load) and no libcurl nor the Kerberos, LDAP, SSH and RTMP libraries libcurl loads,
and it carries the org.opencontainers.image labels (version that of smcryptd --version,
revision a commit of this repository, created a UTC time).

ProdContainerTest runs the image with podman as the rendered prod overlay's Deployment
runs it: its container args, user, group and fsGroup, read-only root (no tmpfs added),
all capabilities dropped, no privilege escalation, and the keyring and TLS Secrets mounted
read-only in the layout the kubelet writes (files are symlinks into `..data`, a symlink to a
timestamped folder; the Secret's defaultMode; group fsGroup). It checks grpc.health.v1 on
the health port, Hash / Sign / Verify / HybridEncrypt / HybridDecrypt over TLS through the
published port, the keyring size, /metrics, the process's credentials, and then stops the
container as the kubelet does (SIGTERM, SIGKILL after terminationGracePeriodSeconds) with a
streaming call in flight: the call ends OK and smcryptd exits 0 within --shutdown_grace.

KubePlayTest plays the dev and prod overlays with `podman kube play` (the Deployment; the
prod Secret volumes in the kubelet's layout, see the class) and checks the pod's smcryptd
loads the keyring, is SERVING on the health port and runs as the pod spec says.

ReplicasTest plays the dev overlay's Deployment three times (podman 4.3 plays one replica of
a Deployment), reaches the three pods at their addresses on podman's pod network through one
round_robin channel (target ipv4:IP1:PORT,IP2:PORT,IP3:PORT, what dns:/// of the headless
Service gives in Kubernetes), puts a steady load on it and reads each replica's request count
on its /metrics: every replica serves, and each count is within 15 % of their mean.

Exit 77 (ctest SKIP_RETURN_CODE) only when podman is absent, when not run as root (rootful
podman: the Secret files' ownership is the pod's), or when podman cannot run a container on
this host; the reason is printed. Everything else that goes wrong fails.

Usage: container_test.py --src ROOT --proto DIR --work DIR (--image TAG | --build_dir DIR)
"""
import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy"))
from deploy_test import duration_seconds, flag  # noqa: E402  (the pod spec's flags)

ARGS = None
PODMAN = None  # [deploy/local/podman.sh]
IMAGE = None
pb = pb_grpc = health_pb2 = health_pb2_grpc = grpc = None

SM3_ABC = "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
# Kinds of the rendered dev and prod overlays played with `podman kube play`; podman 4.3
# cannot play their others (Service, HorizontalPodAutoscaler, PodDisruptionBudget,
# NetworkPolicy), nor the ServiceMonitor and PrometheusRule that overlays/prometheus-operator
# adds to prod; the `deploy` tests validate those against the schemas.
PLAYABLE_KINDS = {"Deployment", "ConfigMap"}


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


def run(cmd, check=True, **kw):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if check and out.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {out.returncode}:\n{out.stdout}")
    return out


def podman(*args, check=True):
    return run([*PODMAN, *args], check=check)


def render(overlay):
    import yaml
    out = run(["kubectl", "kustomize", os.path.join(ARGS.src, "deploy/k8s/overlays", overlay)])
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def deployment(objects):
    (d,) = [o for o in objects if o["kind"] == "Deployment"]
    pod = d["spec"]["template"]["spec"]
    (c,) = [c for c in pod["containers"] if c["name"] == "smcryptd"]
    return d, pod, c


def openssl(*args):
    run(["openssl", *args])


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def make_keyring(d):
    """The keyring Secret's files: key id -> PEM bytes."""
    os.makedirs(d, exist_ok=True)
    openssl("genpkey", "-algorithm", "SM2", "-out", f"{d}/sm2.pem")
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
            f"{d}/p256.pem")
    with open(f"{d}/sm4.pem", "w") as f:
        f.write("-----BEGIN SM4 KEY-----\n" + base64.b64encode(os.urandom(16)).decode() +
                "\n-----END SM4 KEY-----\n")
    return {n: read_bytes(f"{d}/{n}") for n in ("sm2.pem", "p256.pem", "sm4.pem")}


def make_tls(d):
    """A CA and a server certificate for localhost / 127.0.0.1: the TLS Secret's files."""
    os.makedirs(d, exist_ok=True)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.crt", "-days", "2", "-subj", "/CN=test CA")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{d}/tls.key", "-out", f"{d}/tls.csr", "-subj", "/CN=localhost")
    with open(f"{d}/ext", "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", f"{d}/tls.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
            "-CAcreateserial", "-out", f"{d}/tls.crt", "-days", "2", "-extfile", f"{d}/ext")
    return {n: read_bytes(f"{d}/{n}") for n in ("tls.crt", "tls.key")}


def secret_volume(path, files, mode, gid):
    """Writes FILES (name -> bytes) into PATH as the kubelet's atomic writer does for a
    Secret volume with fsGroup GID: a new `..<timestamp>/` (root:GID, 2755) with the files
    (root:GID, MODE), then `..data` pointed at it by renaming a new symlink over it, then
    `<name> -> ..data/<name>` for each file, then the links of dropped files and the
    previous timestamped folder removed.
    PATH itself (made on first use) is root:GID, 3777. Called again on the same PATH it
    swaps the contents the way an updated Secret is swapped in a running pod."""
    if not os.path.isdir(path):
        os.makedirs(path)
        os.chown(path, 0, gid)
        os.chmod(path, 0o3777)
    data_link = os.path.join(path, "..data")
    old = os.readlink(data_link) if os.path.islink(data_link) else None
    ts = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + f"{time.time_ns() % 10**9:09d}"
    tsdir = os.path.join(path, ts)
    os.mkdir(tsdir)
    for name, data in files.items():
        p = os.path.join(tsdir, name)
        with open(p, "wb") as f:
            f.write(data)
        os.chown(p, 0, gid)
        os.chmod(p, mode)
    os.chown(tsdir, 0, gid)
    os.chmod(tsdir, 0o2755)
    tmp = os.path.join(path, "..data_tmp")
    os.symlink(ts, tmp)
    os.lchown(tmp, 0, gid)
    os.rename(tmp, data_link)
    for name in files:
        link = os.path.join(path, name)
        if not os.path.islink(link):
            os.symlink(os.path.join("..data", name), link)
            os.lchown(link, 0, gid)
    for name in os.listdir(path):  # the links of files the new contents drop
        if not name.startswith(".") and name not in files:
            os.remove(os.path.join(path, name))
    if old:
        shutil.rmtree(os.path.join(path, old))


def host_port(container, port):
    out = podman("port", container, f"{port}/tcp").stdout.strip().splitlines()[0]
    return int(out.rsplit(":", 1)[1])


def health_status(target, service=""):
    """grpc.health.v1 Check's status name, or the RPC error's code name."""
    with grpc.insecure_channel(target) as ch:
        try:
            r = health_pb2_grpc.HealthStub(ch).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=2)
            return health_pb2.HealthCheckResponse.ServingStatus.Name(r.status)
        except grpc.RpcError as e:
            return e.code().name


def wait_serving(container, target, timeout=60):
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        status = health_status(target)
        if status == "SERVING":
            return
        state = podman("inspect", "--format", "{{.State.Status}}", container).stdout.strip()
        if state not in ("running", "created", "configured"):
            break
        time.sleep(0.5)
    logs = podman("logs", container, check=False).stdout
    raise AssertionError(f"{container}: health {status} at {target}; log:\n{logs}")


def check_process(tc, container, pod, c):
    """The container's smcryptd runs as POD and C's securityContext say: runAsUser and
    runAsGroup, fsGroup among its groups, no capabilities at all,
    no_new_privs, the root read-only, and every volumeMount read-only where it says so."""
    psc, csc = pod["securityContext"], c["securityContext"]
    info = json.loads(podman("inspect", container).stdout)[0]
    tc.assertTrue(info["HostConfig"]["ReadonlyRootfs"])
    pid = info["State"]["Pid"]
    with open(f"/proc/{pid}/status") as f:
        status = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
    tc.assertEqual(status["Uid"].split(), [str(psc["runAsUser"])] * 4)
    tc.assertEqual(status["Gid"].split(), [str(psc["runAsGroup"])] * 4)
    tc.assertIn(str(psc["fsGroup"]), status["Groups"].split())
    tc.assertEqual(csc["capabilities"]["drop"], ["ALL"])
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        tc.assertEqual(int(status[cap], 16), 0, cap)
    tc.assertIs(csc["allowPrivilegeEscalation"], False)
    tc.assertEqual(status["NoNewPrivs"], "1")
    tc.assertIs(csc["readOnlyRootFilesystem"], True)
    with open(f"/proc/{pid}/mounts") as f:
        mounts = {l.split()[1]: l.split()[3].split(",") for l in f}
    tc.assertIn("ro", mounts["/"])
    for m in c.get("volumeMounts", []):
        tc.assertIn("ro" if m.get("readOnly") else "rw", mounts[m["mountPath"]], m["name"])


class ImageTest(unittest.TestCase):
    def run_in_image(self, entrypoint, *args, user=None):
        # The image's user with no capabilities, or USER with podman's default ones.
        as_user = ["--user", user] if user else ["--cap-drop", "ALL"]
        return podman("run", "--rm", "--network", "none", "--read-only", *as_user,
                      "--entrypoint", entrypoint, IMAGE, *args).stdout

    def test_smcryptd_starts_as_the_image_user(self):
        info = json.loads(podman("image", "inspect", IMAGE).stdout)[0]["Config"]
        self.assertRegex(info["User"], r"^[1-9][0-9]*:[1-9][0-9]*$")
        self.assertEqual(info["Entrypoint"], ["/usr/local/bin/smcryptd"])
        out = self.run_in_image("/usr/local/bin/smcryptd", "--version")
        self.assertRegex(out, r"^smcryptd \d+\.\d+\.\d+\n")

    def test_image_holds_smcryptd_alone(self):
        self.assertEqual(self.run_in_image("/bin/ls", "/usr/local/bin").split(), ["smcryptd"])
        # As root (the image's user cannot read /root, nor root without capabilities apt's
        # 0700 folders): every file of the image.
        found = self.run_in_image("/usr/bin/find", "/", "-xdev", "-type", "f", "(",
                                  "-name", "smcrypt",
                                  "-o", "-name", "smcrypt-load", "-o", "-name", "libcurl*",
                                  "-o", "-name", "libgssapi_krb5*", "-o", "-name", "libldap*",
                                  "-o", "-name", "libssh2*", "-o", "-name", "librtmp*", ")",
                                  user="0")
        self.assertEqual(found.split(), [])
        packages = set(self.run_in_image("/usr/bin/dpkg-query", "-W", "-f", "${Package}\\n")
                       .split())
        self.assertIn("libgrpc++1.51", packages)  # the query sees the installed packages
        for p in ("libcurl4", "libcurl3-gnutls", "libgssapi-krb5-2", "libkrb5-3",
                  "libldap-2.5-0", "libssh2-1", "librtmp1"):
            self.assertNotIn(p, packages)

    def test_image_labels(self):
        labels = json.loads(podman("image", "inspect", IMAGE).stdout)[0]["Labels"] or {}
        oci = {k.rsplit(".", 1)[1]: v for k, v in labels.items()
               if k.startswith("org.opencontainers.image.")}
        version = re.match(r"smcryptd (\S+)", self.run_in_image("/usr/local/bin/smcryptd",
                                                                "--version")).group(1)
        self.assertEqual(oci.get("title"), "smcryptd")
        self.assertTrue(oci.get("description"))
        self.assertEqual(oci.get("version"), version)
        self.assertRegex(oci.get("created", ""), r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        # A commit of this repository (image.sh labels the image with the one it built from).
        if subprocess.run(["git", "-C", ARGS.src, "rev-parse", "HEAD"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            self.assertRegex(oci.get("revision", ""), r"^[0-9a-f]{40}$")
            known = subprocess.run(["git", "-C", ARGS.src, "cat-file", "-e",
                                    oci["revision"] + "^{commit}"], stderr=subprocess.DEVNULL)
            self.assertEqual(known.returncode, 0, f"revision {oci['revision']} is no commit here")


class ProdContainerTest(unittest.TestCase):
    """The image under the prod overlay's pod spec, run by podman; the tests run in order."""
    NAME = "smcrypt-container-test"

    @classmethod
    def setUpClass(cls):
        objects = render("prod")
        cls.dep, cls.pod, cls.c = deployment(objects)
        pod, c = cls.pod, cls.c
        psc, csc = pod["securityContext"], c["securityContext"]
        cls.uid, cls.gid, cls.fs_group = psc["runAsUser"], psc["runAsGroup"], psc["fsGroup"]
        cls.work = os.path.join(ARGS.work, "prod")
        shutil.rmtree(cls.work, ignore_errors=True)
        os.makedirs(cls.work)
        contents = {"smcrypt-keys": make_keyring(os.path.join(cls.work, "keys-src")),
                    "smcrypt-tls": make_tls(os.path.join(cls.work, "tls-src"))}
        cls.keys_src = os.path.join(cls.work, "keys-src")
        cls.ca = read_bytes(os.path.join(cls.work, "tls-src", "ca.crt"))
        cls.keyring_files = len(contents["smcrypt-keys"])

        cmd = ["run", "-d", "--name", cls.NAME, "--user", f"{cls.uid}:{cls.gid}",
               "--group-add", str(cls.fs_group)]
        # Kubernetes gives a read-only root no writable /tmp or /run: neither does this.
        if csc.get("readOnlyRootFilesystem"):
            cmd += ["--read-only", "--read-only-tmpfs=false"]
        for cap in csc.get("capabilities", {}).get("drop", []):
            cmd += ["--cap-drop", cap]
        if csc.get("allowPrivilegeEscalation") is False:
            cmd += ["--security-opt", "no-new-privileges"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        # volume name -> (host folder, mount path, defaultMode)
        cls.secret_volumes = {}
        for m in c.get("volumeMounts", []):
            secret = volumes[m["name"]]["secret"]
            host = os.path.join(cls.work, "volumes", m["name"])
            secret_volume(host, contents[secret["secretName"]], secret["defaultMode"],
                          cls.fs_group)
            cls.secret_volumes[m["name"]] = (host, m["mountPath"], secret["defaultMode"])
            cmd += ["-v", f"{host}:{m['mountPath']}:{'ro' if m.get('readOnly') else 'rw'}"]
        cls.ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        for p in cls.ports.values():
            cmd += ["-p", f"127.0.0.1::{p}"]
        podman("rm", "-f", cls.NAME, check=False)
        podman(*cmd, IMAGE, *c["args"])
        cls.target = {n: f"127.0.0.1:{host_port(cls.NAME, p)}" for n, p in cls.ports.items()}
        wait_serving(cls.NAME, cls.target["health"])
        creds = grpc.ssl_channel_credentials(root_certificates=cls.ca)
        cls.channel = grpc.secure_channel(cls.target["grpc"], creds,
                                          options=[("grpc.ssl_target_name_override", "localhost")])
        grpc.channel_ready_future(cls.channel).result(timeout=20)
        cls.stub = pb_grpc.CryptoServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "channel", None):
            cls.channel.close()
        if os.environ.get("SMCRYPT_CONTAINER_KEEP") != "1":
            podman("rm", "-f", "-t", "0", cls.NAME, check=False)

    def test_1_runs_as_the_pod_spec_says(self):
        check_process(self, self.NAME, self.pod, self.c)
        self.assertEqual({m for _, m, _ in self.secret_volumes.values()},
                         {m["mountPath"] for m in self.c["volumeMounts"]})

    def test_2_health_serving_on_the_health_port(self):
        self.assertEqual(health_status(self.target["health"]), "SERVING")
        self.assertEqual(health_status(self.target["health"], "smcrypt.v1.CryptoService"),
                         "SERVING")

    def test_3_round_trips_over_tls_with_the_secret_keyring(self):
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        info = self.stub.GetServerInfo(pb.GetServerInfoRequest(run_self_tests=True))
        self.assertTrue(info.self_tests_passed)
        self.assertEqual(info.keyring_size, self.keyring_files)
        self.assertEqual(self.stub.Hash(pb.HashRequest(algorithm=pb.SM3, data=b"abc")).digest.hex(),
                         SM3_ABC)
        data = os.urandom(300)
        sig = self.stub.Sign(pb.SignRequest(algorithm=pb.SM2, key=pb.KeyRef(key_id="sm2"),
                                            data=data)).signature
        for msg, valid in ((data, True), (data + b"x", False)):
            self.assertEqual(self.stub.Verify(pb.VerifyRequest(
                algorithm=pb.SM2, key=pb.KeyRef(key_id="sm2"), data=msg, signature=sig)).valid,
                valid)
        sig = self.stub.Sign(pb.SignRequest(algorithm=pb.ECDSA_P256, key=pb.KeyRef(key_id="p256"),
                                            data=data)).signature
        with open(os.path.join(self.keys_src, "p256.pem"), "rb") as f:
            pk = serialization.load_pem_private_key(f.read(), None).public_key()
        pk.verify(sig, data, ec.ECDSA(hashes.SHA256()))  # raises if invalid
        for alg, key in ((pb.HPKE_SM2_SM3_SM4GCM, "sm2"), (pb.HPKE_P256_SHA256_AES128GCM, "p256")):
            ct = self.stub.HybridEncrypt(pb.HybridEncryptRequest(
                algorithm=alg, key=pb.KeyRef(key_id=key), plaintext=data, info=b"c")).ciphertext
            self.assertEqual(len(ct), len(data) + 88)
            back = self.stub.HybridDecrypt(pb.HybridDecryptRequest(
                algorithm=alg, key=pb.KeyRef(key_id=key), ciphertext=ct, info=b"c"))
            self.assertEqual(back.plaintext, data)
        # --inline_private_keys=deny holds inside the container too.
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.Sign(pb.SignRequest(algorithm=pb.SM2, key=pb.KeyRef(inline_key=b"\x01" * 32),
                                          data=data))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        # The gRPC port speaks TLS only.
        with grpc.insecure_channel(self.target["grpc"]) as plain:
            with self.assertRaises(grpc.RpcError):
                pb_grpc.CryptoServiceStub(plain).Hash(pb.HashRequest(algorithm=pb.SM3), timeout=3)

    def test_4_metrics_count_the_calls(self):
        with urllib.request.urlopen(f"http://{self.target['metrics']}/metrics", timeout=5) as r:
            self.assertEqual(r.status, 200)
            text = r.read().decode()
        for method in ("Hash", "Sign", "HybridEncrypt", "HybridDecrypt"):
            m = re.search(r'^grpc_server_handled_total\{(?=[^}]*grpc_method="%s")'
                          r'(?=[^}]*grpc_code="OK")[^}]*\} (\S+)$' % method, text, re.M)
            self.assertIsNotNone(m, f"no OK count for {method}")
            self.assertGreaterEqual(float(m.group(1)), 1, method)
        self.assertRegex(text, r"(?m)^smcrypt_selftest_ok(\{[^}]*\})? 1$")

    def metric(self, series):
        with urllib.request.urlopen(f"http://{self.target['metrics']}/metrics", timeout=5) as r:
            text = r.read().decode()
        m = re.search(r"^%s (\S+)$" % re.escape(series), text, re.M)
        return float(m.group(1)) if m else None

    def wait_for(self, what, done, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done():
                return
            time.sleep(0.2)
        self.fail(f"{what} not seen within {timeout:.0f} s; log:\n" +
                  podman("logs", self.NAME, check=False).stdout[-3000:])

    def tls_stub(self, ca):
        """A stub on a connection of its own that trusts only CA."""
        ch = grpc.secure_channel(self.target["grpc"], grpc.ssl_channel_credentials(root_certificates=ca),
                                 options=[("grpc.ssl_target_name_override", "localhost"),
                                          ("grpc.use_local_subchannel_pool", 1)])
        return ch, pb_grpc.CryptoServiceStub(ch)

    def handshake_ok(self, ca):
        ch, stub = self.tls_stub(ca)
        try:
            stub.Hash(pb.HashRequest(algorithm=pb.SM3, data=b"abc"), timeout=3)
            return True
        except grpc.RpcError:
            return False
        finally:
            ch.close()

    def test_5_secret_updates_reload_without_a_restart(self):
        """The kubelet's ..data swap of both Secrets in the running container: within
        --reload_interval the new keyring serves (an added key signs, a removed key is
        NOT_FOUND), new handshakes get the new certificate, the connection opened before
        keeps working, and smcryptd is the same process. A bad keyring sent with SIGHUP
        keeps the previous one and is counted as a failed reload."""
        interval = duration_seconds(flag(self.c["args"], "reload_interval"))
        self.assertGreater(interval, 0)
        timeout = 3 * interval + 10
        before = json.loads(podman("inspect", self.NAME).stdout)[0]["State"]
        reloads = 'smcrypt_keyring_reloads_total{result="%s"}'
        self.assertEqual(self.metric(reloads % "failure"), 0)

        # Keyring: sm2 and sm4 kept, p256 removed, sm2-next added.
        host, _, mode = self.secret_volumes["keys"]
        src = os.path.join(self.work, "keys-next")
        os.makedirs(src)
        openssl("genpkey", "-algorithm", "SM2", "-out", f"{src}/sm2-next.pem")
        files = {n: read_bytes(os.path.join(self.keys_src, n)) for n in ("sm2.pem", "sm4.pem")}
        files["sm2-next.pem"] = read_bytes(f"{src}/sm2-next.pem")
        secret_volume(host, files, mode, self.fs_group)

        def signs(key_id):
            try:
                self.stub.Sign(pb.SignRequest(algorithm=pb.SM2, key=pb.KeyRef(key_id=key_id),
                                              data=b"m"), timeout=5)
                return True
            except grpc.RpcError:
                return False

        self.wait_for("the new keyring", lambda: signs("sm2-next"), timeout)
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.Sign(pb.SignRequest(algorithm=pb.ECDSA_P256, key=pb.KeyRef(key_id="p256"),
                                          data=b"m"))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertTrue(signs("sm2"))
        self.assertEqual(self.stub.GetServerInfo(pb.GetServerInfoRequest()).keyring_size, 3)
        self.assertGreaterEqual(self.metric(reloads % "success"), 1)

        # A bad file, sent with SIGHUP: the previous keyring stays, the failure is counted.
        secret_volume(host, {**files, "bad.pem": b"not a PEM file"}, mode, self.fs_group)
        podman("kill", "-s", "HUP", self.NAME)
        self.wait_for("the failed reload", lambda: self.metric(reloads % "failure") == 1, timeout)
        self.assertTrue(signs("sm2-next"))
        self.assertEqual(self.stub.GetServerInfo(pb.GetServerInfoRequest()).keyring_size, 3)
        self.assertIn("keeping the previous 3 keys", podman("logs", self.NAME).stdout)

        # TLS: a certificate from another CA.
        host, _, mode = self.secret_volumes["tls"]
        next_tls = make_tls(os.path.join(self.work, "tls-next"))
        next_ca = read_bytes(os.path.join(self.work, "tls-next", "ca.crt"))
        secret_volume(host, next_tls, mode, self.fs_group)
        self.wait_for("the new certificate", lambda: self.handshake_ok(next_ca), timeout)
        self.assertFalse(self.handshake_ok(self.ca))
        self.assertEqual(self.stub.Hash(pb.HashRequest(algorithm=pb.SM3, data=b"abc")).digest.hex(),
                         SM3_ABC)  # the connection made before the swap
        self.wait_for("the TLS reload count",
                      lambda: self.metric('smcrypt_tls_certificate_reloads_total{result="success"}') >= 1,
                      timeout)

        after = json.loads(podman("inspect", self.NAME).stdout)[0]["State"]
        self.assertEqual((after["Pid"], after["StartedAt"]), (before["Pid"], before["StartedAt"]))

    def test_9_sigterm_drains_a_call_in_flight_and_exits_0(self):
        grace = duration_seconds(flag(self.c["args"], "shutdown_grace"))
        period = self.pod["terminationGracePeriodSeconds"]
        chunks = [os.urandom(64 << 10) for _ in range(12)]
        sent, draining = threading.Event(), threading.Event()

        def requests():
            yield pb.HashStreamRequest(algorithm=pb.SM3, data=chunks[0])
            sent.set()
            draining.wait(15)  # the rest only once smcryptd is draining
            for c in chunks[1:]:
                time.sleep(0.1)
                yield pb.HashStreamRequest(data=c)

        result = {}

        def call():
            try:
                result["resp"] = self.stub.HashStream(requests(), timeout=grace)
            except grpc.RpcError as e:
                result["error"] = e

        t = threading.Thread(target=call)
        t.start()
        self.assertTrue(sent.wait(10))
        time.sleep(0.3)
        # What the kubelet does: SIGTERM, SIGKILL after terminationGracePeriodSeconds.
        start = time.monotonic()
        stop = threading.Thread(target=podman, args=("stop", "-t", str(period), self.NAME))
        stop.start()
        status = "SERVING"
        while status == "SERVING" and time.monotonic() - start < 10:
            time.sleep(0.05)
            status = health_status(self.target["health"])
        draining.set()
        self.assertNotEqual(status, "SERVING", "health still SERVING 10 s after SIGTERM")
        t.join(grace + 5)
        stop.join(period + 10)
        elapsed = time.monotonic() - start
        self.assertNotIn("error", result, result.get("error"))
        from cryptography.hazmat.primitives import hashes
        h = hashes.Hash(hashes.SM3())
        for c in chunks:
            h.update(c)
        self.assertEqual(result["resp"].digest, h.finalize())
        self.assertEqual(result["resp"].total_bytes, sum(len(c) for c in chunks))
        state = json.loads(podman("inspect", self.NAME).stdout)[0]["State"]
        self.assertEqual(state["Status"], "exited")
        self.assertEqual(state["ExitCode"], 0, podman("logs", self.NAME).stdout)
        self.assertLess(elapsed, grace, f"stopped after {elapsed:.1f} s")
        self.assertIn("received SIGTERM", podman("logs", self.NAME).stdout)


class KubePlayTest(unittest.TestCase):
    """`podman kube play` of the rendered overlays, the image replaced by the one under test.

    podman 4.3's Secret volumes are not Kubernetes': it writes every file 0644 root:root
    whatever defaultMode and fsGroup say, writes `data` values without base64-decoding them,
    ignores stringData, and crashes on a secret volume without `optional`. So each Secret
    volume of the Deployment is played as a hostPath volume of the kubelet's layout
    (secret_volume: symlinks into `..data`, defaultMode, group fsGroup), and the Secret
    objects themselves are not played."""

    def play(self, overlay, secrets=None):
        import yaml
        objects = render(overlay)
        played = [o for o in objects if o["kind"] in PLAYABLE_KINDS]
        d, pod, c = deployment(played)
        d["spec"]["replicas"] = 1
        c["image"] = IMAGE
        c["imagePullPolicy"] = "Never"
        work = os.path.join(ARGS.work, f"kube-{overlay}")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        for v in pod.get("volumes", []):
            secret = v.pop("secret")
            host = os.path.join(work, "volumes", v["name"])
            secret_volume(host, secrets[secret["secretName"]], secret["defaultMode"],
                          pod["securityContext"]["fsGroup"])
            v["hostPath"] = {"path": host, "type": "Directory"}
        # A host port for the health port, on loopback only.
        health = None
        for p in c["ports"]:
            if p["name"] == "health":
                p["hostIP"], p["hostPort"] = "127.0.0.1", free_port()
                health = f"127.0.0.1:{p['hostPort']}"
        self.assertIsNotNone(health)
        path = os.path.join(work, "played.yaml")
        with open(path, "w") as f:
            yaml.safe_dump_all(played, f)
        podman("kube", "down", path, check=False)
        self.addCleanup(podman, "kube", "down", path, check=False)
        podman("kube", "play", path)
        prefix = d["metadata"]["name"] + "-pod"
        (ctr,) = [n for n in podman("ps", "-a", "--format", "{{.Names}}").stdout.split()
                  if n.startswith(prefix) and n.endswith("-" + c["name"])]
        wait_serving(ctr, health)
        self.assertEqual(health_status(health, "smcrypt.v1.CryptoService"), "SERVING")
        check_process(self, ctr, pod, c)
        return ctr, c

    def test_dev(self):
        ctr, c = self.play("dev")
        self.assertIn("keyring: 0 keys", podman("logs", ctr).stdout)

    def test_prod_with_its_secrets(self):
        work = os.path.join(ARGS.work, "kube-prod-src")
        shutil.rmtree(work, ignore_errors=True)
        secrets = {"smcrypt-keys": make_keyring(os.path.join(work, "keys")),
                   "smcrypt-tls": make_tls(os.path.join(work, "tls"))}
        ctr, c = self.play("prod", secrets)
        logs = podman("logs", ctr).stdout
        keys_dir = flag(c["args"], "keys_dir")
        self.assertIn(f"keyring: {len(secrets['smcrypt-keys'])} keys from {keys_dir}", logs)


class ReplicasTest(unittest.TestCase):
    """Three replicas of the rendered dev overlay behind one round_robin channel."""
    REPLICAS = 3
    LOAD_SECONDS = 3  # the steady load: 4 threads of back-to-back SM3 Hash calls for 3 s

    def play_replica(self, i, objects):
        import copy
        import yaml
        played = copy.deepcopy([o for o in objects if o["kind"] in PLAYABLE_KINDS])
        d, pod, c = deployment(played)
        d["metadata"]["name"] = f"smcryptd-r{i}"
        d["spec"]["replicas"] = 1
        c["image"] = IMAGE
        c["imagePullPolicy"] = "Never"
        # Reached at the pod's address: podman 4.3 would publish each containerPort on the
        # host's port of the same number, which three replicas cannot share.
        ports = {p["name"]: p["containerPort"] for p in c.pop("ports")}
        work = os.path.join(ARGS.work, "replicas")
        os.makedirs(work, exist_ok=True)
        path = os.path.join(work, f"r{i}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump_all(played, f)
        podman("kube", "down", path, check=False)
        self.addCleanup(podman, "kube", "down", path, check=False)
        podman("kube", "play", path)
        (ctr,) = [n for n in podman("ps", "-a", "--format", "{{.Names}}").stdout.split()
                  if n.startswith(f"smcryptd-r{i}-pod") and n.endswith("-" + c["name"])]
        info = json.loads(podman("inspect", ctr).stdout)[0]
        pod_id = info["Pod"]
        infra = json.loads(podman("pod", "inspect", pod_id).stdout)["InfraContainerID"]
        nets = json.loads(podman("inspect", infra).stdout)[0]["NetworkSettings"]["Networks"]
        (ip,) = {n["IPAddress"] for n in nets.values() if n.get("IPAddress")}
        wait_serving(ctr, f"{ip}:{ports['health']}")
        return ctr, ip, ports

    def handled(self, ip, port):
        with urllib.request.urlopen(f"http://{ip}:{port}/metrics", timeout=5) as r:
            text = r.read().decode()
        return sum(float(m.group(1)) for m in re.finditer(
            r'^grpc_server_handled_total\{(?=[^}]*grpc_method="Hash")(?=[^}]*grpc_code="OK")'
            r'[^}]*\} (\S+)$', text, re.M))

    def test_three_replicas_share_a_steady_load(self):
        objects = render("dev")
        replicas = [self.play_replica(i, objects) for i in range(1, self.REPLICAS + 1)]
        ips = [ip for _, ip, _ in replicas]
        self.assertEqual(len(set(ips)), self.REPLICAS, ips)
        grpc_port, metrics_port = replicas[0][2]["grpc"], replicas[0][2]["metrics"]
        config = {"loadBalancingConfig": [{"round_robin": {}}],
                  "methodConfig": [{"name": [{"service": "smcrypt.v1.CryptoService"},
                                             {"service": "grpc.health.v1.Health"}],
                                    "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.05s",
                                                    "maxBackoff": "1s", "backoffMultiplier": 2,
                                                    "retryableStatusCodes": ["UNAVAILABLE",
                                                                             "CANCELLED"]}}]}
        target = "ipv4:" + ",".join(f"{ip}:{grpc_port}" for ip in ips)
        with grpc.insecure_channel(target, options=[("grpc.service_config", json.dumps(config)),
                                                    ("grpc.enable_retries", 1)]) as ch:
            stub = pb_grpc.CryptoServiceStub(ch)
            request = pb.HashRequest(algorithm=pb.SM3, data=b"abc")
            # Until each replica has answered once: every connection of the channel is up.
            deadline = time.monotonic() + 30
            while min(self.handled(ip, metrics_port) for ip in ips) == 0:
                self.assertLess(time.monotonic(), deadline, "a replica never got a call")
                stub.Hash(request, timeout=5)
            before = [self.handled(ip, metrics_port) for ip in ips]
            errors, made = [], []

            def load(end):
                n = 0
                while time.monotonic() < end:
                    n += 1
                    try:
                        if stub.Hash(request, timeout=10).digest.hex() != SM3_ABC:
                            errors.append("wrong digest")
                    except grpc.RpcError as e:
                        errors.append(e.code().name)
                made.append(n)

            start = time.monotonic()
            threads = [threading.Thread(target=load, args=(start + self.LOAD_SECONDS,))
                       for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - start
        self.assertEqual(errors, [])
        counts = [self.handled(ip, metrics_port) - b for ip, b in zip(ips, before)]
        mean = sum(counts) / len(counts)
        print(f"\n{sum(made)} calls in {elapsed:.1f} s over {self.REPLICAS} replicas; "
              "per replica (/metrics): " +
              ", ".join(f"{ip} {int(n)}" for ip, n in zip(ips, counts)), flush=True)
        self.assertEqual(sum(counts), sum(made))
        for ip, n in zip(ips, counts):
            self.assertGreater(n, 0, ip)
            self.assertLessEqual(abs(n - mean), 0.15 * mean, f"{ip}: {counts}")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def generate_stubs(gen):
    shutil.rmtree(gen, ignore_errors=True)
    os.makedirs(gen)
    plugin = shutil.which("grpc_python_plugin")
    if not shutil.which("protoc") or not plugin:
        raise SystemExit("FAIL: protoc and grpc_python_plugin are needed "
                         "(deploy/local/install-deps.sh installs protobuf-compiler-grpc)")
    common = [f"--plugin=protoc-gen-grpc_python={plugin}", f"--python_out={gen}",
              f"--grpc_python_out={gen}"]
    run(["protoc", "-I", ARGS.proto, *common, "smcrypt/v1/crypto.proto"])
    run(["protoc", "-I", os.path.join(ARGS.proto, "third_party/grpc/health/v1"), *common,
         "health.proto"])
    sys.path.insert(0, gen)


def main():
    global ARGS, PODMAN, IMAGE, pb, pb_grpc, health_pb2, health_pb2_grpc, grpc
    p = argparse.ArgumentParser()
    p.add_argument("--src", required=True)
    p.add_argument("--proto", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--image")
    p.add_argument("--build_dir")
    ARGS, rest = p.parse_known_args()
    if bool(ARGS.image) == bool(ARGS.build_dir):
        p.error("exactly one of --image and --build_dir")
    if shutil.which("podman") is None:
        skip("podman not found (deploy/local/install-deps.sh installs podman and runc)")
    if os.geteuid() != 0:
        skip("the container tests run rootful podman: run them as root")
    PODMAN = [os.path.join(ARGS.src, "deploy/local/podman.sh")]
    os.makedirs(ARGS.work, exist_ok=True)
    if ARGS.build_dir:
        IMAGE = "localhost/smcrypt:container-test"
        out = subprocess.run([os.path.join(ARGS.src, "deploy/local/image.sh"), "--from-install",
                              ARGS.build_dir, "--tag", IMAGE],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(out.stdout[-3000:])
        if out.returncode == 77:
            skip("podman cannot run a container on this host (image.sh said why, above)")
        if out.returncode != 0:
            print(f"FAIL: image.sh exited {out.returncode}")
            sys.exit(1)
    else:
        IMAGE = ARGS.image
        probe = podman("run", "--rm", "--network", "none", "--entrypoint", "/usr/local/bin/smcryptd",
                       IMAGE, "--version", check=False)
        if probe.returncode != 0 and "image not known" not in probe.stdout:
            info = podman("info", check=False)
            if info.returncode != 0:
                skip(f"podman cannot run a container on this host: {info.stdout.strip()}")
        if probe.returncode != 0:
            print(f"FAIL: {IMAGE}: {probe.stdout}")
            sys.exit(1)
    generate_stubs(os.path.join(ARGS.work, "gen"))
    import grpc as grpc_module
    from smcrypt.v1 import crypto_pb2
    from smcrypt.v1 import crypto_pb2_grpc
    import health_pb2 as h2
    import health_pb2_grpc as h2g
    grpc, pb, pb_grpc, health_pb2, health_pb2_grpc = grpc_module, crypto_pb2, crypto_pb2_grpc, h2, h2g
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
