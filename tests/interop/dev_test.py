#!/usr/bin/python3
"""Interop: `radiusward dev` as an operator uses it. It generates the configs
under a fresh folder, starts three members and a gateway, and supervises
them: radtest (freeradius-utils) is answered, a gateway killed with SIGKILL
is restarted and answers again, a second run reuses the configs (the raft
addresses never change) with new ports from the command line, SIGTERM stops
every child and exits 0, and a SIGKILL of dev takes its children with it.
Once `radiusward member` exists and the gateway takes `accounting:`,
radclient accounting is acknowledged, `radiusward ctl records` lists the
record, and the member configs say `bootstrap: false`."""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import unittest

from radiusward_fixture import binary_from_argv, free_udp_port, read, run_tool, wait_for

BINARY = binary_from_argv()
ROOT = os.environ.get("RW_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
USERS = os.path.join(ROOT, "etc", "demo", "users")
CLIENTS = os.path.join(ROOT, "etc", "demo", "clients.conf")


def members_available():
    """True once the `member` subcommand is part of the binary. Without it,
    `member --help` prints the top-level help, also with status 0."""
    done = subprocess.run([BINARY, "member", "--help"], capture_output=True, text=True)
    return done.returncode == 0 and "Usage: radiusward member" in done.stdout


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class Dev:
    """A running `radiusward dev` whose output goes to a log file."""

    def __init__(self, dir, log_name, *args):
        self.dir = dir
        self.log_path = os.path.join(dir, log_name)
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([BINARY, "dev", "--dir", dir, "--restart-delay-ms", "200",
                                         "--stop-timeout-ms", "5000", *args],
                                        stdout=self.log, stderr=subprocess.STDOUT)

    def read_log(self):
        if not self.log.closed:
            self.log.flush()
        return read(self.log_path)

    def children(self):
        """{name: pid} of the running children, by their command line."""
        found = {}
        try:
            with open("/proc/%d/task/%d/children" % (self.process.pid, self.process.pid)) as f:
                pids = [int(p) for p in f.read().split()]
        except FileNotFoundError:
            return found
        for pid in pids:
            try:
                with open("/proc/%d/cmdline" % pid) as f:
                    argv = f.read().split("\0")
            except FileNotFoundError:
                continue
            if len(argv) > 3 and argv[1] == "gateway":
                found["gateway"] = pid
            elif len(argv) > 3 and argv[1] == "member":
                found[os.path.basename(argv[3])[:-len(".yaml")]] = pid
        return found

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=timeout)
        if not self.log.closed:
            self.log.close()
        return self.process.returncode


def radtest(port):
    code, out = run_tool(["radtest", "alice", "wonderland", "127.0.0.1:%d" % port, "0", "testing123"], timeout=20)
    return code == 0 and "Received Access-Accept" in out


class DevTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rw-dev-")
        self.runs = []

    def tearDown(self):
        for run in self.runs:
            if run.process.poll() is None:
                run.process.kill()
                run.process.wait()
            if not run.log.closed:
                run.log.close()
        self.saved_logs = [(run.log_path, read(run.log_path)) for run in self.runs]
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, result=None):
        # On failure, the logs of every run say what the processes did.
        failures = len(result.failures) + len(result.errors) if result else 0
        outcome = super().run(result)
        if result and len(result.failures) + len(result.errors) > failures:
            for path, text in getattr(self, "saved_logs", []):
                print("---- %s ----\n%s" % (path, text))
        return outcome

    def start(self, log_name, *args):
        run = Dev(self.dir, log_name, *args)
        self.runs.append(run)
        return run

    def test_supervises_restarts_reuses_and_stops(self):
        auth_port, acct_port = free_udp_port(), free_udp_port()
        audit = os.path.join(self.dir, "audit.log")
        dev = self.start("dev-1.log", "--users", USERS, "--clients", CLIENTS,
                         "--auth-port", str(auth_port), "--acct-port", str(acct_port), "--audit-log", audit)
        try:
            wait_for("radtest answered", lambda: radtest(auth_port))
            log = dev.read_log()
            self.assertIn("radtest alice wonderland 127.0.0.1:%d 0 testing123" % auth_port, log)
            self.assertIn("radclient -x 127.0.0.1:%d acct testing123" % acct_port, log)
            self.assertIn("ctl --dir %s --member 1 records" % self.dir, log)
            for name in ("member-1", "member-2", "member-3", "gateway"):
                self.assertIn("started %s (pid" % name, log)
                self.assertTrue(os.path.exists(os.path.join(self.dir, name + ".yaml")))
            self.assertTrue(os.path.isdir(os.path.join(self.dir, "admin")))
            gateway = read(os.path.join(self.dir, "gateway.yaml"))
            self.assertIn("admin_socket: admin/gateway.sock", gateway)
            self.assertIn("accounting:\n  members:\n    - {id: 1, address: 127.0.0.1:", gateway)
            # The cluster runs with TLS: dev made the certificates itself, keys 0600.
            self.assertIn("  tls:\n    ca: certs/ca.pem\n", gateway)
            for name in ("ca", "member-1", "member-2", "member-3", "gateway-dev"):
                self.assertEqual(os.stat(os.path.join(self.dir, "certs", name + ".key")).st_mode & 0o777, 0o600)
            members_before = [read(os.path.join(self.dir, "member-%d.yaml" % i)) for i in (1, 2, 3)]

            # kill -9 of the gateway: dev says so, restarts it, and it answers again.
            old = wait_for("the gateway child", lambda: dev.children().get("gateway"))
            seen = set(dev.children().values())
            os.kill(old, signal.SIGKILL)
            wait_for("the restart notice",
                     lambda: "gateway exited (killed by signal 9); restarting in 200 ms" in dev.read_log())
            new = wait_for("a new gateway", lambda: (dev.children().get("gateway") or old) != old
                           and dev.children()["gateway"])
            self.assertNotEqual(new, old)
            wait_for("radtest answered after the restart", lambda: radtest(auth_port))
            # --audit-log reached the gateway, and its chain survived the kill -9
            # (continued in the same file, or after a torn tail in a new one).
            wait_for("two accepts in the audit log",
                     lambda: os.path.exists(audit) and
                     sum('"decision":"accept"' in line for name in (audit + ".1", audit) if os.path.exists(name)
                         for line in read(name).splitlines()) >= 2)
            files = [name for name in (audit + ".1", audit) if os.path.exists(name)]
            verified = subprocess.run([BINARY, "audit", "verify", *files], capture_output=True, text=True,
                                      timeout=30)
            self.assertEqual(verified.returncode, 0, verified.stdout)

            # Needs the member subcommand and a gateway that takes `accounting:`.
            if members_available() and "accounting is off" not in dev.read_log():
                self.check_accounting(dev, acct_port)

            seen |= set(dev.children().values())
            self.assertEqual(dev.stop(), 0, dev.read_log())
            self.assertIn("SIGTERM: stopping every process", dev.read_log())
            for pid in seen:
                self.assertFalse(alive(pid), "pid %d outlived radiusward dev" % pid)
        finally:
            dev.stop(signal.SIGKILL)

        # A second run reuses the configs: raft addresses unchanged, the new
        # ports from the command line in gateway.yaml, the rest (users,
        # clients, accounting port) as the first run wrote it.
        auth_port2 = free_udp_port()
        dev2 = self.start("dev-2.log", "--auth-port", str(auth_port2))
        try:
            wait_for("radtest answered on the new port", lambda: radtest(auth_port2))
            for i, before in enumerate(members_before, start=1):
                after = read(os.path.join(self.dir, "member-%d.yaml" % i))
                raft = re.compile(r"^raft_address: .*$", re.M)
                self.assertEqual(raft.search(after).group(0), raft.search(before).group(0))
                # Only `bootstrap` may change (to false once the cluster formed,
                # which may already have happened when `before` was read).
                self.assertEqual(after.replace("bootstrap: false", "bootstrap: true"),
                                 before.replace("bootstrap: false", "bootstrap: true"))
            gateway = read(os.path.join(self.dir, "gateway.yaml"))
            self.assertIn("\nauth_port: %d\n" % auth_port2, gateway)
            self.assertIn("\nacct_port: %d\n" % acct_port, gateway)

            # kill -9 of dev itself: the children die with it (PR_SET_PDEATHSIG).
            expected = 4 if members_available() else 1
            children = wait_for("the children", lambda: len(dev2.children()) == expected and dev2.children())
            dev2.stop(signal.SIGKILL)
            wait_for("children gone after dev was killed",
                     lambda: not any(alive(pid) for pid in children.values()), timeout=30)
        finally:
            dev2.stop(signal.SIGKILL)

    def test_serves_eap_from_its_own_test_certificates(self):
        # Without --tls-* flags, dev makes a CA, a server and a client
        # certificate and a CRL, serves EAP-TLS, PEAP and EAP-TTLS with them,
        # and prints eapol_test lines that work as printed.
        auth_port, acct_port = free_udp_port(), free_udp_port()
        dev = self.start("dev-eap.log", "--users", USERS, "--clients", CLIENTS,
                         "--auth-port", str(auth_port), "--acct-port", str(acct_port))
        try:
            wait_for("radtest answered", lambda: radtest(auth_port))
            eap_dir = os.path.join(self.dir, "eap-certs")
            for name in ("ca.pem", "gateway-eap-server.pem", "gateway-eap-client.pem", "crl.pem"):
                self.assertTrue(os.path.exists(os.path.join(eap_dir, name)), name)
            for name in ("ca", "gateway-eap-server", "gateway-eap-client"):
                self.assertEqual(os.stat(os.path.join(eap_dir, name + ".key")).st_mode & 0o777, 0o600)
            gateway = read(os.path.join(self.dir, "gateway.yaml"))
            self.assertIn("  methods: [tls, peap, ttls, md5]\n", gateway)
            log = dev.read_log()
            for conf in ("eapol-tls.conf", "eapol-peap.conf", "eapol-ttls.conf"):
                line = re.search(r"^  (eapol_test -c \S*%s .*)$" % conf, log, re.M)
                self.assertIsNotNone(line, log)
                code, out = run_tool(line.group(1).split() + ["-t", "20", "-r", "0"], timeout=60)
                self.assertEqual(code, 0, out[-3000:])
                self.assertIn("MPPE keys OK: 1  mismatch: 0", out)
            # The gateway logs to dev's output: the certificate's name decided.
            wait_for("the EAP-TLS decision logged",
                     lambda: 'Access-Accept for "gateway-eap-client" via EAP-TLS' in dev.read_log())
        finally:
            dev.stop(signal.SIGKILL)

    def test_refuses_a_wrong_config_before_starting_anything(self):
        missing = os.path.join(self.dir, "no-such-users")
        done = subprocess.run([BINARY, "dev", "--dir", self.dir, "--users", missing, "--clients", CLIENTS,
                               "--auth-port", str(free_udp_port())], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertIn(missing, done.stderr)
        self.assertNotIn("started", done.stdout + done.stderr)

    def test_refuses_a_folder_too_deep_for_admin_sockets(self):
        deep = os.path.join(self.dir, "d" * 100)
        done = subprocess.run([BINARY, "dev", "--dir", deep], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertIn("too deep", done.stderr)
        self.assertFalse(os.path.exists(deep))

    def test_refuses_a_folder_with_some_member_configs_only(self):
        with open(os.path.join(self.dir, "member-1.yaml"), "w") as f:
            f.write("id: 1\n")
        done = subprocess.run([BINARY, "dev", "--dir", self.dir], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertIn("not all three", done.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "member-2.yaml")))

    def check_accounting(self, dev, acct_port):
        """radclient accounting is acknowledged once committed, the session
        is listed by `ctl sessions`, the exporter writes its radacct row to
        DIR/radacct.sqlite; bootstrap is off once formed."""

        def leader():
            for member in (1, 2, 3):
                done = subprocess.run([BINARY, "ctl", "--dir", self.dir, "--member", str(member), "status",
                                       "--json", "--grace", "0"], capture_output=True, text=True, timeout=10)
                if done.returncode in (0, 3):  # 3: answered, unhealthy (docs/admin_api.md "Health").
                    status = json.loads(done.stdout)
                    if status.get("leader"):
                        return status["leader"]["id"]
            return None

        leader_id = wait_for("a leader", leader, timeout=60)
        request = ("User-Name = alice, Acct-Status-Type = Start, Acct-Session-Id = dev-test-1, "
                   "NAS-IP-Address = 127.0.0.1, NAS-Port = 1\n")
        done = subprocess.run(["radclient", "-x", "-r", "5", "-t", "3", "127.0.0.1:%d" % acct_port, "acct",
                               "testing123"], input=request, capture_output=True, text=True, timeout=60)
        self.assertIn("Received Accounting-Response", done.stdout, done.stdout + done.stderr)

        # The record is held until the leader's exporter has written it to
        # DIR/radacct.sqlite (then it leaves `ctl records`); the session stays
        # open in the live session table either way. The member filters the
        # listing by Acct-Session-Id; the table shows the session's user.
        def listed():
            done = subprocess.run([BINARY, "ctl", "--dir", self.dir, "--member", str(leader_id), "sessions",
                                   "--session", "dev-test-1"], capture_output=True, text=True, timeout=10)
            return done.returncode == 0 and "dev-test-1" in done.stdout and "alice" in done.stdout
        wait_for("the session in ctl sessions", listed)

        def exported():
            done = subprocess.run(["sqlite3", os.path.join(self.dir, "radacct.sqlite"),
                                   "SELECT acctsessionid, username, acctstoptime IS NULL FROM radacct"],
                                  capture_output=True, text=True, timeout=10)
            return done.returncode == 0 and "dev-test-1|alice|1" in done.stdout
        wait_for("the session row in DIR/radacct.sqlite (sqlite3)", exported)
        wait_for("bootstrap: false in every member config", lambda: all(
            "\nbootstrap: false\n" in read(os.path.join(self.dir, "member-%d.yaml" % i))
            for i in (1, 2, 3)))


if __name__ == "__main__":
    unittest.main()
