#!/usr/bin/python3
"""The configs and probe scripts of deploy/kubernetes/ (docs/kubernetes.md)
on real processes: three members started by the pods' own start.sh from
the ConfigMap's member configs, and a gateway from its gateway.yaml, each
with its own copy of the pod's file system under a temporary folder. What a
pod cannot have here is replaced, and only that: each member Service's
ClusterIP becomes 127.0.0.1 and each port a free one (three pods share one
host).

- a member started alone is alive (`ctl version`) but not ready (ready.sh:
  no leader among one of three);
- with all three started they elect a leader and ready.sh passes on each;
  the raft port listens on 0.0.0.0 (raft_listen), not on its raft_address;
- after a change of the ConfigMap's member config, reload.sh applies an
  export setting and refuses a restart-only change with exit 4;
- the gateway is ready (`ctl version`), connects to the leader, and alive.sh
  gets a Status-Server answer; with a wrong secret alive.sh fails;
- raft_listen binds libraft's plain TCP transport too: a one-member cluster
  with insecure_plaintext_cluster leads and listens on 0.0.0.0.

Usage: probes_test.py RADIUSWARD_BINARY [--keep]"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manifests_test  # noqa: E402  (the loader and the pods' paths)

SECRET = "testing123"  # etc/demo/clients.conf's secret for 127.0.0.1


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (below the ephemeral range: tests/support/ports.py)


def wait_for(what, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def listening(port):
    """The local addresses of TCP sockets listening on `port` (IPv4)."""
    found = set()
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


class Pods:
    def __init__(self, binary, root):
        self.binary, self.root = binary, root
        self.objects = manifests_test.load(manifests_test.MANIFESTS)
        self.members = self.objects[("ConfigMap", "radiusward-member")]["data"]
        self.gateway = self.objects[("ConfigMap", "radiusward-gateway")]["data"]
        self.ips = {i: self.objects[("Service", f"radiusward-member-{i - 1}")]["spec"]["clusterIP"]
                    for i in range(1, manifests_test.MEMBERS + 1)}
        self.raft = {i: free_port(socket.SOCK_STREAM) for i in self.ips}
        self.submission = {i: free_port(socket.SOCK_STREAM) for i in self.ips}
        self.auth, self.acct = free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_DGRAM)
        self.processes = {}
        self.tls = os.path.join(root, "certs")
        subprocess.run([binary, "certs", "--dir", self.tls, "--members", "3", "--gateways", "k8s"], check=True,
                       capture_output=True, timeout=120)

    def localise(self, text, pod_root, own=None):
        """The pod's text with its paths under pod_root and the Services'
        addresses on loopback; `own` (a member id) also moves the
        0.0.0.0 ports that member binds."""
        text = manifests_test.pod_paths(text, pod_root)
        for i, ip in self.ips.items():
            text = text.replace(f"{ip}:7201", f"127.0.0.1:{self.raft[i]}")
            text = text.replace(f"{ip}:7301", f"127.0.0.1:{self.submission[i]}")
        if own is not None:
            text = text.replace("0.0.0.0:7201", f"0.0.0.0:{self.raft[own]}")
            text = text.replace("0.0.0.0:7301", f"0.0.0.0:{self.submission[own]}")
        text = text.replace("auth_port: 1812", f"auth_port: {self.auth}")
        return text.replace("acct_port: 1813", f"acct_port: {self.acct}")

    def pod_root(self, name, data, own=None):
        """A pod's file system: the ConfigMap, the Secrets, empty volumes."""
        pod_root = os.path.join(self.root, name)
        config = os.path.join(pod_root, "etc/radiusward/config")
        tls = os.path.join(pod_root, "etc/radiusward/tls")
        for path in (config, tls, "etc/radiusward/db", "etc/radiusward/users", "var/lib/radiusward",
                     "run/radiusward"):
            os.makedirs(os.path.join(pod_root, path), exist_ok=True)
        for key, text in data.items():
            with open(os.path.join(config, key), "w") as f:
                f.write(self.localise(text, pod_root, own) if key.endswith(".yaml") else text)
        for name_in_tls in os.listdir(self.tls):
            shutil.copy(os.path.join(self.tls, name_in_tls), tls)
        shutil.copy(os.path.join(self.tls, "gateway-k8s.pem"), os.path.join(tls, "gateway.pem"))
        shutil.copy(os.path.join(self.tls, "gateway-k8s.key"), os.path.join(tls, "gateway.key"))
        shutil.copy(os.path.join(self.tls, "ca.pem"), os.path.join(pod_root, "etc/radiusward/db/ca.pem"))
        users = os.path.join(pod_root, "etc/radiusward/users")
        shutil.copy(os.path.join(manifests_test.ROOT, "etc/demo/users"), os.path.join(users, "users"))
        shutil.copy(os.path.join(manifests_test.ROOT, "etc/demo/clients.conf"), os.path.join(users, "clients.conf"))
        return pod_root

    def env(self, pod_root, **extra):
        return dict(os.environ, RADIUSWARD=self.binary, PATH=os.path.dirname(self.binary) + ":" + os.environ["PATH"],
                    RADIUSWARD_CONFIG_DIR=os.path.join(pod_root, "etc/radiusward/config"),
                    RADIUSWARD_RUN_DIR=os.path.join(pod_root, "run/radiusward"),
                    RADIUSWARD_DATA=os.path.join(pod_root, "var/lib/radiusward"), **extra)

    def start_member(self, ordinal):
        name = f"radiusward-member-{ordinal}"
        pod_root = self.pod_root(name, self.members, own=ordinal + 1)
        log = open(os.path.join(self.root, f"{name}.log"), "wb")
        self.processes[name] = (subprocess.Popen(
            ["sh", os.path.join(pod_root, "etc/radiusward/config/start.sh")], stdout=log, stderr=subprocess.STDOUT,
            env=self.env(pod_root, HOSTNAME=name, RADIUSWARD_BOOTSTRAP="true", PGPASSWORD="unused")), pod_root)

    def start_gateway(self):
        name = "radiusward-gateway"
        pod_root = self.pod_root(name, self.gateway)
        log = open(os.path.join(self.root, f"{name}.log"), "wb")
        self.processes[name] = (subprocess.Popen(
            [self.binary, "gateway", "--config", os.path.join(pod_root, "etc/radiusward/config/gateway.yaml")],
            stdout=log, stderr=subprocess.STDOUT), pod_root)

    def admin(self, name, query, *flags):
        pod_root = self.processes[name][1]
        return subprocess.run([self.binary, "ctl", "--socket", os.path.join(pod_root, "run/radiusward/admin.sock"),
                               query, *flags], capture_output=True, text=True, timeout=30)

    def script(self, name, key, **extra):
        pod_root = self.processes[name][1]
        return subprocess.run(["sh", os.path.join(pod_root, "etc/radiusward/config", key)], capture_output=True,
                              text=True, timeout=30, env=self.env(pod_root, **extra))

    def alive(self, name):
        assert self.processes[name][0].poll() is None, f"{name} exited:\n{self.log_tail(name)}"

    def log_tail(self, name):
        with open(os.path.join(self.root, f"{name}.log"), errors="replace") as f:
            return "".join(f.readlines()[-20:])

    def stop(self):
        for process, _ in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process, _ in self.processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def run(pods):
    first = "radiusward-member-0"
    pods.start_member(0)
    wait_for(f"{first}'s admin API", lambda: pods.admin(first, "version").returncode == 0, 60)
    pods.alive(first)
    alone = pods.script(first, "ready.sh")
    assert alone.returncode == 1, f"ready.sh passed on one member of three: {alone.stdout}{alone.stderr}"
    print(f"{first} alone: alive, not ready ({alone.stderr.strip()})")

    for ordinal in (1, 2):
        pods.start_member(ordinal)
    members = [f"radiusward-member-{o}" for o in range(3)]
    for name in members:
        wait_for(f"{name} ready", lambda: pods.script(name, "ready.sh").returncode == 0, 90)
        pods.alive(name)
    print("all three members ready")
    for i in (1, 2, 3):
        bound = listening(pods.raft[i])
        assert bound == {"0.0.0.0"}, f"member {i}'s raft port {pods.raft[i]} listens on {bound}, not 0.0.0.0"
    print("each raft port listens on 0.0.0.0 (raft_listen), peers dial 127.0.0.1 (raft_address)")
    reload_after_a_configmap_change(pods, members[1])

    gateway = "radiusward-gateway"
    pods.start_gateway()
    wait_for("the gateway's readiness (ctl version)", lambda: pods.admin(gateway, "version").returncode == 0, 60)
    wait_for("the gateway connected to the leader",
             lambda: '"state":"ready"' in pods.admin(gateway, "status", "--json", "--grace", "0").stdout, 60)
    # As the kubelet does (failureThreshold 3), a probe may be tried again
    # on a loaded machine; it must pass within a few tries.
    answered = []
    wait_for("alive.sh answered", lambda: answered.append(pods.script(
        gateway, "alive.sh", RADIUSWARD_AUTH_PORT=str(pods.auth), RADIUSWARD_PROBE_SECRET=SECRET)) or
        answered[-1].returncode == 0, 30)
    if len(answered) > 1:
        print(f"alive.sh answered on try {len(answered)}: {answered[0].stdout}{answered[0].stderr}")
    wrong = pods.script(gateway, "alive.sh", RADIUSWARD_AUTH_PORT=str(pods.auth), RADIUSWARD_PROBE_SECRET="wrong")
    assert wrong.returncode != 0, "alive.sh passed with a wrong secret"
    print("gateway ready, connected, and alive.sh answered (Status-Server); a wrong secret fails it")
    pods.alive(gateway)


def reload_after_a_configmap_change(pods, name):
    """docs/kubernetes.md "Changed configuration": the ConfigMap's member
    config changes under the pod; reload.sh makes the member's config again
    and reloads it. An export setting is applied (its /config shows it); a
    restart-only change (the log level) is rejected, exit 4, and changes
    nothing."""
    pod_root = pods.processes[name][1]
    id_ = int(name.rsplit("-", 1)[1]) + 1
    source = os.path.join(pod_root, "etc/radiusward/config", f"member-{id_}.yaml")
    with open(source) as f:
        original = f.read()
    assert "  postgresql:\n" in original, original
    with open(source, "w") as f:
        f.write(original.replace("  postgresql:\n", "  batch_records_max: 500\n  postgresql:\n", 1))
    done = pods.script(name, "reload.sh", HOSTNAME=name)
    assert done.returncode == 0, f"reload.sh: exit {done.returncode}: {done.stdout}{done.stderr}"
    config = json.loads(pods.admin(name, "config", "--json").stdout)
    assert config["config"]["export"]["batch_records_max"] == 500, config["config"]["export"]
    assert config["config"]["bootstrap"] is True, "reload.sh lost the bootstrap line start.sh wrote"
    with open(source, "w") as f:
        f.write(original.replace("logging: {level: info", "logging: {level: debug", 1))
    refused = pods.script(name, "reload.sh", HOSTNAME=name)
    assert refused.returncode == 4, f"reload.sh of a logging change: exit {refused.returncode}: {refused.stderr}"
    assert "the logging section changed: needs a restart" in refused.stderr, refused.stderr
    config = json.loads(pods.admin(name, "config", "--json").stdout)
    assert config["config"]["export"]["batch_records_max"] == 500 and config["config"]["logging"]["level"] == "info"
    pods.alive(name)
    print(f"{name}: reload.sh applied a ConfigMap change of the export, refused one of the log level (exit 4)")


def plaintext_raft_listen(binary, root):
    """The manifests use TLS; the plaintext transport takes raft_listen
    through libraft's own bind address."""
    raft, submission = free_port(socket.SOCK_STREAM), free_port(socket.SOCK_STREAM)
    folder = os.path.join(root, "plaintext")
    os.makedirs(folder)
    config = os.path.join(folder, "member.yaml")
    with open(config, "w") as f:
        f.write(f"id: 1\ndata_dir: data\nraft_address: 127.0.0.1:{raft}\nraft_listen: 0.0.0.0:{raft}\n"
                f"submission_listen: 127.0.0.1:{submission}\nadmin_socket: admin.sock\n"
                f"members:\n  - {{id: 1, raft: 127.0.0.1:{raft}, submission: 127.0.0.1:{submission}}}\n"
                "insecure_plaintext_cluster: true\n")
    log_path = os.path.join(folder, "member.log")
    with open(log_path, "wb") as log:
        member = subprocess.Popen([binary, "member", "--config", config], stdout=log, stderr=subprocess.STDOUT)
    try:
        socket_path = os.path.join(folder, "admin.sock")
        wait_for("the plaintext member leading", lambda: '"raft_role":"leader"' in subprocess.run(
            [binary, "ctl", "--socket", socket_path, "status", "--json", "--grace", "0"], capture_output=True,
            text=True, timeout=30).stdout,
            60)
        bound = listening(raft)
        assert bound == {"0.0.0.0"}, f"plaintext raft port {raft} listens on {bound}, not 0.0.0.0"
    except AssertionError:
        with open(log_path, errors="replace") as f:
            print(f.read()[-3000:], file=sys.stderr)
        raise
    finally:
        member.send_signal(signal.SIGTERM)
        member.wait(timeout=15)
    print("plaintext: a one-member cluster leads, its raft port listens on 0.0.0.0")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    keep = "--keep" in sys.argv[2:]
    root = tempfile.mkdtemp(prefix="rw-k8s-probes-")
    pods = Pods(binary, root)
    try:
        run(pods)
        plaintext_raft_listen(binary, root)
    except AssertionError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        for name in pods.processes:
            print(f"--- {name}\n{pods.log_tail(name)}", file=sys.stderr)
        print(f"FAILED: {error}", file=sys.stderr)  # again, after the logs
        return 1
    finally:
        pods.stop()
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
