#!/usr/bin/python3
"""`radiusward ctl` on real processes: a one-member cluster and a gateway
submitting to it, on loopback in plaintext (docs/admin_api.md "Health").
`ctl status` exits 0 on the ready leader and the connected gateway, 3 on a
member that knows no leader (one of a three-member cluster started alone)
and on a gateway whose member is gone, 1 when the process is not running;
`--json` prints the body the admin API gives; `ctl sessions` filters at the
member; `ctl top --count` stops by itself; the member's exporter (into
SQLite) writes the records it keeps up with in paced batches, and after a
reload that sets export.log_retention_days deletes the log rows older than
that, and only those.
  tests/integration/ctl_probe_test.py RADIUSWARD_BINARY"""

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_sql  # noqa: E402  (admin_get: the admin API without ctl)

if len(sys.argv) < 2:
    sys.exit("usage: ctl_probe_test.py RADIUSWARD_BINARY")
BINARY = os.path.abspath(sys.argv.pop(1))


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def raw_get(socket_path, target):
    """The body of GET `target`, read straight from the admin socket."""
    body = bench_sql.admin_get(socket_path, target, timeout=10)
    assert body is not None, target
    return body.decode()


def ctl(*args):
    done = subprocess.run([BINARY, "ctl", *args], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def wait_for(what, predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


class CtlProbeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Not /tmp: raft needs a file system with O_DIRECT (docs/consensus.md).
        cls.dir = tempfile.mkdtemp(prefix="rw_ctl_probe_", dir="/var/tmp")
        os.makedirs(os.path.join(cls.dir, "admin"))
        cls.processes = {}
        cls.submission = "127.0.0.1:%d" % free_port()
        cls.member_raft = "127.0.0.1:%d" % free_port()
        cls.write_member("member-1", 1, [(1, cls.member_raft, cls.submission)],
                         "export: {sqlite: radacct.sqlite, batch_delay_ms: 1000}\n")
        # One of three members, started alone: it never learns of a leader.
        cls.write_member("lonely-1", 1, [(i, "127.0.0.1:%d" % free_port(), "127.0.0.1:%d" % free_port())
                                         for i in (1, 2, 3)])
        cls.start("member-1", [BINARY, "member", "--config", os.path.join(cls.dir, "member-1.yaml")])
        cls.start("lonely-1", [BINARY, "member", "--config", os.path.join(cls.dir, "lonely-1.yaml")])
        with open(os.path.join(cls.dir, "users"), "w") as f:
            f.write('alice Cleartext-Password := "wonderland"\n')
        with open(os.path.join(cls.dir, "clients.conf"), "w") as f:
            f.write("client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n")
        with open(os.path.join(cls.dir, "gateway.yaml"), "w") as f:
            f.write("listen: [127.0.0.1]\nusers_file: users\nclients_file: clients.conf\ndictionary_dir:\n")
        cls.acct_port = free_port(socket.SOCK_DGRAM)
        cls.auth_port = free_port(socket.SOCK_DGRAM)
        cls.start("gateway", [BINARY, "gateway", "--config", os.path.join(cls.dir, "gateway.yaml"),
                              "--auth-port", str(cls.auth_port), "--acct-port", str(cls.acct_port),
                              "--workers", "1", "--member", cls.submission, "--insecure-plaintext-cluster",
                              "--admin-socket", cls.socket("gateway")])

    @classmethod
    def write_member(cls, name, member_id, book, extra=""):
        raft, submission = [(r, s) for i, r, s in book if i == member_id][0]
        members = "".join("  - {id: %d, raft: '%s', submission: '%s'}\n" % entry for entry in book)
        with open(os.path.join(cls.dir, name + ".yaml"), "w") as f:
            f.write("id: %d\ndata_dir: %s\nraft_address: '%s'\nsubmission_listen: '%s'\n"
                    "admin_socket: admin/%s.sock\nmembers:\n%sinsecure_plaintext_cluster: true\n%s"
                    % (member_id, name, raft, submission, name, members, extra))

    @classmethod
    def start(cls, name, argv):
        log = open(os.path.join(cls.dir, name + ".log"), "ab")
        cls.processes[name] = subprocess.Popen(argv, stdout=log, stderr=log, cwd=cls.dir)
        log.close()

    @classmethod
    def socket(cls, name):
        return os.path.join(cls.dir, "admin", name + ".sock")

    @classmethod
    def tearDownClass(cls):
        for process in cls.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in cls.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def logs(self):
        out = ""
        for name in self.processes:
            with open(os.path.join(self.dir, name + ".log"), errors="replace") as f:
                out += "--- %s ---\n%s" % (name, f.read()[-2000:])
        return out

    def wait_healthy(self, name):
        wait_for(name + " healthy", lambda: ctl("--socket", self.socket(name), "status")[0] == 0)

    def test_1_ready_leader_and_connected_gateway_are_healthy(self):
        self.wait_healthy("member-1")
        self.wait_healthy("gateway")
        code, out, err = ctl("--socket", self.socket("member-1"), "status")
        self.assertEqual(code, 0, err)
        self.assertIn("leader, ready for work\n", out)
        self.assertIn("held records", out)
        self.assertTrue(out.rstrip().endswith("ok"), out)
        code, out, err = ctl("--socket", self.socket("gateway"), "status")
        self.assertEqual(code, 0, err)
        self.assertIn("ready, connected to %s\n" % self.submission, out)

    def test_1b_threads_are_named(self):
        """docs/architecture.md "Threads": top -H and /proc name each thread."""
        self.wait_healthy("member-1")
        self.wait_healthy("gateway")

        def names(name):
            task = "/proc/%d/task" % self.processes[name].pid
            found = set()
            for tid in os.listdir(task):
                try:
                    with open(os.path.join(task, tid, "comm")) as f:
                        found.add(f.read().strip())
                except OSError:
                    pass  # A thread that ended meanwhile.
            return found

        self.assertLessEqual({"rw-raft", "rw-submit-srv", "rw-admin"}, names("member-1"), self.logs())
        self.assertLessEqual({"rw-udp-0", "rw-submission", "rw-admin"}, names("gateway"), self.logs())

    def test_2_json_is_the_admin_api_body(self):
        self.wait_healthy("member-1")
        # An idle member's /status does not change between two requests; a
        # barrier or heartbeat may move it once, so allow a second try.
        for _ in range(3):
            code, out, _ = ctl("--socket", self.socket("member-1"), "status", "--json")
            if code == 0 and out == raw_get(self.socket("member-1"), "/status"):
                break
        else:
            self.fail("ctl status --json differs from GET /status: %r" % out)
        self.assertEqual(json.loads(out)["raft_role"], "leader")

    def test_3_sessions_filtered_at_the_member(self):
        self.wait_healthy("gateway")
        request = ("User-Name = alice, Acct-Status-Type = Start, Acct-Session-Id = probe-1, "
                   "NAS-IP-Address = 127.0.0.1, NAS-Port = 1, Calling-Station-Id = AA-BB-CC-DD-EE-FF\n")
        done = subprocess.run(["radclient", "-x", "-r", "5", "-t", "3", "127.0.0.1:%d" % self.acct_port, "acct",
                               "testing123"], input=request, capture_output=True, text=True, timeout=60)
        self.assertIn("Received Accounting-Response", done.stdout, done.stdout + done.stderr + self.logs())
        member = self.socket("member-1")
        code, out, err = ctl("--socket", member, "sessions", "--user", "alice", "--nas", "127.0.0.1")
        self.assertEqual(code, 0, err)
        self.assertIn("probe-1", out)
        self.assertTrue(out.endswith("1 session matching the filter\n"), out)
        code, out, _ = ctl("--socket", member, "sessions", "--user", "bob")
        self.assertEqual((code, out.splitlines()[-1]), (0, "0 sessions matching the filter"))
        code, out, _ = ctl("--socket", member, "sessions", "--json", "--session", "probe-1")
        self.assertEqual(code, 0)
        self.assertEqual(out, raw_get(member, "/sessions?session=probe-1"))
        self.assertEqual([s["User-Name"] for s in json.loads(out)["sessions"]], ["alice"])
        self.assertEqual(json.loads(raw_get(member, "/sessions?user=bob"))["sessions"], [])

    def test_4_top_stops_after_count(self):
        self.wait_healthy("member-1")
        code, out, err = ctl("--socket", self.socket("member-1"), "top", "--count", "2", "--interval", "0.3")
        self.assertEqual(code, 0, err)
        self.assertEqual(out.count("refresh "), 2, out)
        self.assertIn("records committed", out)
        self.assertNotIn("\x1b[", out)

    def test_4b_export_goes_in_paced_batches(self):
        """docs/accounting.md "Pacing the exporter": with export.batch_delay_ms
        at 1000, 4 s of accounting at 200/s reach the database in about one
        batch a second. Without the pacing the exporter writes what each
        20-ms poll finds: about 200 batches."""
        self.wait_healthy("gateway")
        member = self.socket("member-1")
        wait_for("the earlier tests' records exported",
                 lambda: json.loads(raw_get(member, "/status"))["export"]["lag_records"] == 0)
        before = json.loads(raw_get(member, "/status"))["export"]
        report = os.path.join(self.dir, "paced.json")
        done = subprocess.run([BINARY, "bench", "run", "--scenario", "acct",
                               "--target", "127.0.0.1:%d" % self.auth_port,
                               "--acct-target", "127.0.0.1:%d" % self.acct_port, "--secret", "testing123",
                               "--rate", "200", "--duration-s", "4", "--timeout-ms", "2000", "--retries", "4",
                               "--json", report, "--no-require-message-authenticator"],
                              capture_output=True, text=True, timeout=120)
        with open(report) as f:
            answered = json.load(f)["answered"]
        self.assertEqual(answered, 800, done.stdout + done.stderr + self.logs())

        def caught_up():
            now = json.loads(raw_get(member, "/status"))["export"]
            return now if now["records_exported"] - before["records_exported"] >= answered else None
        wait_for("the exporter to write the 800 records", caught_up, timeout=30)
        after = caught_up()
        self.assertEqual(after["records_exported"] - before["records_exported"], 800, after)
        batches = after["batches"] - before["batches"]
        self.assertLessEqual(batches, 10, after)
        self.assertGreaterEqual(batches, 3, after)

    def test_4c_log_retention_set_by_a_reload_deletes_old_log_rows(self):
        """docs/accounting.md "Keeping the log table bounded": rows received
        three days ago go once a reload sets log_retention_days to 2; one of
        an hour ago at the head of the log, and every row the earlier tests
        exported, stay; radacct is untouched."""
        self.wait_healthy("gateway")
        member = self.socket("member-1")
        database = os.path.join(self.dir, "radacct.sqlite")
        now = int(time.time())
        with sqlite3.connect(database, timeout=30) as db:
            kept = db.execute("SELECT count(*) FROM radiusward_accounting_log").fetchone()[0]
            radacct = db.execute("SELECT count(*) FROM radacct").fetchone()[0]
            # Below every exported log index: the head of the log order.
            for index, age_s in ((-4, 3 * 86400), (-3, 3600), (-2, 3 * 86400), (-1, 3 * 86400 + 5)):
                db.execute("INSERT INTO radiusward_accounting_log VALUES (?, 0, ?, 1, 'nas', ?, ?, ?, '{}')",
                           (index, "old%d" % -index, now - age_s, now - age_s, "session%d" % -index))
        self.assertGreater(kept, 0)
        before = json.loads(raw_get(member, "/status"))["export"]
        self.assertEqual(before["log_rows_pruned"], 0, before)
        self.write_member("member-1", 1, [(1, self.member_raft, self.submission)],
                          "export: {sqlite: radacct.sqlite, batch_delay_ms: 1000, log_retention_days: 2}\n")
        self.processes["member-1"].send_signal(signal.SIGHUP)

        def pruned():
            status = json.loads(raw_get(member, "/status"))["export"]
            return status if status["log_rows_pruned"] >= 3 else None
        wait_for("the exporter's retention round", pruned, timeout=30)
        self.assertEqual(pruned()["log_rows_pruned"], 3)
        self.assertEqual(pruned()["prune_failures"], 0)
        with sqlite3.connect(database, timeout=30) as db:
            self.assertEqual(db.execute("SELECT log_index FROM radiusward_accounting_log WHERE log_index < 0")
                             .fetchall(), [(-3,)])
            self.assertEqual(db.execute("SELECT count(*) FROM radiusward_accounting_log WHERE log_index > 0")
                             .fetchone()[0], kept)
            self.assertEqual(db.execute("SELECT count(*) FROM radacct").fetchone()[0], radacct)
        self.assertIn("radiusward_member_export_log_rows_pruned_total 3", raw_get(member, "/metrics"))

    def test_5_member_without_leader_is_unhealthy(self):
        wait_for("the lonely member's socket", lambda: os.path.exists(self.socket("lonely-1")))
        code, out, err = ctl("--socket", self.socket("lonely-1"), "status", "--grace", "0.5")
        self.assertEqual(code, 3, out + err + self.logs())
        self.assertIn("UNHEALTHY: no leader known", out)
        code, out, _ = ctl("--socket", self.socket("lonely-1"), "status", "--json", "--grace", "0")
        self.assertEqual(code, 3)
        self.assertIsNone(json.loads(out)["leader"])

    def test_6_gateway_without_its_member_is_unhealthy_and_a_stopped_member_unreachable(self):
        self.wait_healthy("gateway")
        member = self.processes["member-1"]
        member.send_signal(signal.SIGTERM)
        member.wait(timeout=30)
        # The gateway notices the lost connection by its close or its ping
        # timeout (docs/limits.md: idle ping 1 s, no answer within 3 s).
        wait_for("the gateway unhealthy", lambda: ctl("--socket", self.socket("gateway"), "status",
                                                      "--grace", "0")[0] == 3, timeout=20)
        code, out, _ = ctl("--socket", self.socket("gateway"), "status", "--grace", "0")
        self.assertEqual(code, 3, out)
        self.assertIn("UNHEALTHY: submission", out)
        code, _, err = ctl("--socket", self.socket("member-1"), "status")
        self.assertEqual(code, 1)
        self.assertIn("is the process running?", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
