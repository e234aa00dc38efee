#!/usr/bin/python3
"""Interop: Simultaneous-Use on real processes. Three `radiusward member`
processes and a gateway (tests/fault/cluster_fixture.py); users with
Simultaneous-Use := 1 from the users file, from SQLite's radcheck and from
radgroupcheck (FreeRADIUS's own sqlite schema.sql). FreeRADIUS's radtest and
radclient (freeradius-utils) play the NAS: an Access-Request is accepted,
an Accounting Start opens a session in the cluster's live session table,
the next Access-Request is rejected with "You are already logged in -
access denied", a Stop closes the session and the user is accepted again.
With every member stopped the check cannot be made and the default policy
rejects (fails closed)."""

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fault"))

from cluster_fixture import Cluster  # noqa: E402
from radiusward_fixture import RemembersFailure, binary_from_argv, run_tool  # noqa: E402

BINARY = binary_from_argv()
SCHEMA = "/etc/freeradius/3.0/mods-config/sql/main/sqlite/schema.sql"
ALREADY = "You are already logged in - access denied"

USERS = ('fileuser Cleartext-Password := "filepass", Simultaneous-Use := 1\n'
         'alice    Cleartext-Password := "wonderland"\n')

ROWS = [
    ("radcheck", "sqluser", "Cleartext-Password", ":=", "sqlpass"),
    ("radcheck", "sqluser", "Simultaneous-Use", ":=", "1"),
    ("radcheck", "groupuser", "Cleartext-Password", ":=", "grouppass"),
    ("radgroupcheck", "single", "Simultaneous-Use", ":=", "1"),
]


def make_database(path):
    with open(SCHEMA) as f:
        schema = f.read()
    db = sqlite3.connect(path)
    db.executescript(schema)
    for table, name, attribute, op, value in ROWS:
        column = "groupname" if table.startswith("radgroup") else "username"
        db.execute(f"INSERT INTO {table} ({column}, attribute, op, value) VALUES (?, ?, ?, ?)",
                   (name, attribute, op, value))
    db.execute("INSERT INTO radusergroup (username, groupname, priority) VALUES ('groupuser', 'single', 1)")
    db.commit()
    db.close()


class SimultaneousUse(RemembersFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="rw-simuse-")
        users = os.path.join(cls.root, "users")
        with open(users, "w") as f:
            f.write(USERS)
        database = os.path.join(cls.root, "radius.sqlite")
        make_database(database)
        cls.cluster = Cluster(BINARY, cls.root, users=users, workers=2,
                              gateway_extra=("users_stores: [files, sql]\n"
                                             f"sql_users:\n  sqlite: {database}\n  miss_wait_ms: 500\n"))
        cls.failed = False
        try:
            cls.cluster.start_ready()
        except Exception:
            cls.cluster.finish(ok=False)
            raise

    @classmethod
    def tearDownClass(cls):
        # A failure keeps the folder and prints every process's log tail.
        cls.cluster.finish(ok=not cls.failed)

    def radtest(self, user, password):
        _, output = run_tool(["radtest", "-x", user, password, f"127.0.0.1:{self.cluster.auth_port}", "0",
                              Cluster.SECRET, "0", "127.0.0.1"])
        return output

    def accounting(self, user, status, session):
        attributes = (f"Acct-Status-Type = {status}\nAcct-Session-Id = \"{session}\"\n"
                      "NAS-IP-Address = 127.0.0.1\nNAS-Port = 7\nNAS-Identifier = \"nas-a\"\n")
        if user:
            attributes = f"User-Name = \"{user}\"\n" + attributes
        done = subprocess.run(["radclient", "-x", "-r", "3", "-t", "3", f"127.0.0.1:{self.cluster.acct_port}",
                               "acct", Cluster.SECRET], input=attributes, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + self.cluster.log_tail("gateway"))
        self.assertIn("Received Accounting-Response", done.stdout, done.stdout)

    def assert_accepted(self, user, password):
        output = self.radtest(user, password)
        self.assertIn("Received Access-Accept", output, output + self.cluster.log_tail("gateway"))

    def assert_limited(self, user, password):
        output = self.radtest(user, password)
        self.assertIn("Received Access-Reject", output, output + self.cluster.log_tail("gateway"))
        self.assertIn(ALREADY, output)

    def cycle(self, user, password, session):
        self.assert_accepted(user, password)
        self.accounting(user, "Start", session)
        self.assert_limited(user, password)
        # Interim-Update keeps the session open.
        self.accounting(user, "Interim-Update", session)
        self.assert_limited(user, password)
        self.accounting(user, "Stop", session)
        self.assert_accepted(user, password)

    def test_1_users_file_user(self):
        self.cycle("fileuser", "filepass", "file-1")

    def test_2_sql_radcheck_user(self):
        self.cycle("sqluser", "sqlpass", "sql-1")

    def test_3_sql_radgroupcheck_user(self):
        self.cycle("groupuser", "grouppass", "group-1")

    def test_4_accounting_off_closes_the_nas_sessions(self):
        self.accounting("fileuser", "Start", "file-2")
        self.assert_limited("fileuser", "filepass")
        self.accounting("", "Accounting-Off", "off-1")
        self.assert_accepted("fileuser", "filepass")

    def test_5_users_without_a_limit_are_not_counted(self):
        self.accounting("alice", "Start", "alice-1")
        self.accounting("alice", "Start", "alice-2")
        self.assert_accepted("alice", "wonderland")
        metrics = self.cluster.ctl("gateway", "metrics") or ""
        self.assertIn('radiusward_gateway_session_checks_total{event="rejected"}', metrics)
        rejected = [line for line in metrics.splitlines()
                    if line.startswith('radiusward_gateway_session_checks_total{event="rejected"}')]
        # Two per cycle of tests 1 to 3, one in test 4.
        self.assertGreaterEqual(int(float(rejected[0].split()[-1])), 7, metrics)
        with open(os.path.join(self.cluster.root, "logs", "gateway.log"), errors="replace") as f:
            log = f.read()
        self.assertIn("simultaneous_use", log)

    def test_6_without_the_cluster_the_default_policy_rejects(self):
        for i in self.cluster.ids:
            self.cluster.kill(f"member-{i}")
        time.sleep(0.2)
        output = self.radtest("fileuser", "filepass")
        self.assertIn("Received Access-Reject", output, output + self.cluster.log_tail("gateway"))
        self.assertNotIn(ALREADY, output)
        # A user without a limit does not depend on the cluster.
        self.assert_accepted("alice", "wonderland")


if __name__ == "__main__":
    unittest.main(verbosity=2)
