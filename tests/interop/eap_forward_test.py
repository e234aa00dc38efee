#!/usr/bin/python3
"""Interop: two real `radiusward gateway` processes (eap.gateway_id 1 and 2,
the same users and clients, each the other's eap.forward peer) and a RADIUS
client, written here, that sends the rounds of one EAP-MD5 conversation
(RFC 3748 §5.4, RFC 3579) alternately to gateway A and gateway B, as a plain
UDP load balancer may: the gateway that did not begin the conversation
forwards the follow-up to the one its State names and relays the answer, so
the right password is accepted and a wrong one rejected whichever gateway
each round reaches. A forwarding message from a gateway that is not a peer,
or from a peer's id but another address, or under another key, is refused
and never answered; a follow-up for a peer that is down is left unanswered
for the NAS to retransmit (docs/design.md "EAP across several gateways",
docs/wire_formats.md "EAP forwarding")."""

import hashlib
import hmac
import os
import re
import shutil
import socket
import struct
import sys
import tempfile
import time
import unittest

from radiusward_fixture import *  # noqa: F401,F403

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_sql  # noqa: E402  (admin_get: the admin API without ctl)

BINARY = binary_from_argv()

USERS = r'''
alice   Cleartext-Password := "wonderland"
'''

CLIENTS = '''
client localhost {
    ipaddr = 127.0.0.1
    secret = testing123
}
'''

NAS_PORT_TYPE, ETHERNET = 61, 15
EAP_MESSAGE, STATE = 79, 24
EAP_REQUEST, EAP_RESPONSE, EAP_SUCCESS, EAP_FAILURE = 1, 2, 3, 4
EAP_IDENTITY, EAP_MD5 = 1, 4

KEY = b"k" * 16 + os.urandom(24).hex().encode()  # 64 octets, as a deployment's key file holds


def config(gateway_id, listen_port, peer_id, peer_port, key_path):
    return """
users_file: users
clients_file: clients.conf
eap:
  md5: true
  gateway_id: %d
  forward:
    listen: 127.0.0.1:%d
    key_file: %s
    timeout_ms: 1000
    peers:
      - id: %d
        address: 127.0.0.1:%d
""" % (gateway_id, listen_port, key_path, peer_id, peer_port)


def eap_packet(code, identifier, eap_type=None, data=b""):
    body = b"" if eap_type is None else bytes([eap_type]) + data
    return struct.pack("!BBH", code, identifier, 4 + len(body)) + body


def forward_message(sender, receiver, request_id, payload, key=KEY, nas=("127.0.0.1", 40000)):
    """docs/wire_formats.md "EAP forwarding", written independently of the gateway."""
    header = struct.pack("!BBHIIQqBBH", 1, 1, len(payload), sender, receiver, request_id,
                         int(time.time() * 1000), 0, 4, nas[1])
    header += socket.inet_aton(nas[0]) + b"\0" * 12
    signed = header + payload
    return signed + hmac.new(key, signed, hashlib.sha256).digest()


class TwoGateways(RemembersFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rw-eap-forward-")
        key_path = os.path.join(cls.dir, "forward.key")
        with open(key_path, "wb") as f:
            f.write(KEY + b"\n")
        # The files the configs name; the fixture's flags point each gateway at its copy of the same.
        for name, text in (("users", USERS), ("clients.conf", CLIENTS)):
            with open(os.path.join(cls.dir, name), "w") as f:
                f.write(text)
        cls.forward_ports = (free_udp_port(), free_udp_port())
        cls.gateways = []
        try:
            for index, (own, peer) in enumerate(((1, 2), (2, 1))):
                path = os.path.join(cls.dir, "gateway-%d.yaml" % own)
                with open(path, "w") as f:
                    f.write(config(own, cls.forward_ports[index], peer, cls.forward_ports[1 - index], key_path))
                cls.gateways.append(Gateway(BINARY, USERS, CLIENTS, extra_args=["--config", path],
                                            listen=("127.0.0.1",), admin=True))
        except Exception:
            # tearDownClass does not run: stop the gateway that did start.
            for gateway in cls.gateways:
                gateway.__exit__(None, None, None)
            print("test files kept in", cls.dir)
            raise
        cls.a, cls.b = cls.gateways

    @classmethod
    def tearDownClass(cls):
        for gateway in cls.gateways:
            if cls.failed:
                print(gateway.read_log())
            gateway.__exit__(None, None, None)
        if cls.failed:
            print("test files kept in", cls.dir)
        else:
            shutil.rmtree(cls.dir, ignore_errors=True)

    def round_trip(self, gateway, identifier, eap, state=None):
        """One Access-Request of the conversation to `gateway`; the reply's
        code, EAP packet and State, checked against the NAS's secret."""
        attributes = [(USER_NAME, b"alice"), (NAS_PORT_TYPE, struct.pack("!I", ETHERNET)), (EAP_MESSAGE, eap)]
        if state is not None:
            attributes.append((STATE, state))
        request = build_request(ACCESS_REQUEST, identifier, attributes)
        reply = None
        for _ in range(3):  # The NAS's retransmissions.
            reply = exchange(gateway.auth_port, request, timeout=2.0)
            if reply is not None:
                break
        self.assertIsNotNone(reply, "no reply from the gateway on port %d" % gateway.auth_port)
        code, reply_attributes = verify_response(reply, request)
        eap_reply = b"".join(value for kind, value in reply_attributes if kind == EAP_MESSAGE)
        states = [value for kind, value in reply_attributes if kind == STATE]
        return code, eap_reply, states[0] if states else None

    def conversation(self, order, password):
        """EAP-Start, Identity, MD5-Response, each to the gateway `order`
        names in turn; returns the last reply's code and EAP code."""
        code, eap, state = self.round_trip(order[0], 1, b"")
        self.assertEqual(code, ACCESS_CHALLENGE)
        self.assertEqual((eap[0], eap[4]), (EAP_REQUEST, EAP_IDENTITY))
        self.assertEqual(len(state), 29)
        code, eap, state = self.round_trip(order[1], 2, eap_packet(EAP_RESPONSE, eap[1], EAP_IDENTITY, b"alice"),
                                           state)
        self.assertEqual(code, ACCESS_CHALLENGE)
        self.assertEqual((eap[0], eap[4]), (EAP_REQUEST, EAP_MD5))
        value_size = eap[5]
        challenge = eap[6:6 + value_size]
        digest = hashlib.md5(bytes([eap[1]]) + password + challenge).digest()
        code, eap, _ = self.round_trip(order[2], 3,
                                       eap_packet(EAP_RESPONSE, eap[1], EAP_MD5, bytes([16]) + digest), state)
        return code, eap[0]

    def metrics(self, gateway):
        return bench_sql.admin_get(gateway.admin_socket, "/metrics").decode()

    def test_rounds_alternating_between_gateways_are_accepted(self):
        self.assertEqual(self.conversation((self.a, self.b, self.a), b"wonderland"), (ACCESS_ACCEPT, EAP_SUCCESS))
        self.assertEqual(self.conversation((self.b, self.a, self.b), b"wonderland"), (ACCESS_ACCEPT, EAP_SUCCESS))
        # Begun at A, finished at B: B relays A's Access-Accept.
        self.assertEqual(self.conversation((self.a, self.b, self.b), b"wonderland"), (ACCESS_ACCEPT, EAP_SUCCESS))
        self.assertRegex(self.metrics(self.b), r'radiusward_gateway_eap_forwards_total\{event="answered"\} [2-9]')
        self.assertRegex(self.metrics(self.a),
                         r'radiusward_gateway_eap_forwards_received_total\{event="decided"\} [2-9]')
        self.assertIn('Access-Accept for "alice" via EAP-MD5', self.a.read_log() + self.b.read_log())

    def test_a_wrong_password_is_rejected_across_gateways(self):
        self.assertEqual(self.conversation((self.a, self.b, self.b), b"wrong"), (ACCESS_REJECT, EAP_FAILURE))
        self.assertEqual(self.conversation((self.b, self.b, self.a), b"wrong"), (ACCESS_REJECT, EAP_FAILURE))

    def test_forwards_from_non_peers_are_refused(self):
        request = build_request(ACCESS_REQUEST, 9, [(USER_NAME, b"alice"), (EAP_MESSAGE, b"")])
        port = self.forward_ports[0]  # Gateway A's forwarding listener; its peer is 2.
        before = self.metrics(self.a)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(1.0)
            # The right key, but a sender id that is not a peer.
            s.sendto(forward_message(99, 1, 1, request), ("127.0.0.1", port))
            # The peer's id, from another address and port than the peer's listener.
            s.sendto(forward_message(2, 1, 2, request), ("127.0.0.1", port))
            # Another key.
            s.sendto(forward_message(2, 1, 3, request, key=b"x" * 64), ("127.0.0.1", port))
            with self.assertRaises(socket.timeout):
                s.recv(65535)
        after = wait_for("the refusals counted", lambda: (lambda m: m if 'reason="malformed"} 1' in m else None)(
            self.metrics(self.a)))
        self.assertRegex(after, r'radiusward_gateway_eap_forward_refused_total\{reason="unknown_peer"\} 1\b')
        self.assertRegex(after, r'radiusward_gateway_eap_forward_refused_total\{reason="wrong_source"\} 1\b')
        decided = r'radiusward_gateway_eap_forwards_received_total\{event="decided"\} (\d+)'
        self.assertEqual(re.search(decided, before).group(1), re.search(decided, after).group(1))


class OwnerDown(unittest.TestCase):
    """The gateway a State names is a peer but does not answer: the request
    is left unanswered (the NAS retransmits) and counted, never rejected."""

    def test_a_forward_to_a_stopped_peer_times_out_unanswered(self):
        folder = tempfile.mkdtemp(prefix="rw-eap-forward-down-")
        key_path = os.path.join(folder, "forward.key")
        with open(key_path, "wb") as f:
            f.write(KEY)
        for name, text in (("users", USERS), ("clients.conf", CLIENTS)):
            with open(os.path.join(folder, name), "w") as f:
                f.write(text)
        ports = (free_udp_port(), free_udp_port())
        gateways = []
        try:
            for index, (own, peer) in enumerate(((1, 2), (2, 1))):
                path = os.path.join(folder, "gateway-%d.yaml" % own)
                with open(path, "w") as f:
                    f.write(config(own, ports[index], peer, ports[1 - index], key_path))
                gateways.append(Gateway(BINARY, USERS, CLIENTS, extra_args=["--config", path],
                                        listen=("127.0.0.1",), admin=True))
            a, b = gateways
            attributes = [(USER_NAME, b"alice"), (NAS_PORT_TYPE, struct.pack("!I", ETHERNET))]
            request = build_request(ACCESS_REQUEST, 1, attributes + [(EAP_MESSAGE, b"")])
            code, reply_attributes = verify_response(exchange(b.auth_port, request), request)
            self.assertEqual(code, ACCESS_CHALLENGE)
            state = [value for kind, value in reply_attributes if kind == STATE][0]
            eap = [value for kind, value in reply_attributes if kind == EAP_MESSAGE][0]
            b.__exit__(None, None, None)
            follow_up = build_request(ACCESS_REQUEST, 2, attributes + [
                (EAP_MESSAGE, eap_packet(EAP_RESPONSE, eap[1], EAP_IDENTITY, b"alice")), (STATE, state)])
            self.assertIsNone(exchange(a.auth_port, follow_up, timeout=2.0))
            metrics = wait_for("the timeout counted", lambda: (lambda m: m if re.search(
                r'radiusward_gateway_eap_forwards_total\{event="timed_out"\} 1\b', m) else None)(
                bench_sql.admin_get(a.admin_socket, "/metrics").decode()), timeout=5)
            self.assertRegex(metrics, r'radiusward_gateway_drops_total\{reason="eap_forward_timeout"\} 1\b')
            self.assertRegex(metrics, r'radiusward_gateway_rejects_total\{reason="eap_state_other_gateway"\} 0\b')
        finally:
            for gateway in gateways:
                gateway.__exit__(None, None, None)
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
