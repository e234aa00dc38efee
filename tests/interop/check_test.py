#!/usr/bin/python3
"""`radiusward check` on good and bad configurations: every error as
file:line:col: message on stderr, exit status 2 on errors and 0 when valid;
and the gateway refuses to start on the same errors (no partial start)."""

import os
import shutil
import subprocess
import tempfile
import unittest

from radiusward_fixture import binary_from_argv

BINARY = binary_from_argv()
ROOT = os.environ.get("RW_SOURCE_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

GOOD_USERS = 'alice Cleartext-Password := "wonderland"\n'
GOOD_CLIENTS = "client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n"
GOOD_CONFIG = """listen: [127.0.0.1]
auth_port: 0
acct_port: 0
users_file: users
clients_file: clients.conf
"""


class Check(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rw-check-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def check(self, config=GOOD_CONFIG, users=GOOD_USERS, clients=GOOD_CLIENTS):
        self.write("users", users)
        self.write("clients.conf", clients)
        path = self.write("gateway.yaml", config)
        done = subprocess.run([BINARY, "check", "--config", path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    def test_valid_config_exits_0(self):
        code, out, err = self.check()
        self.assertEqual(code, 0, err)
        self.assertIn("ok", out)

    def test_demo_config_is_valid(self):
        done = subprocess.run([BINARY, "check", "--config", os.path.join(ROOT, "etc/demo/gateway.yaml")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_unknown_yaml_key_has_position(self):
        code, out, err = self.check(config=GOOD_CONFIG + "colour: blue\n")
        self.assertEqual(code, 2)
        self.assertRegex(err, r"gateway\.yaml:6:1: .*colour")

    def test_users_error_has_file_line_col(self):
        code, out, err = self.check(users=GOOD_USERS + "bob Cleartext-Password := \"x\"\n    No-Such-Attribute = 1\n")
        self.assertEqual(code, 2)
        self.assertRegex(err, r"users:3:5: .*No-Such-Attribute")

    def test_clients_error_has_file_line_col(self):
        code, out, err = self.check(clients="client x {\n  ipaddr = 10.0.0.1\n}\n")
        self.assertEqual(code, 2)
        self.assertRegex(err, r"clients\.conf:\d+:\d+: .*secret")

    def test_errors_of_several_files_are_all_reported(self):
        code, out, err = self.check(users="alice Bogus := 1\n", clients="client x {\n  ipaddr = 10.0.0.1\n}\n")
        self.assertEqual(code, 2)
        self.assertIn("users:1:", err)
        self.assertIn("clients.conf:", err)

    def test_gateway_refuses_to_start_on_errors(self):
        self.write("users", "alice Bogus := 1\n")
        self.write("clients.conf", GOOD_CLIENTS)
        path = self.write("gateway.yaml", GOOD_CONFIG)
        done = subprocess.run([BINARY, "gateway", "--config", path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("users:1:", done.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
