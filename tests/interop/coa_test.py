#!/usr/bin/python3
"""Interop: Disconnect and CoA (RFC 5176) on real processes. Three `radiusward
member` processes and a gateway (tests/fault/cluster_fixture.py); FreeRADIUS's
radclient plays the NAS's accounting (Starts with Calling-Station-Id and
Framed-IP-Address), and a NAS's Dynamic Authorization listener is played by
pyrad: it checks each request's Request Authenticator (pyrad's
VerifyCoARequest) and Message-Authenticator with the client's secret, answers
ACK for the sessions it knows and NAK with Error-Cause 503
(Session-Context-Not-Found) for the others. `radiusward ctl disconnect` and
`ctl coa` find the sessions by user, MAC (any notation), framed IP and session
id in the cluster's committed session table and must print one line per
session, exit 0 only when every NAS acknowledged, 5 on a NAK or a NAS that
never answers, 4 when no session matches."""

import atexit
import hashlib
import hmac
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from pyrad import packet as pyrad_packet
from pyrad.dictionary import Dictionary

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fault"))

from cluster_fixture import Cluster, free_port  # noqa: E402
from radiusward_fixture import RemembersFailure, binary_from_argv  # noqa: E402

BINARY = binary_from_argv()

# The attributes the listener reads, for pyrad.
DICTIONARY = """ATTRIBUTE User-Name 1 string
ATTRIBUTE NAS-IP-Address 4 ipaddr
ATTRIBUTE Framed-IP-Address 8 ipaddr
ATTRIBUTE Session-Timeout 27 integer
ATTRIBUTE Calling-Station-Id 31 string
ATTRIBUTE NAS-Identifier 32 string
ATTRIBUTE Acct-Session-Id 44 string
ATTRIBUTE Message-Authenticator 80 octets
ATTRIBUTE Error-Cause 101 integer
"""

# user, Acct-Session-Id, Calling-Station-Id, Framed-IP-Address; the NAS knows
# every session but ghost's.
SESSIONS = [
    ("alice", "a-1", "AA-BB-CC-DD-EE-01", "10.9.0.1"),
    ("bob", "b-1", "00:11:22:33:44:55", "10.9.0.2"),
    ("carol", "c-1", "0011.2233.4466", "10.9.0.3"),
    ("erin", "e-1", "00-11-22-33-44-77", "10.9.0.5"),
    ("ghost", "g-1", "00-11-22-33-44-88", "10.9.0.6"),
]
KNOWN = {"a-1", "b-1", "c-1", "e-1"}


def message_authenticator_ok(raw, secret):
    """RFC 5176 §3.4 / RFC 3579 §3.2: HMAC-MD5 over the request with the
    authenticator field and the Message-Authenticator's value zeroed."""
    offset = 20
    while offset + 2 <= len(raw):
        kind, length = raw[offset], raw[offset + 1]
        if kind == 80 and length == 18:
            zeroed = raw[:4] + bytes(16) + raw[20:offset + 2] + bytes(16) + raw[offset + 18:]
            return hmac.compare_digest(hmac.new(secret, zeroed, hashlib.md5).digest(), raw[offset + 2:offset + 18])
        offset += max(length, 2)
    return False


class NasListener:
    """A NAS's Dynamic Authorization server (RFC 5176 §2) on 127.0.0.1."""

    def __init__(self, secret):
        self.secret = secret.encode()
        self.dictionary = Dictionary(_dictionary_file())
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = []  # (code, attributes, authenticator ok, message authenticator ok)
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopping:
            try:
                raw, peer = self.sock.recvfrom(4096)
            except socket.timeout:
                continue
            request = pyrad_packet.CoAPacket(packet=raw, secret=self.secret, dict=self.dictionary)
            authentic = request.VerifyCoARequest()
            signed = message_authenticator_ok(raw, self.secret)
            attributes = {key: request[key] for key in request.keys() if isinstance(key, str)}
            self.received.append((request.code, attributes, authentic, signed))
            if not (authentic and signed):
                continue  # a NAS drops what it cannot authenticate (RFC 5176 §3.4)
            known = attributes.get("Acct-Session-Id", [""])[0] in KNOWN
            disconnect = request.code == pyrad_packet.DisconnectRequest
            reply = request.CreateReply()
            if known:
                reply.code = pyrad_packet.DisconnectACK if disconnect else pyrad_packet.CoAACK
            else:
                reply.code = pyrad_packet.DisconnectNAK if disconnect else pyrad_packet.CoANAK
                reply["Error-Cause"] = 503
            self.sock.sendto(reply.ReplyPacket(), peer)

    def close(self):
        self.stopping = True
        self.thread.join(timeout=5)
        self.sock.close()


_DICTIONARY_PATH = None


def _dictionary_file():
    global _DICTIONARY_PATH
    if _DICTIONARY_PATH is None:
        handle, _DICTIONARY_PATH = tempfile.mkstemp(prefix="rw-coa-dict-")
        atexit.register(os.remove, _DICTIONARY_PATH)
        with os.fdopen(handle, "w") as f:
            f.write(DICTIONARY)
    return _DICTIONARY_PATH


class DynamicAuthorization(RemembersFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="rw-coa-")
        cls.cluster = Cluster(BINARY, cls.root, workers=1)
        cls.nas = NasListener(Cluster.SECRET)
        # The deployment's own clients.conf says where the NAS listens for
        # Disconnect and CoA: `ctl --dir` reads it through gateway.yaml.
        clients = os.path.join(cls.root, "clients.conf")
        with open(clients) as f:
            text = f.read()
        with open(clients, "w") as f:
            f.write(text.replace("  shortname = localhost\n", f"  shortname = localhost\n  coa_port = {cls.nas.port}\n"))
        cls.failed = False
        try:
            cls.cluster.start_ready()
            for user, session, mac, ip in SESSIONS:
                cls.start_session(user, session, mac, ip)
            cls.wait_sessions(len(SESSIONS))
        except Exception:
            cls.nas.close()
            cls.cluster.finish(ok=False)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.nas.close()
        cls.cluster.finish(ok=not cls.failed)

    @classmethod
    def start_session(cls, user, session, mac, ip):
        attributes = (f"User-Name = \"{user}\"\nAcct-Status-Type = Start\nAcct-Session-Id = \"{session}\"\n"
                      f"NAS-IP-Address = 127.0.0.1\nNAS-Port = 7\nCalling-Station-Id = \"{mac}\"\n"
                      f"Framed-IP-Address = {ip}\n")
        done = subprocess.run(["radclient", "-x", "-r", "3", "-t", "3", f"127.0.0.1:{cls.cluster.acct_port}",
                               "acct", Cluster.SECRET], input=attributes, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=60)
        assert done.returncode == 0 and "Received Accounting-Response" in done.stdout, done.stdout

    @classmethod
    def wait_sessions(cls, count, timeout=20):
        """Until the leader's committed session table shows them all."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            leader = cls.cluster.leader()
            body = cls.cluster.ctl(f"member-{leader}", "sessions") if leader else None
            if body and len(json.loads(body)["sessions"]) >= count:
                return
            time.sleep(0.2)
        raise AssertionError(f"fewer than {count} sessions after {timeout} s")

    def ctl(self, *args):
        done = subprocess.run([BINARY, "ctl", *args], capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    def last_request(self):
        self.assertTrue(self.nas.received)
        return self.nas.received[-1]

    def test_1_disconnect_by_user_is_acknowledged(self):
        code, out, err = self.ctl("--dir", self.root, "disconnect", "--user", "alice")
        self.assertEqual(code, 0, out + err)
        self.assertEqual(out, f"session a-1 user alice nas 127.0.0.1:{self.nas.port} ACK\n")
        request_code, attributes, authentic, signed = self.last_request()
        self.assertEqual(request_code, pyrad_packet.DisconnectRequest)
        self.assertTrue(authentic and signed)
        # RFC 5176 §3: the NAS and session identification attributes.
        self.assertEqual(attributes["User-Name"], ["alice"])
        self.assertEqual(attributes["Acct-Session-Id"], ["a-1"])
        self.assertEqual(attributes["NAS-IP-Address"], ["127.0.0.1"])
        self.assertEqual(attributes["Calling-Station-Id"], ["AA-BB-CC-DD-EE-01"])
        self.assertEqual(attributes["Framed-IP-Address"], ["10.9.0.1"])

    def test_2_disconnect_by_mac_in_another_notation(self):
        code, out, err = self.ctl("--dir", self.root, "disconnect", "--mac", "0011.2233.4455")
        self.assertEqual(code, 0, out + err)
        self.assertEqual(out, f"session b-1 user bob nas 127.0.0.1:{self.nas.port} ACK\n")
        self.assertEqual(self.last_request()[1]["User-Name"], ["bob"])

    def test_3_disconnect_by_framed_ip(self):
        code, out, err = self.ctl("--dir", self.root, "disconnect", "--ip", "10.9.0.3")
        self.assertEqual(code, 0, out + err)
        self.assertEqual(out, f"session c-1 user carol nas 127.0.0.1:{self.nas.port} ACK\n")

    def test_4_a_nak_names_its_error_cause_and_exits_6(self):
        code, out, err = self.ctl("--dir", self.root, "disconnect", "--session", "g-1")
        self.assertEqual(code, 6, out + err)
        self.assertEqual(out, f"session g-1 user ghost nas 127.0.0.1:{self.nas.port} "
                              "NAK Error-Cause=Session-Context-Not-Found(503)\n")

    def test_5_coa_carries_the_changes(self):
        code, out, err = self.ctl("--dir", self.root, "coa", "--user", "erin", "Session-Timeout=60")
        self.assertEqual(code, 0, out + err)
        self.assertEqual(out, f"session e-1 user erin nas 127.0.0.1:{self.nas.port} ACK\n")
        request_code, attributes, authentic, signed = self.last_request()
        self.assertEqual(request_code, pyrad_packet.CoARequest)
        self.assertTrue(authentic and signed)
        self.assertEqual(attributes["Session-Timeout"], [60])
        self.assertEqual(attributes["Acct-Session-Id"], ["e-1"])

    def test_6_every_session_of_a_filter_gets_its_line(self):
        # Both sessions on the NAS: one known, one not. One NAK makes it 6.
        code, out, err = self.ctl("--dir", self.root, "disconnect", "--nas", "127.0.0.1")
        self.assertEqual(code, 6, out + err)
        lines = out.splitlines()
        self.assertEqual(len(lines), len(SESSIONS), out)
        self.assertEqual(sum(line.endswith(" ACK") for line in lines), len(KNOWN), out)
        self.assertIn(f"session g-1 user ghost nas 127.0.0.1:{self.nas.port} "
                      "NAK Error-Cause=Session-Context-Not-Found(503)", lines)

    def test_7_no_session_matches_exits_5(self):
        before = len(self.nas.received)
        code, out, err = self.ctl("--dir", self.root, "disconnect", "--user", "nobody")
        self.assertEqual((code, out), (5, ""), err)
        self.assertIn("no session matches the filter", err)
        self.assertEqual(len(self.nas.received), before)

    def test_8_a_dead_nas_times_out_after_its_tries(self):
        dead_port = free_port(socket.SOCK_DGRAM)
        clients = os.path.join(self.root, "dead-clients.conf")
        with open(clients, "w") as f:
            f.write("client localhost {\n ipaddr = 127.0.0.1\n secret = testing123\n"
                    f" coa_port = {dead_port}\n}}\n")
        leader = self.cluster.leader()
        started = time.monotonic()
        code, out, err = self.ctl("--socket", self.cluster.socket_path(f"member-{leader}"), "--clients", clients,
                                  "--tries", "2", "disconnect", "--user", "alice")
        elapsed = time.monotonic() - started
        self.assertEqual(code, 6, out + err)
        self.assertEqual(out, f"session a-1 user alice nas 127.0.0.1:{dead_port} timeout after 2 tries\n")
        # 1 s, then 2 s.
        self.assertGreaterEqual(elapsed, 3.0)
        self.assertLess(elapsed, 20.0)

    def test_9_a_wrong_secret_is_dropped_by_the_nas(self):
        clients = os.path.join(self.root, "wrong-clients.conf")
        with open(clients, "w") as f:
            f.write("client localhost {\n ipaddr = 127.0.0.1\n secret = not-the-secret\n"
                    f" coa_port = {self.nas.port}\n}}\n")
        leader = self.cluster.leader()
        code, out, err = self.ctl("--socket", self.cluster.socket_path(f"member-{leader}"), "--clients", clients,
                                  "--tries", "1", "disconnect", "--user", "bob")
        self.assertEqual(code, 6, out + err)
        self.assertIn("timeout after 1 try", out)
        _, _, authentic, signed = self.last_request()
        self.assertFalse(authentic or signed)

    def test_usage_errors_exit_2(self):
        for args in (["disconnect"], ["coa", "--user", "erin"], ["disconnect", "--user", "a", "Session-Timeout=1"],
                     ["coa", "--user", "erin", "User-Name=x"], ["coa", "--user", "erin", "Nope=1"]):
            code, _, err = self.ctl("--dir", self.root, *args)
            self.assertEqual(code, 2, (args, err))


if __name__ == "__main__":
    unittest.main(verbosity=2)
