#!/usr/bin/python3
"""Three real `radiusward member` processes on loopback with generated
configs: a leader is elected, records submitted over TCP by an independent
frame client written here (docs/wire_formats.md: frames, record encoding and
record key) are committed and listed by /records on every member, a
duplicate is acknowledged without being stored twice, a follower answers
NotLeader with the leader's submission address, SIGTERM of the leader hands
leadership over quickly, and a member whose disk was lost is replaced
through `radiusward ctl --dir DIR members replace` and catches up. The same
three members with their submission listeners on [::1] commit records too
(raft stays on 127.0.0.1: libraft 0.15 has no IPv6, docs/consensus.md).
Raft and submissions run over TLS with certificates from `radiusward certs`;
plaintext and foreign peers are refused on both ports."""

import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import tempfile
import time
import unittest

from radiusward_fixture import binary_from_argv

BINARY = binary_from_argv()

HELLO, HELLO_ACK, SUBMIT, COMMITTED, NOT_LEADER, BUSY, PING, PONG = range(1, 9)
ACCT_STATUS_TYPE, ACCT_DELAY_TIME, MESSAGE_AUTHENTICATOR, PROXY_STATE = 40, 41, 80, 33
USER_NAME, NAS_IP_ADDRESS, NAS_PORT, ACCT_SESSION_ID = 1, 4, 5, 44
START = 1


def free_tcp_port(host="127.0.0.1"):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def tlv(attr_type, value):
    return struct.pack("!BB", attr_type, len(value) + 2) + value


def record_key(client, attributes):
    """docs/wire_formats.md "Record key": SHA-256 over version 1, the client
    and the attributes stably sorted by type, without 41, 80 and 33."""
    kept = [a for a in attributes if a[0] not in (ACCT_DELAY_TIME, MESSAGE_AUTHENTICATOR, PROXY_STATE)]
    kept.sort(key=lambda a: a[0])  # Python's sort is stable.
    text = b"\x01" + bytes([len(client)]) + client + b"".join(tlv(t, v) for t, v in kept)
    return hashlib.sha256(text).digest()[:16]


def encode_record(session_id, user=b"alice", client=b"nas1", received_ms=1_700_000_000_000):
    """docs/wire_formats.md "Record (version 1)"."""
    attributes = [(ACCT_STATUS_TYPE, struct.pack("!I", START)), (USER_NAME, user),
                  (ACCT_SESSION_ID, session_id), (NAS_IP_ADDRESS, bytes([192, 0, 2, 10])),
                  (NAS_PORT, struct.pack("!I", 7))]
    key = record_key(client, attributes)
    session = hashlib.md5(session_id).digest()  # Opaque to the member.
    encoded = b"".join(tlv(t, v) for t, v in attributes)
    body = (key + session + struct.pack("!Iqq", START, received_ms, received_ms) +
            bytes([len(client)]) + client + struct.pack("!H", len(encoded)) + encoded)
    return key, body


def frame(frame_type, body):
    return struct.pack("!IB", len(body) + 1, frame_type) + body


def submit_frame(request_id, records):
    body = struct.pack("!QH", request_id, len(records))
    for key, record in records:
        body += key + struct.pack("!H", len(record)) + record
    return frame(SUBMIT, body)


def address_at(body, offset):
    length = body[offset]
    return body[offset + 1:offset + 1 + length].decode() or None


class FrameClient:
    """A gateway's side of the submission protocol, blocking."""

    def __init__(self, address, tls):
        """`tls`: an ssl.SSLContext (client certificate of the cluster CA), or
        None for plaintext."""
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        if tls is not None:
            self.sock = tls.wrap_socket(self.sock)
        self.buffer = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def receive(self):
        """(type, body) of the next frame; None when the member closed."""
        while True:
            if len(self.buffer) >= 4:
                (length,) = struct.unpack("!I", self.buffer[:4])
                if len(self.buffer) >= 4 + length:
                    body = self.buffer[4:4 + length]
                    self.buffer = self.buffer[4 + length:]
                    return body[0], body[1:]
            try:
                chunk = self.sock.recv(65536)
            except (ssl.SSLError, ConnectionResetError):
                return None  # A refused certificate shows up as an alert here (TLS 1.3).
            if not chunk:
                return None
            self.buffer += chunk

    def hello(self):
        self.send(frame(HELLO, struct.pack("!HQ", 1, 42)))
        frame_type, body = self.receive()
        assert frame_type == HELLO_ACK, frame_type
        _, member_id, is_leader = struct.unpack("!HQB", body[:11])
        return member_id, bool(is_leader), address_at(body, 11)

    def submit(self, request_id, records):
        """The answer to one Submit: ("committed", index), ("not_leader",
        address), ("busy", reason) or ("closed", None)."""
        self.send(submit_frame(request_id, records))
        answer = self.receive()
        if answer is None:
            return "closed", None
        frame_type, body = answer
        (answered_id,) = struct.unpack("!Q", body[:8])
        assert answered_id == request_id, (answered_id, request_id)
        if frame_type == COMMITTED:
            return "committed", struct.unpack("!Q", body[8:16])[0]
        if frame_type == NOT_LEADER:
            return "not_leader", address_at(body, 8)
        if frame_type == BUSY:
            return "busy", body[8]
        raise AssertionError("unexpected frame type %d" % frame_type)


class Deployment:
    """DIR/member-N.yaml, DIR/member-N/, DIR/admin/member-N.sock as
    `radiusward dev` lays them out (docs/admin_api.md)."""

    def __init__(self, count=3, submission_host="127.0.0.1"):
        # Not /tmp: raft needs a file system with O_DIRECT (docs/consensus.md).
        self.dir = tempfile.mkdtemp(prefix="rw_member_", dir="/var/tmp")
        self.ids = list(range(1, count + 1))
        self.raft = {i: "127.0.0.1:%d" % free_tcp_port() for i in self.ids}
        written = "[%s]" % submission_host if ":" in submission_host else submission_host
        self.submission = {i: "%s:%d" % (written, free_tcp_port(submission_host)) for i in self.ids}
        self.processes = {}
        # The cluster certificates, made as an operator would (docs/operations.md).
        self.certs = os.path.join(self.dir, "certs")
        subprocess.run([BINARY, "certs", "--dir", self.certs, "--members", str(count + 1),
                        "--gateways", "test,revoked"], check=True, stdout=subprocess.DEVNULL, timeout=60)
        subprocess.run([BINARY, "certs", "--dir", self.certs, "--revoke", "gateway-revoked"], check=True,
                       stdout=subprocess.DEVNULL, timeout=60)

    def tls(self, common_name="gateway-test", ca=None):
        """A TLS 1.3 client context with `common_name`'s certificate that
        checks the member's certificate against `ca` (default the cluster's)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        context.check_hostname = False  # Members are named by CN member-<id>, checked by the caller.
        context.load_verify_locations(ca or os.path.join(self.certs, "ca.pem"))
        if common_name:
            context.load_cert_chain(os.path.join(self.certs, common_name + ".pem"),
                                    os.path.join(self.certs, common_name + ".key"))
        return context

    def config_path(self, member_id):
        return os.path.join(self.dir, "member-%d.yaml" % member_id)

    def write_config(self, member_id, bootstrap=True):
        book = "".join("  - {id: %d, raft: '%s', submission: '%s'}\n" % (i, self.raft[i], self.submission[i])
                       for i in self.ids)
        with open(self.config_path(member_id), "w") as f:
            f.write("id: %d\ndata_dir: member-%d\nraft_address: '%s'\nsubmission_listen: '%s'\n"
                    "admin_socket: admin/member-%d.sock\nbootstrap: %s\nmembers:\n%s"
                    "cluster_tls: {ca: certs/ca.pem, cert: certs/member-%d.pem, key: certs/member-%d.key,"
                    " crl: certs/crl.pem}\n"
                    "logging: {level: info}\n" % (member_id, member_id, self.raft[member_id],
                                                  self.submission[member_id], member_id,
                                                  "true" if bootstrap else "false", book,
                                                  member_id, member_id))

    def start(self, member_id, bootstrap=True):
        self.write_config(member_id, bootstrap)
        log = open(os.path.join(self.dir, "member-%d.log" % member_id), "ab")
        self.processes[member_id] = subprocess.Popen(
            [BINARY, "member", "--config", self.config_path(member_id)], stdout=log, stderr=log)
        log.close()

    def socket(self, member_id):
        return os.path.join(self.dir, "admin", "member-%d.sock" % member_id)

    def ctl(self, *args):
        return subprocess.run([BINARY, "ctl", *args], capture_output=True, text=True, timeout=30)

    def status(self, member_id):
        # 3: answered, unhealthy (docs/admin_api.md "Health"); the body all the same.
        done = self.ctl("--socket", self.socket(member_id), "status", "--json", "--grace", "0")
        return json.loads(done.stdout) if done.returncode in (0, 3) else None

    def records(self, member_id):
        done = self.ctl("--socket", self.socket(member_id), "records")
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()]

    def wait_for_leader(self, among, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for member_id in among:
                status = self.status(member_id)
                if status and status["raft_role"] == "leader" and status["ready_for_work"]:
                    return member_id
            time.sleep(0.02)
        return None

    def stop(self, member_id, sig=signal.SIGTERM):
        process = self.processes.pop(member_id)
        process.send_signal(sig)
        return process.wait(timeout=20)

    def log(self, member_id):
        with open(os.path.join(self.dir, "member-%d.log" % member_id), errors="replace") as f:
            return f.read()

    def cleanup(self):
        for process in self.processes.values():
            process.kill()
            process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def submit_until_committed(address, tls, request_id, records, timeout=10.0):
    """Follows NotLeader and retries Busy, as a gateway does; returns the
    log index."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            client = FrameClient(address, tls)
            client.hello()
            outcome, value = client.submit(request_id, records)
            client.close()
        except OSError:
            outcome, value = "closed", None
        if outcome == "committed":
            return value
        if outcome == "not_leader" and value:
            address = value
        time.sleep(0.05)
    raise AssertionError("not committed within %.0f s" % timeout)


def read_until_closed(sock, timeout=10.0):
    """Everything `sock` receives until the peer closes or resets it."""
    received = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = sock.recv(4096)
        except (ConnectionResetError, ssl.SSLError):
            return received
        if not data:
            return received
        received += data
    raise AssertionError("not closed within %.0f s" % timeout)


class MemberTest(unittest.TestCase):
    def setUp(self):
        self.deployment = Deployment()
        self.addCleanup(self.deployment.cleanup)
        for member_id in self.deployment.ids:
            self.deployment.start(member_id)
        self.leader = self.deployment.wait_for_leader(self.deployment.ids)
        self.assertIsNotNone(self.leader, "no leader: " + self.deployment.log(1))

    def wait_for_records(self, member_id, count, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            records = self.deployment.records(member_id)
            if len(records) >= count:
                return records
            time.sleep(0.05)
        return self.deployment.records(member_id)

    def test_records_commit_everywhere_and_leadership_moves_on_sigterm(self):
        d = self.deployment
        follower = next(i for i in d.ids if i != self.leader)

        # A follower names the leader's submission address, in HelloAck and NotLeader.
        client = FrameClient(d.submission[follower], d.tls())
        member_id, is_leader, leader_address = client.hello()
        self.assertEqual((member_id, is_leader), (follower, False))
        self.assertEqual(leader_address, d.submission[self.leader])
        records = [encode_record(b"S-%d" % i) for i in range(5)]
        self.assertEqual(client.submit(1, records), ("not_leader", d.submission[self.leader]))
        client.close()

        # The leader commits three pipelined Submits and answers each.
        client = FrameClient(d.submission[self.leader], d.tls())
        self.assertEqual(client.hello(), (self.leader, True, d.submission[self.leader]))
        batches = [[encode_record(b"S-%d-%d" % (b, i)) for i in range(5)] for b in range(3)]
        for request_id, batch in enumerate(batches, start=10):
            client.send(submit_frame(request_id, batch))
        answered = {}
        for _ in batches:
            frame_type, body = client.receive()
            self.assertEqual(frame_type, COMMITTED)
            request_id, index = struct.unpack("!QQ", body)
            answered[request_id] = index
        self.assertEqual(sorted(answered), [10, 11, 12])
        # A re-submission (as after a leader change) is acknowledged, not stored twice.
        self.assertEqual(client.submit(13, batches[0])[0], "committed")
        client.send(frame(PING, struct.pack("!Q", 77)))
        self.assertEqual(client.receive(), (PONG, struct.pack("!Q", 77)))
        client.close()

        expected_keys = sorted(key.hex() for batch in batches for key, _ in batch)
        for member_id in d.ids:
            listed = self.wait_for_records(member_id, 15)
            self.assertEqual(sorted(r["key"] for r in listed), expected_keys, "member %d" % member_id)
            first = next(r for r in listed if r["attributes"]["Acct-Session-Id"] == "S-0-0")
            self.assertEqual(first["index"], answered[10])
            self.assertEqual(first["attributes"]["Acct-Status-Type"], "Start")
            self.assertEqual(first["attributes"]["User-Name"], "alice")
            self.assertEqual(first["attributes"]["NAS-IP-Address"], "192.0.2.10")
            self.assertEqual(first["attributes"]["NAS-Port"], 7)

        # Each Start opened a session of the live session table.
        sessions = json.loads(d.ctl("--socket", d.socket(self.leader), "sessions", "--json").stdout)["sessions"]
        self.assertEqual(sorted(x["Acct-Session-Id"] for x in sessions),
                         sorted("S-%d-%d" % (b, i) for b in range(3) for i in range(5)))
        self.assertEqual(sessions, sorted(sessions, key=lambda x: x["Acct-Unique-Session-Id"]))

        # SIGTERM of the leader: it hands leadership over, exits 0, and
        # another member is a ready leader quickly.
        old = self.leader
        began = time.monotonic()
        self.assertEqual(d.stop(old), 0, d.log(old))
        survivors = [i for i in d.ids if i != old]
        new = d.wait_for_leader(survivors, timeout=5.0)
        took = time.monotonic() - began
        self.assertIsNotNone(new)
        self.assertLess(took, 3.0)
        print("leader %d stopped; member %d ready leader after %.0f ms" % (old, new, took * 1000))
        self.assertIn("transferring leadership", d.log(old))

        index = submit_until_committed(d.submission[survivors[0]], d.tls(), 20, [encode_record(b"after")])
        self.assertGreater(index, max(answered.values()))
        for member_id in survivors:
            self.assertEqual(len(self.wait_for_records(member_id, 16)), 16)

        # The old leader "lost its disk": it starts empty without bootstrap
        # and is put back with `ctl --dir DIR members replace`; it catches up.
        shutil.rmtree(os.path.join(d.dir, "member-%d" % old))
        d.start(old, bootstrap=False)
        deadline = time.monotonic() + 10
        while d.status(old) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        refused = d.ctl("--dir", d.dir, "--member", str(old), "members", "replace", str(old), d.raft[old])
        self.assertEqual(refused.returncode, 1)
        self.assertIn("not leader", refused.stderr)
        done = d.ctl("--dir", d.dir, "members", "replace", str(old), d.raft[old])
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(json.loads(done.stdout)["ok"])
        self.assertEqual(len(self.wait_for_records(old, 16, timeout=15)), 16)

    def refused(self, tls):
        """True when the leader's submission port gives no HelloAck to a
        client using `tls` (None: plaintext)."""
        try:
            client = FrameClient(self.deployment.submission[self.leader], tls)
        except (ssl.SSLError, OSError):
            return True  # Refused during the handshake.
        try:
            client.send(frame(HELLO, struct.pack("!HQ", 1, 42)))
            return client.receive() is None
        except (ssl.SSLError, OSError):
            return True
        finally:
            client.close()

    def test_the_submission_port_takes_only_gateway_certificates_of_the_cluster_ca(self):
        d = self.deployment
        # The gateway certificate is served; the member's certificate names it.
        client = FrameClient(d.submission[self.leader], d.tls())
        self.assertEqual(client.sock.getpeercert()["subject"], ((("commonName", "member-%d" % self.leader),),))
        self.assertEqual(client.hello()[:2], (self.leader, True))
        client.close()
        self.assertTrue(self.refused(None), "a plaintext Hello got a HelloAck")
        self.assertTrue(self.refused(d.tls(common_name=None)), "a client without a certificate was served")
        self.assertTrue(self.refused(d.tls("gateway-revoked")), "a revoked certificate was served")
        self.assertTrue(self.refused(d.tls("member-%d" % self.leader)), "a member's certificate may submit")
        other = os.path.join(d.dir, "other-ca")
        subprocess.run([BINARY, "certs", "--dir", other, "--gateways", "test"], check=True,
                       stdout=subprocess.DEVNULL, timeout=60)
        foreign = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        foreign.check_hostname = False
        foreign.load_verify_locations(os.path.join(d.certs, "ca.pem"))
        foreign.load_cert_chain(os.path.join(other, "gateway-test.pem"), os.path.join(other, "gateway-test.key"))
        self.assertTrue(self.refused(foreign), "a certificate of another CA was served")
        metrics = d.ctl("--socket", d.socket(self.leader), "metrics").stdout
        refused = [line for line in metrics.splitlines() if 'reason="tls_refused"' in line]
        self.assertTrue(refused and int(float(refused[0].split()[-1])) >= 4, refused)

    def transport_counts(self, member_id):
        """The member's radiusward_member_raft_transport_total counters, by event."""
        metrics = self.deployment.ctl("--socket", self.deployment.socket(member_id), "metrics").stdout
        counts = {}
        for line in metrics.splitlines():
            if line.startswith("radiusward_member_raft_transport_total{"):
                event = line.split('event="', 1)[1].split('"', 1)[0]
                counts[event] = int(float(line.split()[-1]))
        return counts

    def wait_for_count(self, member_id, event, above, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            counts = self.transport_counts(member_id)
            if counts.get(event, 0) > above:
                return counts
            time.sleep(0.05)
        self.fail("%s of member %d stayed at %d: %s" % (event, member_id, above, counts))

    def test_the_raft_port_speaks_only_tls_with_member_certificates(self):
        """docs/security.md "Raft port": the members elected their leader over
        TLS; libraft's plaintext handshake and a RequestVote for a far higher
        term are closed unread, and the term does not move; a certificate of
        the cluster CA for an id that is not a member is refused too."""
        d = self.deployment
        follower = next(i for i in d.ids if i != self.leader)
        before = self.transport_counts(follower)
        self.assertGreater(before.get("inbound_accepted", 0) + before.get("outbound_connected", 0), 0, before)
        term = d.status(follower)["term"]
        # libraft 0.15's TCP handshake (protocol 1, sender id, address padded
        # to 8 bytes, little endian), then a RequestVote (type 3) that a
        # plaintext member would obey by stepping into term + 100.
        address = d.raft[self.leader].encode() + b"\0"
        address += b"\0" * (-len(address) % 8)
        handshake = struct.pack("<QQQ", 1, self.leader, len(address)) + address
        vote = struct.pack("<QQ", 3, 40) + struct.pack("<QQQQQ", term + 100, self.leader, 1 << 40, term + 100, 0)
        host, port = d.raft[follower].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(handshake + vote)
            answer = read_until_closed(sock)
        # At most a TLS alert record (content type 21), never a raft message.
        self.assertTrue(answer == b"" or answer[0] == 21, answer)
        self.wait_for_count(follower, "refused_handshake", before.get("refused_handshake", 0))
        time.sleep(0.5)
        for member_id in d.ids:
            self.assertEqual(d.status(member_id)["term"], term, "member %d" % member_id)

        # member-4 is signed by the cluster CA but is not in the member list.
        stranger = d.tls("member-4")
        try:
            with socket.create_connection((host, int(port)), timeout=10) as plain:
                with stranger.wrap_socket(plain) as sock:
                    sock.sendall(handshake)
                    read_until_closed(sock)
        except (ssl.SSLError, OSError):
            pass  # Refused during the handshake: counted all the same.
        self.wait_for_count(follower, "refused_identity", before.get("refused_identity", 0))
        self.assertEqual(d.status(follower)["term"], term)

    def test_usage_errors_of_members_exit_2(self):
        d = self.deployment
        self.assertEqual(d.ctl("--dir", d.dir, "members", "add", "4").returncode, 2)
        self.assertEqual(d.ctl("--dir", d.dir, "members", "remove", "2", "127.0.0.1:1").returncode, 2)
        self.assertEqual(d.ctl("--dir", d.dir, "members", "move", "2").returncode, 2)
        self.assertEqual(d.ctl("--dir", d.dir, "status", "members", "remove", "2").returncode, 2)

    def test_a_bad_config_exits_2_with_its_position(self):
        path = os.path.join(self.deployment.dir, "bad.yaml")
        with open(path, "w") as f:
            f.write("id: 300\n")
        done = subprocess.run([BINARY, "member", "--config", path], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 2)
        self.assertIn(path + ":1:5: expected an integer between 1 and 255, got '300'", done.stderr)


class MemberIpv6Test(unittest.TestCase):
    """Submission listeners on [::1]; raft on 127.0.0.1 (libraft 0.15 has no IPv6)."""

    def setUp(self):
        self.deployment = Deployment(submission_host="::1")
        self.addCleanup(self.deployment.cleanup)
        for member_id in self.deployment.ids:
            self.deployment.start(member_id)
        self.leader = self.deployment.wait_for_leader(self.deployment.ids)
        self.assertIsNotNone(self.leader, "no leader: " + self.deployment.log(1))

    def test_records_submitted_over_ipv6_commit_on_every_member(self):
        d = self.deployment
        follower = next(i for i in d.ids if i != self.leader)
        # A follower reached over IPv6 names the leader's bracketed address.
        client = FrameClient(d.submission[follower], d.tls())
        self.assertEqual(client.sock.family, socket.AF_INET6)
        member_id, is_leader, leader_address = client.hello()
        self.assertEqual((member_id, is_leader), (follower, False))
        self.assertEqual(leader_address, d.submission[self.leader])
        self.assertTrue(leader_address.startswith("[::1]:"), leader_address)
        client.close()

        # Submitted to the follower, redirected to the leader over IPv6.
        records = [encode_record(b"V6-%d" % i) for i in range(3)]
        self.assertGreater(submit_until_committed(d.submission[follower], d.tls(), 1, records), 0)
        expected = sorted(key.hex() for key, _ in records)
        for member_id in d.ids:
            deadline = time.monotonic() + 10
            listed = d.records(member_id)
            while len(listed) < len(records) and time.monotonic() < deadline:
                time.sleep(0.05)
                listed = d.records(member_id)
            self.assertEqual(sorted(r["key"] for r in listed), expected, "member %d" % member_id)

    def test_an_ipv6_raft_address_is_refused_with_its_position(self):
        path = os.path.join(self.deployment.dir, "v6raft.yaml")
        with open(path, "w") as f:
            f.write("id: 1\ndata_dir: d\nraft_address: '[::1]:7201'\nsubmission_listen: '[::1]:7301'\n"
                    "members:\n  - {id: 1, raft: 127.0.0.1:7201, submission: '[::1]:7301'}\n")
        done = subprocess.run([BINARY, "member", "--config", path], capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 2)
        self.assertIn(path + ":3:15: raft address '[::1]:7201' is IPv6", done.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
