#!/usr/bin/python3
"""Interop: FreeRADIUS's own radtest/radclient (freeradius-utils) against a
real radiusward gateway on loopback — PAP, CHAP, MS-CHAP, MAB, rejections,
unknown clients, wrong secrets, retransmissions and Status-Server."""

import os
import struct
import subprocess
import time
import unittest

from radiusward_fixture import *  # noqa: F401,F403

BINARY = binary_from_argv()

USERS = r'''
# Demo-like users file, as an operator writes it.
alice   Cleartext-Password := "wonderland"
        Reply-Message = "Hello",
        Session-Timeout = 3600,
        Tunnel-Type:1 = VLAN,
        Tunnel-Medium-Type:1 = IEEE-802,
        Tunnel-Private-Group-Id:1 = "100"

bob     NT-Password := 0x44EBBA8D5312B8D611474411F56989AE
        Filter-Id = "staff"

carol   Crypt-Password := "$6$saltsalt$As4wrv0kZlfch1du9WeH7qhskyLriQWySXrZzynnvi46nFnNxjdpl6ksRegrrKexvhIa/Iny8S8uF3fVWTMuC1"

dave    Auth-Type := Reject
        Reply-Message = "Denied"

# MAB: the MAC as the user name, any notation normalised.
00:11:22:33:44:55   Cleartext-Password := "00:11:22:33:44:55"
        Tunnel-Type:1 = VLAN,
        Tunnel-Medium-Type:1 = IEEE-802,
        Tunnel-Private-Group-Id:1 = "200"

# A catch-all DEFAULT, as etc/demo/users ends: it lists no MAC and admits no
# one by itself (docs/authentication.md "MAB").
DEFAULT
        Idle-Timeout = 600
'''

CLIENTS = '''
client localhost {
    ipaddr = 127.0.0.1
    secret = testing123
}
client localhost6 {
    ipv6addr = ::1
    secret = testing123
}
'''


def radtest(gateway, user, password, method="pap", secret="testing123", host="127.0.0.1"):
    args = ["radtest", "-t", method]
    if ":" in host:
        args.append("-6")
    server = "%s:%d" % (host if ":" not in host else "[%s]" % host, gateway.auth_port)
    # The NAS address is given (not `hostname`, which may not resolve).
    args += [user, password, server, "0", secret, "0", host]
    return run_tool(args)


class RadtestInterop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gateway = Gateway(BINARY, USERS, CLIENTS)

    @classmethod
    def tearDownClass(cls):
        cls.gateway.__exit__(None, None, None)

    def assert_accept(self, output):
        self.assertIn("Received Access-Accept", output, output)

    def assert_reject(self, output):
        self.assertIn("Received Access-Reject", output, output)

    def test_pap_cleartext_accepts_with_vlan_reply(self):
        code, output = radtest(self.gateway, "alice", "wonderland")
        self.assert_accept(output)
        self.assertIn("Tunnel-Private-Group-Id:1 = \"100\"", output)
        self.assertIn("Session-Timeout = 3600", output)

    def test_pap_wrong_password_rejects(self):
        code, output = radtest(self.gateway, "alice", "looking-glass")
        self.assert_reject(output)
        # alice's own Reply-Message would tell that alice exists.
        self.assertNotIn("Hello", output)

    def test_auth_type_reject_keeps_its_reply_message(self):
        code, output = radtest(self.gateway, "dave", "whatever")
        self.assert_reject(output)
        self.assertIn('Reply-Message = "Denied"', output)

    def test_pap_unknown_user_rejects(self):
        code, output = radtest(self.gateway, "mallory", "anything")
        self.assert_reject(output)

    def test_pap_over_ipv6(self):
        code, output = radtest(self.gateway, "alice", "wonderland", host="::1")
        self.assert_accept(output)

    def test_pap_nt_password(self):
        code, output = radtest(self.gateway, "bob", "clientPass")
        self.assert_accept(output)
        self.assertIn('Filter-Id = "staff"', output)

    def test_pap_crypt_password(self):
        code, output = radtest(self.gateway, "carol", "s3cret")
        self.assert_accept(output)
        code, output = radtest(self.gateway, "carol", "s3cret!")
        self.assert_reject(output)

    def test_auth_type_reject(self):
        code, output = radtest(self.gateway, "dave", "whatever")
        self.assert_reject(output)

    def test_chap_accepts_and_wrong_password_rejects(self):
        self.assert_accept(radtest(self.gateway, "alice", "wonderland", "chap")[1])
        self.assert_reject(radtest(self.gateway, "alice", "wonderlanD", "chap")[1])

    def test_mschapv1_from_cleartext_and_nt_password(self):
        self.assert_accept(radtest(self.gateway, "alice", "wonderland", "mschap")[1])
        self.assert_accept(radtest(self.gateway, "bob", "clientPass", "mschap")[1])
        self.assert_reject(radtest(self.gateway, "bob", "clientpass", "mschap")[1])

    def mab(self, mac):
        """radclient's output for a MAB request: the MAC as User-Name, password and Calling-Station-Id."""
        attributes = 'User-Name = "%s"\nUser-Password = "%s"\nCalling-Station-Id = "%s"\n' \
                     'Message-Authenticator = 0x00\n' % (mac, mac, mac)
        done = subprocess.run(["radclient", "-x", "127.0.0.1:%d" % self.gateway.auth_port, "auth",
                               "testing123"], input=attributes, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        return done.stdout

    def test_mab_in_any_notation(self):
        for mac in ("00-11-22-33-44-55", "0011.2233.4455", "001122334455", "00:11:22:33:44:55"):
            output = self.mab(mac)
            self.assertIn("Received Access-Accept", output, output)
            self.assertIn("Tunnel-Private-Group-Id:1 = \"200\"", output)

    def test_unlisted_mac_is_rejected_despite_catch_all_default(self):
        output = self.mab("66-77-88-99-AA-BB")
        self.assertIn("Received Access-Reject", output, output)

    def test_status_server_on_both_ports(self):
        for port, answer in ((self.gateway.auth_port, "Access-Accept"), (self.gateway.acct_port, "Accounting-Response")):
            done = subprocess.run(["radclient", "-x", "127.0.0.1:%d" % port, "status", "testing123"],
                                  input="Message-Authenticator = 0x00\n", text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=30)
            output = done.stdout
            self.assertEqual(done.returncode, 0, output)
            self.assertIn("Received " + answer, output)

    def test_responses_carry_message_authenticator_first(self):
        request = build_request(ACCESS_REQUEST, 9, [(USER_NAME, b"alice")])
        password = hide_password(b"wonderland", SECRET, request[4:20])
        request = build_request(ACCESS_REQUEST, 9, [(USER_NAME, b"alice"), (USER_PASSWORD, password)],
                                authenticator=request[4:20])
        reply = exchange(self.gateway.auth_port, request)
        self.assertIsNotNone(reply)
        code, attributes = verify_response(reply, request)
        self.assertEqual(code, ACCESS_ACCEPT)
        self.assertEqual(attributes[0][0], MESSAGE_AUTHENTICATOR)

    def test_wrong_secret_gets_no_answer(self):
        request = build_request(ACCESS_REQUEST, 3, [(USER_NAME, b"alice")], secret=b"not-the-secret")
        self.assertIsNone(exchange(self.gateway.auth_port, request, timeout=1.0))

    def test_missing_message_authenticator_gets_no_answer(self):
        authenticator = os.urandom(16)
        request = build_request(ACCESS_REQUEST, 4, [
            (USER_NAME, b"alice"), (USER_PASSWORD, hide_password(b"wonderland", SECRET, authenticator))],
            authenticator=authenticator, message_authenticator=False)
        self.assertIsNone(exchange(self.gateway.auth_port, request, timeout=1.0))

    def test_unknown_client_gets_no_answer(self):
        request = build_request(ACCESS_REQUEST, 5, [(USER_NAME, b"alice")])
        self.assertIsNone(exchange(self.gateway.auth_port, request, source="127.0.0.2", timeout=1.0))

    def test_malformed_packets_get_no_answer_and_server_survives(self):
        garbage = [b"", b"\x01", b"\x01\x02\x00\x10" + b"\0" * 12, b"\x01\x02\xff\xff" + b"\0" * 16,
                   b"\x01\x02\x00\x17" + b"\0" * 16 + b"\x01\x00\x00", b"\x63\x02\x00\x14" + b"\0" * 16,
                   os.urandom(4096), os.urandom(5000)]
        for packet in garbage:
            self.assertIsNone(exchange(self.gateway.auth_port, packet, timeout=0.3))
        self.assert_accept(radtest(self.gateway, "alice", "wonderland")[1])

    def test_retransmission_gets_the_identical_reply(self):
        import socket as socket_module
        authenticator = os.urandom(16)
        request = build_request(ACCESS_REQUEST, 77, [
            (USER_NAME, b"alice"), (USER_PASSWORD, hide_password(b"wonderland", SECRET, authenticator))],
            authenticator=authenticator)
        with socket_module.socket(socket_module.AF_INET, socket_module.SOCK_DGRAM) as s:
            s.settimeout(2)
            s.sendto(request, ("127.0.0.1", self.gateway.auth_port))
            first = s.recv(4096)
            s.sendto(request, ("127.0.0.1", self.gateway.auth_port))
            second = s.recv(4096)
        verify_response(first, request)
        self.assertEqual(first, second)

    def test_accounting_is_not_answered_until_replicated(self):
        request = build_accounting_request(1, [(USER_NAME, b"alice"), (ACCT_STATUS_TYPE, struct.pack("!I", 1)),
                                               (ACCT_SESSION_ID, b"s1")])
        self.assertIsNone(exchange(self.gateway.acct_port, request, timeout=1.0))


if __name__ == "__main__":
    unittest.main(verbosity=2)
