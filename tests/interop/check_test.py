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

    def openssl(self, *args):
        done = subprocess.run(["openssl", *args], cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout)

    def test_eap_tls_methods_and_their_certificates_are_checked(self):
        # A CA, a server certificate it signed, and a key that is not the certificate's.
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        self.openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30", "-subj", "/CN=ca")
        self.openssl("req", "-new", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=server")
        self.openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-days", "30", "-out", "server.pem")
        self.openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "other.key")
        config = (GOOD_CONFIG + "eap:\n  methods: [tls, peap, ttls]\n  tls_fragment_octets: 1000\n"
                  "tls:\n  cert: server.pem\n  key: server.key\n  ca: ca.pem\n")
        code, out, err = self.check(config=config)
        self.assertEqual(code, 0, err)
        self.assertIn("EAP methods offered: EAP-TLS, PEAP, EAP-TTLS", out)
        # The key does not match the certificate: refused, at the tls section.
        code, out, err = self.check(config=config.replace("key: server.key", "key: other.key"))
        self.assertEqual(code, 2, out)
        self.assertRegex(err, r"gateway\.yaml:9:\d+: EAP: .*other\.key")
        # The TLS methods without a tls section, and bad options, each at its position.
        code, out, err = self.check(config=GOOD_CONFIG + "eap:\n  methods: [peap]\n  tls_max_version: 1.4\n")
        self.assertEqual(code, 2, out)
        self.assertIn("gateway.yaml:7:3: eap.methods lists peap but there is no 'tls' section", err)
        self.assertIn("gateway.yaml:8:20: expected a TLS version: 1.2 or 1.3, got '1.4'", err)

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
