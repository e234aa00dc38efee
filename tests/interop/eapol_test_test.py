#!/usr/bin/python3
"""Interop: Debian's eapol_test (package eapoltest, hostapd's EAP peer and
RADIUS client) runs EAP-MD5 (RFC 3748 §5.4) against a real `radiusward
gateway` started from flags alone (the quick start, which turns EAP-MD5 on
for wired NASes) with a users file and a clients file: the right password is
accepted, a wrong one rejected, a wireless NAS-Port-Type refused; an EAP
Access-Request without Message-Authenticator is dropped (RFC 3579 §3.2); and
several conversations at once, each on its own source port, all complete
(docs/authentication.md "EAP")."""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

from radiusward_fixture import *  # noqa: F401,F403

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_sql  # noqa: E402  (admin_get: the admin API without ctl)

BINARY = binary_from_argv()

USERS = r'''
alice   Cleartext-Password := "wonderland"
        Reply-Message = "Hello",
        Session-Timeout = 3600
bob     NT-Password := 0x44EBBA8D5312B8D611474411F56989AE
'''

CLIENTS = '''
client localhost {
    ipaddr = 127.0.0.1
    secret = testing123
}
'''

NAS_PORT_TYPE = 61
ETHERNET, WIRELESS_802_11 = 15, 19
EAP_MESSAGE, STATE = 79, 24


def network_block(identity, password):
    return ('network={\n    key_mgmt=IEEE8021X\n    eap=MD5\n    identity="%s"\n    password="%s"\n'
            '    eapol_flags=0\n}\n' % (identity, password))


class EapolTestInterop(RemembersFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gateway = Gateway(BINARY, USERS, CLIENTS, listen=("127.0.0.1",), admin=True)
        cls.dir = tempfile.mkdtemp(prefix="rw-eapol-")

    @classmethod
    def tearDownClass(cls):
        cls.end_deployment()

    def eapol_test(self, identity, password, nas_port_type=ETHERNET, mac="02:00:00:00:00:01"):
        """Runs one eapol_test conversation; returns (exit code, output).
        eapol_test sends NAS-Port-Type Wireless-802.11 unless -N gives one."""
        conf = os.path.join(self.dir, "%s-%s.conf" % (identity, mac.replace(":", "")))
        with open(conf, "w") as f:
            f.write(network_block(identity, password))
        args = ["eapol_test", "-c", conf, "-a", "127.0.0.1", "-p", str(self.gateway.auth_port),
                "-s", "testing123", "-t", "10", "-r", "0", "-n", "-M", mac]
        if nas_port_type is not None:
            args.append("-N%d:d:%d" % (NAS_PORT_TYPE, nas_port_type))
        return run_tool(args, timeout=60)

    def test_md5_with_the_right_password_is_accepted(self):
        code, output = self.eapol_test("alice", "wonderland")
        self.assertEqual(code, 0, output)
        self.assertIn("SUCCESS", output)
        self.assertIn("Access-Challenge", output)
        self.assertIn("Access-Accept", output)
        self.assertIn('Reply-Message', output)
        self.assertIn('Access-Accept for "alice" via EAP-MD5', self.gateway.read_log())

    def test_md5_with_a_wrong_password_is_rejected(self):
        code, output = self.eapol_test("alice", "looking-glass")
        self.assertNotEqual(code, 0, output)
        self.assertIn("Access-Reject", output)
        self.assertNotIn("SUCCESS", output)
        self.assertIn("wrong_password", self.gateway.read_log())

    def test_md5_needs_a_cleartext_password(self):
        code, output = self.eapol_test("bob", "clientPass")
        self.assertNotEqual(code, 0, output)
        self.assertIn("Access-Reject", output)

    def test_md5_is_refused_over_wireless(self):
        for port_type in (WIRELESS_802_11, None):  # None: eapol_test's own default, 802.11.
            code, output = self.eapol_test("alice", "wonderland", nas_port_type=port_type,
                                           mac="02:00:00:00:01:%02x" % (port_type or 0))
            self.assertNotEqual(code, 0, output)
            self.assertIn("Access-Reject", output)
        self.assertIn("eap_md5_over_wireless", self.gateway.read_log())

    def test_eap_without_message_authenticator_is_dropped(self):
        identity = bytes([2, 7, 0, 10, 1]) + b"alice"
        attributes = [(USER_NAME, b"alice"), (EAP_MESSAGE, identity)]
        unsigned = build_request(ACCESS_REQUEST, 41, attributes, message_authenticator=False)
        self.assertIsNone(exchange(self.gateway.auth_port, unsigned, timeout=1.0))
        # The same request signed is answered with an Access-Challenge.
        signed = build_request(ACCESS_REQUEST, 42, attributes)
        reply = exchange(self.gateway.auth_port, signed)
        self.assertIsNotNone(reply)
        code, replied = verify_response(reply, signed)
        self.assertEqual(code, ACCESS_CHALLENGE)
        self.assertEqual(replied[0][0], MESSAGE_AUTHENTICATOR, "Message-Authenticator first")
        self.assertTrue(any(t == STATE for t, _ in replied))
        metrics = bench_sql.admin_get(self.gateway.admin_socket, "/metrics").decode()
        self.assertRegex(metrics, r'radiusward_gateway_drops_total\{reason="missing_message_authenticator"\} [1-9]')

    def test_conversations_in_parallel_all_complete(self):
        # Each eapol_test has its own source port, so the gateway's two
        # workers share the conversations; each must end as its password says.
        runs = [("alice", "wonderland", True)] * 5 + [("alice", "wrong", False)] * 2
        results = [None] * len(runs)

        def run(index, identity, password):
            results[index] = self.eapol_test(identity, password, mac="02:00:00:00:02:%02x" % index)

        threads = [threading.Thread(target=run, args=(i, user, password))
                   for i, (user, password, _) in enumerate(runs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for (user, password, accepted), (code, output) in zip(runs, results):
            if accepted:
                self.assertEqual(code, 0, output)
                self.assertIn("SUCCESS", output)
            else:
                self.assertNotEqual(code, 0, output)
                self.assertIn("Access-Reject", output)
        metrics = bench_sql.admin_get(self.gateway.admin_socket, "/metrics").decode()
        self.assertRegex(metrics, r'radiusward_gateway_eap_conversations_total\{event="started"\} ([7-9]|\d\d)')
        self.assertRegex(metrics, r'radiusward_gateway_eap_outcomes_total\{method="EAP-MD5",outcome="accept"\} [5-9]')
        self.assertIn("radiusward_gateway_eap_conversations_active", metrics)


if __name__ == "__main__":
    unittest.main()
