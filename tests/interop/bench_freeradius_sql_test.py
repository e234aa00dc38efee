#!/usr/bin/python3
"""Interop: the FreeRADIUS side of the bench's SQL scenarios works. A real
PostgreSQL 15 (tests/support/postgres_fixture.py) gets the bench's `radius`
database (scripts/bench_sql.py: FreeRADIUS's schema.sql, the bench users in
radcheck, synchronous_commit on); scripts/freeradius-bench-config writes a
FreeRADIUS 3.2 config with rlm_sql for accounting and authorize (and an
empty users file, so only SQL can accept); FreeRADIUS answers radclient's
Access-Request from radcheck and writes an Accounting Start into radacct.

The radiusward binary argument (ctest passes it to every interop test) is
not used."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import bench_sql  # noqa: E402
from postgres_fixture import PostgresServer  # noqa: E402
from radiusward_fixture import free_udp_port  # noqa: E402

SECRET = "bench-sql-secret"


def radclient(port, kind, attributes, retries=1):
    result = subprocess.run(["radclient", "-x", "-r", str(retries), "-t", "2", "127.0.0.1:%d" % port, kind, SECRET],
                            input=attributes + "\n", capture_output=True, text=True, timeout=30)
    return result.stdout + result.stderr


class FreeradiusSql(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.postgres = PostgresServer()
        cls.folder = tempfile.mkdtemp(prefix="rw-bench-fr-sql-")
        cls.server = None
        try:
            bench_sql.prepare_radius_database(cls.postgres, 3)
            empty_users = os.path.join(cls.folder, "users.txt")
            open(empty_users, "w").close()
            cls.auth_port, cls.acct_port = free_udp_port(), free_udp_port()
            config = os.path.join(cls.folder, "freeradius")
            subprocess.run([os.path.join(ROOT, "scripts", "freeradius-bench-config"), config, empty_users, SECRET,
                            str(cls.auth_port), str(cls.acct_port), "sql", "sql",
                            bench_sql.freeradius_server(cls.postgres)], check=True, stdout=subprocess.DEVNULL)
            cls.log = open(os.path.join(cls.folder, "freeradius.log"), "w")
            cls.server = subprocess.Popen(["freeradius", "-f", "-d", config], stdout=cls.log,
                                          stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 20
            while "Received Access-Accept" not in radclient(cls.auth_port, "auth",
                                                            "User-Name=bench-user-1,User-Password=bench-password-1"):
                if cls.server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("FreeRADIUS with rlm_sql did not accept bench-user-1:\n" + cls.logs())
                time.sleep(0.2)
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def logs(cls):
        with open(os.path.join(cls.folder, "freeradius.log"), errors="replace") as f:
            text = f.read()
        radius_log = os.path.join(cls.folder, "freeradius", "log", "radius.log")
        if os.path.exists(radius_log):
            with open(radius_log, errors="replace") as f:
                text += f.read()
        return text[-4000:]

    @classmethod
    def tearDownClass(cls):
        if cls.server is not None and cls.server.poll() is None:
            cls.server.terminate()
            cls.server.wait(timeout=15)
        cls.postgres.close()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def test_authorize_from_radcheck(self):
        output = radclient(self.auth_port, "auth", "User-Name=bench-user-2,User-Password=wrong-password")
        self.assertIn("Received Access-Reject", output, output)
        output = radclient(self.auth_port, "auth", "User-Name=bench-user-2,User-Password=bench-password-2")
        self.assertIn("Received Access-Accept", output, output)

    def test_accounting_start_lands_in_radacct_synchronously(self):
        self.assertEqual(bench_sql.synchronous_commit(self.postgres, bench_sql.RADIUS_DB), "on")
        output = radclient(self.acct_port, "acct",
                           "User-Name=bench-user-0,Acct-Status-Type=Start,Acct-Session-Id=bench-sql-1,"
                           "NAS-IP-Address=127.0.0.1,NAS-Port=1,Framed-IP-Address=10.0.0.1")
        self.assertIn("Received Accounting-Response", output, output + self.logs())
        rows = self.postgres.psql("-c", "SELECT username, acctstoptime IS NULL FROM radacct "
                                  "WHERE acctsessionid = 'bench-sql-1'", database=bench_sql.RADIUS_DB)
        self.assertEqual(rows.strip(), "bench-user-0|t")


if __name__ == "__main__":
    sys.argv = sys.argv[:1]  # the radiusward binary is not needed
    unittest.main(verbosity=2)
