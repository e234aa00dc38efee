"""A real radiusward deployment for the fault tests: three `radiusward
member` processes and one or more `radiusward gateway`s on loopback, with configs
written in the formats of docs/configuration.md, started, killed (SIGKILL)
and restarted as whole processes. Nothing is simulated: raft runs over TCP,
records are fsynced in the members' data folders, and the state is read back
through each process's admin API with `radiusward ctl`.

`deployment()` builds what every fault scenario runs (docs/RELIABILITY.md,
"How a fault scenario runs"): three members, two gateways, and the members'
exporter into a real PostgreSQL that the cluster owns and closes."""

import collections
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402


def export_yaml(pg, via_socket=False):
    """The members' export: section into `pg` (docs/configuration.md),
    retrying fast so that a scenario's outage ends promptly."""
    host = pg.dir if via_socket else "127.0.0.1"
    return (f"export:\n  postgresql:\n    conninfo: \"host={host} port={pg.port} user=postgres "
            "dbname=postgres connect_timeout=5\"\n  retry_initial_ms: 50\n  retry_max_ms: 1000\n")


def deployment(binary, root, cluster_class=None, pg_options="", **kwargs):
    """What every fault scenario runs (issue 12): three members, two
    gateways sharing the RADIUS ports, and the exporter into a PostgreSQL
    started here; the returned cluster closes it in finish(). `kwargs` go
    to the cluster (member_extra, data_dirs, ...)."""
    from postgres_fixture import PostgresServer
    pg = PostgresServer(options=pg_options)
    kwargs.setdefault("gateways", 2)
    try:
        return (cluster_class or Cluster)(binary, root, pg=pg, **kwargs)
    except BaseException:
        pg.close()
        raise


class Cluster:
    """Three members and one or more gateways under `root`. Processes are
    addressed by name: "member-1".."member-3", and "gateway" (or, with
    several, "gateway-1".., all bound to the same ports with SO_REUSEPORT so
    that the kernel spreads NASes over them by source address and port)."""

    SECRET = "testing123"

    def __init__(self, binary, root, members=3, gateways=1, secret=None, users=None, workers=1,
                 log_level="info", prefix=(), member_extra="", gateway_extra="", tls=True, data_dirs=None,
                 pg=None, pg_via_socket=False, gateway_accounting=""):
        self.binary = binary
        # A tests/support/postgres_fixture.py server the members export into
        # (the export: section goes first in member_extra); finish() closes
        # it. pg_via_socket: through its Unix socket, for members in network
        # namespaces (tests/fault/netns_fixture.py).
        self.pg = pg
        if pg is not None:
            member_extra = export_yaml(pg, pg_via_socket) + member_extra
        self.root = root
        self.secret = secret or self.SECRET
        self.users = users
        self.workers = workers
        self.log_level = log_level
        self.prefix = list(prefix)  # e.g. ["taskset", "-c", "0"]
        self.member_extra = member_extra  # YAML appended to each member config (export:)
        self.gateway_extra = gateway_extra  # YAML appended to each gateway config (sql_users:)
        # Keys added to each gateway's accounting: section, "key: value\n" each.
        self.gateway_accounting = gateway_accounting
        # False: both cluster ports in the explicit plaintext mode (loopback
        # only, docs/security.md), for the bench's TLS-cost comparison.
        self.tls = tls
        # {member id: folder} to put a member's data elsewhere than
        # root/member-<id> (e.g. on its own powerfs mount, power_fault_test.py).
        self.data_dirs = dict(data_dirs or {})
        self.ids = list(range(1, members + 1))
        self.gateways = ["gateway"] if gateways == 1 else [f"gateway-{k}" for k in range(1, gateways + 1)]
        self.processes = {}
        self.logs = {}
        os.makedirs(os.path.join(root, "admin"), exist_ok=True)
        os.makedirs(os.path.join(root, "logs"), exist_ok=True)
        self.raft = {i: free_port() for i in self.ids}
        self.submission = {i: free_port() for i in self.ids}
        self.auth_port = free_port(socket.SOCK_DGRAM)
        self.acct_port = free_port(socket.SOCK_DGRAM)
        self._write_configs()

    # --- configuration -----------------------------------------------------

    def _make_certificates(self):
        """The cluster CA and every process's certificate, made by `radiusward
        certs` (docs/security.md): the cluster runs with TLS on, as deployed."""
        self.certs = os.path.join(self.root, "certs")
        gateway_names = ",".join(self.gateways)
        subprocess.run([self.binary, "certs", "--dir", self.certs, "--members", str(len(self.ids)),
                        "--gateways", gateway_names], check=True, stdout=subprocess.DEVNULL, timeout=60)

    def tls_yaml(self, key, common_name, indent=""):
        if not self.tls:
            return f"{indent}insecure_plaintext_cluster: true\n"
        c = self.certs
        return (f"{indent}{key}: {{ca: {c}/ca.pem, cert: {c}/{common_name}.pem, "
                f"key: {c}/{common_name}.key, crl: {c}/crl.pem}}\n")

    def _write_configs(self):
        self._make_certificates()
        book = "".join(
            f"  - {{id: {i}, raft: 127.0.0.1:{self.raft[i]}, submission: 127.0.0.1:{self.submission[i]}}}\n"
            for i in self.ids)
        for i in self.ids:
            with open(self.config_path(f"member-{i}"), "w") as f:
                f.write(f"id: {i}\n"
                        f"data_dir: {self.data_dirs.get(i, f'member-{i}')}\n"
                        f"raft_address: 127.0.0.1:{self.raft[i]}\n"
                        f"submission_listen: 127.0.0.1:{self.submission[i]}\n"
                        f"admin_socket: admin/member-{i}.sock\n"
                        f"members:\n{book}"
                        + self.tls_yaml("cluster_tls", f"member-{i}") +
                        f"logging: {{level: {self.log_level}}}\n"
                        f"{self.member_extra}")
        users = self.users or os.path.join(self.root, "users")
        if not self.users:
            with open(users, "w") as f:
                f.write('alice Cleartext-Password := "wonderland"\n')
        with open(os.path.join(self.root, "clients.conf"), "w") as f:
            f.write("client localhost {\n  ipaddr = 127.0.0.1\n"
                    f"  secret = {self.secret}\n  shortname = localhost\n"
                    "  require_message_authenticator = no\n}\n")
        members = ", ".join(f"{{id: {i}, address: 127.0.0.1:{self.submission[i]}}}" for i in self.ids)
        for name in self.gateways:
            with open(self.config_path(name), "w") as f:
                f.write("listen: [127.0.0.1]\n"
                        f"auth_port: {self.auth_port}\n"
                        f"acct_port: {self.acct_port}\n"
                        f"workers: {self.workers}\n"
                        f"share_ports: {'true' if len(self.gateways) > 1 else 'false'}\n"
                        f"users_file: {users}\n"
                        "clients_file: clients.conf\n"
                        f"admin_socket: admin/{name}.sock\n"
                        f"accounting:\n  members: [{members}]\n"
                        + "".join(f"  {line}\n" for line in self.gateway_accounting.splitlines() if line)
                        + self.tls_yaml("tls", f"gateway-{name}", "  ") +
                        f"logging: {{level: {self.log_level}}}\n"
                        f"{self.gateway_extra}")

    def config_path(self, name):
        return os.path.join(self.root, f"{name}.yaml")

    def socket_path(self, name):
        return os.path.join(self.root, "admin", f"{name}.sock")

    # --- processes ---------------------------------------------------------

    def start(self, name, binary=None, env=None, args=()):
        """Starts `name`; `binary` runs another build than the cluster's (a
        rolling upgrade), `env` adds variables to its environment (e.g.
        LD_PRELOAD of libfaketime for a clock that jumps in that process
        only), `args` are extra command-line flags (e.g. ["--recover-alone"]
        for a member)."""
        assert name not in self.processes or self.processes[name].poll() is not None, name
        command = "gateway" if name.startswith("gateway") else "member"
        log = open(os.path.join(self.root, "logs", f"{name}.log"), "ab")
        self.logs[name] = log
        self.processes[name] = subprocess.Popen(
            self.prefix + [binary or self.binary, command, "--config", self.config_path(name)] + list(args),
            stdout=log, stderr=subprocess.STDOUT, cwd=self.root,
            env=dict(os.environ, **env) if env else None,
            start_new_session=True)

    def start_all(self):
        for i in self.ids:
            self.start(f"member-{i}")
        for name in self.gateways:
            self.start(name)

    def start_ready(self):
        """Starts every process and waits until a leader leads and every
        gateway's submission connection is ready; returns the leader's id."""
        self.start_all()
        leader = self.wait_leader()
        self.wait_gateway_connected()
        return leader

    def kill(self, name, sig=signal.SIGKILL, wait=True):
        process = self.processes[name]
        process.send_signal(sig)
        if wait:
            process.wait(timeout=30)

    def stop(self, name, timeout=30):
        """SIGTERM, as an orchestrator stops a process, and waits for it to
        exit; returns its exit status (0 after a clean stop,
        docs/operations.md)."""
        process = self.processes[name]
        process.send_signal(signal.SIGTERM)
        return process.wait(timeout=timeout)

    def metrics(self, name):
        """`name`'s /metrics as {"metric{labels}": value}, or None."""
        body = self.ctl(name, "metrics")
        if body is None:
            return None
        values = {}
        for line in body.splitlines():
            if line and not line.startswith("#"):
                key, _, value = line.rpartition(" ")
                try:
                    values[key] = float(value)
                except ValueError:
                    pass
        return values

    def running(self, name):
        return name in self.processes and self.processes[name].poll() is None

    def stop_all(self):
        for name, process in self.processes.items():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for name, process in self.processes.items():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for log in self.logs.values():
            log.close()

    def finish(self, ok, keep=False, remove=True):
        """Stops everything (PostgreSQL too); on failure prints each
        process's log tail. Keeps the root folder on failure or when asked,
        else removes it; remove=False leaves that to the caller (a root
        with mounts in it)."""
        self.stop_all()
        if not ok:
            for name in [f"member-{i}" for i in self.ids] + self.gateways:
                print(f"--- {name} log tail ---\n{self.log_tail(name)}")
        if self.pg is not None:
            if not ok:
                print(f"--- postgresql log tail ---\n{self.pg.logs()[-3000:]}")
            self.pg.close()
            self.pg = None
        if not remove:
            return
        if keep or not ok:
            print(f"kept {self.root}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, name, lines=40):
        path = os.path.join(self.root, "logs", f"{name}.log")
        try:
            with open(path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    # --- admin API ---------------------------------------------------------

    def ctl(self, name, query):
        """The body of GET /<query> on `name`'s admin socket, or None.
        `--json` prints bodies as received; `status` answers 3 for an
        unhealthy process, with its body all the same, and `--grace 0`
        keeps it from waiting for a leader (docs/admin_api.md)."""
        extra = {"status": ["--json", "--grace", "0"], "sessions": ["--json"]}.get(query, [])
        result = subprocess.run([self.binary, "ctl", "--socket", self.socket_path(name), query, *extra],
                                capture_output=True, text=True, timeout=30)
        answered = (0, 3) if query == "status" else (0,)
        return result.stdout if result.returncode in answered else None

    def status(self, name):
        body = self.ctl(name, "status")
        return json.loads(body) if body else None

    def records(self, name):
        body = self.ctl(name, "records")
        if body is None:
            return None
        return [json.loads(line) for line in body.splitlines() if line.strip()]

    def leader(self):
        """The id of the member that says it leads, or None."""
        for i in self.ids:
            name = f"member-{i}"
            if not self.running(name):
                continue
            status = self.status(name)
            if status and status.get("raft_role") == "leader":
                return i
        return None

    def wait_leader(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            leader = self.leader()
            if leader is not None:
                return leader
            time.sleep(0.05)
        raise AssertionError("no leader within %ss\n%s" % (
            timeout, "\n".join(self.log_tail(f"member-{i}") for i in self.ids)))

    def pids(self):
        return {name: p.pid for name, p in self.processes.items() if p.poll() is None}

    def wait_gateway_connected(self, timeout=30):
        deadline = time.monotonic() + timeout
        for name in self.gateways:
            while True:
                status = self.status(name)
                if status and status.get("submission", {}).get("state") == "ready":
                    break
                if time.monotonic() > deadline:
                    raise AssertionError(f"{name} not connected to the leader\n" + self.log_tail(name))
                time.sleep(0.05)

    def wait_converged(self, timeout=60):
        """Waits until every member holds the same records (same log index
        and key, in the same order) and returns them."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            listings = [self.records(f"member-{i}") for i in self.ids]
            if all(listing is not None for listing in listings):
                identities = [[(r["index"], r["key"]) for r in listing] for listing in listings]
                if all(identity == identities[0] for identity in identities):
                    return listings[0]
                last = [len(listing) for listing in listings]
            time.sleep(0.2)
        raise AssertionError(f"members did not converge within {timeout}s (records held: {last})")

    def compare_acknowledged(self, acked_log, timeout=60):
        """Waits for the members to converge, then compares what they hold
        with the generator's acknowledged log ("Acct-Session-Id Status" per
        line). Returns (acknowledged, records, missing, twice): the logged
        acknowledgements, the records held, the acknowledged ones not held,
        and the (session, status) pairs held more than once."""
        with open(acked_log) as f:
            acked = [tuple(line.split()[:2]) for line in f if line.strip()]
        records = self.wait_converged(timeout)
        held = collections.Counter(
            (str(r["attributes"]["Acct-Session-Id"]), str(r["attributes"]["Acct-Status-Type"])) for r in records)
        missing = [k for k in acked if held[k] == 0]
        twice = [k for k, n in held.items() if n > 1]
        return acked, records, missing, twice

    # --- load --------------------------------------------------------------

    def load(self, rate, duration_s, acked_log, report, timeout_ms=1000, retries=4,
             target_host="127.0.0.1", exec_prefix=()):
        """Starts `radiusward bench run` sending Start/Interim/Stop of fresh
        sessions through the gateway at a steady rate; returns the Popen.
        `target_host` and `exec_prefix` place the generator elsewhere (in a
        network namespace, tests/fault/netns_fixture.py)."""
        return subprocess.Popen(
            list(exec_prefix) + [self.binary, "bench", "run", "--scenario", "acct",
             "--target", f"{target_host}:{self.auth_port}", "--acct-target", f"{target_host}:{self.acct_port}",
             "--secret", self.secret, "--rate", str(rate), "--duration-s", str(duration_s),
             "--timeout-ms", str(timeout_ms), "--retries", str(retries),
             "--acked-log", acked_log, "--json", report, "--no-require-message-authenticator"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
