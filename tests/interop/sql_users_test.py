#!/usr/bin/python3
"""Interop: FreeRADIUS's radtest (freeradius-utils) against a radiusward
gateway whose users come from a real PostgreSQL 15 (started in a temporary
folder) with the tables of FreeRADIUS's own schema.sql: PAP, CHAP and
MS-CHAP users from radcheck, replies from radreply and radgroupreply, the
users file tried first, and an unknown user rejected."""

import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))

from postgres_fixture import PostgresServer  # noqa: E402
from radiusward_fixture import *  # noqa: F401,F403,E402

BINARY = binary_from_argv()
SCHEMA = "/etc/freeradius/3.0/mods-config/sql/main/postgresql/schema.sql"

USERS = 'carol   Cleartext-Password := "from-files"\n'
CLIENTS = 'client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n'

ROWS = r"""
INSERT INTO radcheck (username, attribute, op, value) VALUES ('alice', 'Cleartext-Password', ':=', 'wonderland');
INSERT INTO radreply (username, attribute, op, value) VALUES ('alice', 'Reply-Message', '=', 'Hello from SQL');
INSERT INTO radusergroup (username, groupname, priority) VALUES ('alice', 'staff', 1);
INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('staff', 'Tunnel-Type', ':=', 'VLAN');
INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('staff', 'Tunnel-Medium-Type', ':=', 'IEEE-802');
INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('staff', 'Tunnel-Private-Group-Id', ':=', '300');
INSERT INTO radcheck (username, attribute, op, value) VALUES ('bob', 'NT-Password', ':=', '44EBBA8D5312B8D611474411F56989AE');
INSERT INTO radcheck (username, attribute, op, value) VALUES ('carol', 'Cleartext-Password', ':=', 'from-sql');
"""


def radtest(gateway, user, password, method="pap"):
    # A miss may be dropped once while the cache fills: radtest retransmits.
    return run_tool(["radtest", "-t", method, "-x", user, password, "127.0.0.1:%d" % gateway.auth_port, "0",
                     "testing123", "0", "127.0.0.1"])


class SqlUsersInterop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.postgres = PostgresServer()
        cls.postgres.psql("-f", SCHEMA)
        cls.postgres.psql("-c", ROWS)
        cls.dir = tempfile.mkdtemp(prefix="rw-sql-users-")
        users = os.path.join(cls.dir, "users")
        clients = os.path.join(cls.dir, "clients.conf")
        with open(users, "w") as f:
            f.write(USERS)
        with open(clients, "w") as f:
            f.write(CLIENTS)
        config = os.path.join(cls.dir, "gateway.yaml")
        with open(config, "w") as f:
            f.write("users_file: users\nclients_file: clients.conf\nusers_stores: [files, sql]\n"
                    "sql_users:\n  postgresql: \"%s\"\n  miss_wait_ms: 500\n" % cls.postgres.conninfo())
        try:
            cls.gateway = Gateway(BINARY, USERS, CLIENTS, extra_args=("--config", config))
        except Exception:
            cls.postgres.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.gateway.__exit__(None, None, None)
        cls.postgres.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_pap_user_gets_user_and_group_replies(self):
        _, output = radtest(self.gateway, "alice", "wonderland")
        self.assertIn("Received Access-Accept", output, output + self.gateway.read_log())
        self.assertIn("Hello from SQL", output)
        self.assertIn("Tunnel-Private-Group-Id", output)
        self.assertIn('"300"', output)

    def test_wrong_password_is_rejected(self):
        _, output = radtest(self.gateway, "alice", "looking-glass")
        self.assertIn("Received Access-Reject", output, output)

    def test_chap(self):
        _, output = radtest(self.gateway, "alice", "wonderland", "chap")
        self.assertIn("Received Access-Accept", output, output)

    def test_mschap_against_nt_password(self):
        _, output = radtest(self.gateway, "bob", "clientPass", "mschap")
        self.assertIn("Received Access-Accept", output, output)

    def test_the_users_file_is_tried_first(self):
        _, output = radtest(self.gateway, "carol", "from-files")
        self.assertIn("Received Access-Accept", output, output)
        _, output = radtest(self.gateway, "carol", "from-sql")
        self.assertIn("Received Access-Reject", output, output)

    def test_unknown_user_is_rejected(self):
        _, output = radtest(self.gateway, "mallory", "x")
        self.assertIn("Received Access-Reject", output, output)


if __name__ == "__main__":
    unittest.main(verbosity=2)
