#!/usr/bin/python3
"""Integration: the generator's loss and retransmission accounting against a
real UDP server written here that answers only some requests (a real socket,
not a mock). With users bench-user-0..9 in rotation, every request for
bench-user-3 is never answered (lost after every retry), every first attempt
for bench-user-5 is dropped (answered after one retransmission), one answer
in each request for bench-user-7 is preceded by a forged one with a wrong
Response Authenticator (counted invalid, the valid one still counts), and
the rest are answered at once. The counts must come out exactly."""

import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from radiusward_fixture import (ACCESS_ACCEPT, MESSAGE_AUTHENTICATOR, USER_NAME,  # noqa: E402
                                binary_from_argv, decode_attributes, encode_attributes)

import struct  # noqa: E402

BINARY = binary_from_argv()
SECRET = b"loss-secret"


def accept_for(request, secret=SECRET):
    """An Access-Accept with a Message-Authenticator (RFC 3579 §3.2) and the
    Response Authenticator (RFC 2865 §3)."""
    body = encode_attributes([(MESSAGE_AUTHENTICATOR, b"\0" * 16)])
    header = struct.pack("!BBH", ACCESS_ACCEPT, request[1], 20 + len(body))
    unsigned = header + request[4:20] + body
    mac = hmac.new(secret, unsigned, hashlib.md5).digest()
    body = body[:2] + mac
    response_authenticator = hashlib.md5(header + request[4:20] + body + secret).digest()
    return header + response_authenticator + body


class DroppingServer(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.seen = set()
        self.stopping = False

    def run(self):
        while not self.stopping:
            try:
                request, peer = self.sock.recvfrom(4096)
            except socket.timeout:
                continue
            name = dict(decode_attributes(request[20:])).get(USER_NAME, b"")
            key = (peer, request[1], request[4:20])
            first = key not in self.seen
            self.seen.add(key)
            if name == b"bench-user-3":
                continue
            if name == b"bench-user-5" and first:
                continue
            if name == b"bench-user-7":
                self.sock.sendto(accept_for(request, b"forged"), peer)
            self.sock.sendto(accept_for(request), peer)
        self.sock.close()


class Loss(unittest.TestCase):
    def test_counts_lost_retransmitted_and_invalid_exactly(self):
        server = DroppingServer()
        server.start()
        folder = tempfile.mkdtemp(prefix="rw-bench-loss-")
        self.addCleanup(shutil.rmtree, folder, True)
        out = os.path.join(folder, "loss.json")
        try:
            done = subprocess.run([BINARY, "bench", "run", "--target", "127.0.0.1:%d" % server.port,
                                   "--secret", SECRET.decode(), "--scenario", "pap", "--users", "count:10",
                                   "--rate", "200", "--duration-s", "1", "--sockets", "3",
                                   "--timeout-ms", "300", "--retries", "2", "--json", out],
                                  capture_output=True, text=True, timeout=60)
        finally:
            server.stopping = True
            server.join()
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["sent"], 200)
        self.assertEqual(report["lost"], 20, done.stderr)                    # bench-user-3
        self.assertEqual(report["retransmissions"], 20 * 2 + 20, done.stderr)  # user-3 twice, user-5 once
        self.assertEqual(report["answered"], 180)
        self.assertEqual(report["invalid"], 20)                              # forged answers for user-7
        self.assertEqual(report["invalid_by_reason"], {"bad Response Authenticator": 20})
        self.assertFalse(report["passed"])
        self.assertIn("lost 20", report["reason"])
        # Answers after a retransmission waited at least one timeout.
        self.assertGreaterEqual(report["max_us"], 300_000)


if __name__ == "__main__":
    unittest.main(verbosity=2)
