#!/usr/bin/python3
"""Interop: RadSec (RFC 6614) on the gateway of a real `radiusward dev`
deployment (three members, so accounting is acknowledged after commit),
turned on with the flags of issue 13 and certificates made here by
`radiusward certs`. Debian's radsecproxy forwards radclient's and radtest's
UDP to the RadSec port: Access-Accept, Access-Reject and an
Accounting-Response whose record the cluster then holds. A direct TLS
client (Python's ssl module) with a client certificate is answered; without
one, with a revoked one or with one of another CA it is refused. A peer that
connects and never sends a ClientHello does not keep a new connection from
being answered, and is closed at the handshake timeout. One connection
carries 100 requests sent before any reply is read, and all are answered.
An entry with certificate_name answers only a certificate naming it.
/metrics counts what happened. A gateway with small bounds refuses
connections over its per-client and total bounds and closes idle and
stalled ones; `radiusward check` validates the tls and radsec sections."""

import json
import os
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import time
import unittest

from radiusward_fixture import (ACCESS_ACCEPT, ACCESS_REJECT, ACCESS_REQUEST, ACCOUNTING_RESPONSE,
                                ACCT_SESSION_ID, ACCT_STATUS_TYPE, NAS_IP_ADDRESS, STATUS_SERVER, USER_NAME,
                                USER_PASSWORD, RemembersFailure, binary_from_argv, build_accounting_request,
                                build_request, free_udp_port, hide_password, read, run_tool, verify_response,
                                wait_for)

BINARY = binary_from_argv()
ROOT = os.environ.get("RW_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
USERS = os.path.join(ROOT, "etc", "demo", "users")
CLIENTS = os.path.join(ROOT, "etc", "demo", "clients.conf")
RADSEC_SECRET = b"radsec"  # RFC 6614 §2.3

RADSEC_CLIENTS = """# RadSec clients: FreeRADIUS syntax, proto = tls (RFC 6614 §2.3: secret radsec).
clients radsec {
  client local {
    ipaddr = 127.0.0.1
    proto = tls
    secret = radsec
  }
}
# A UDP client: not a RadSec client (a warning says so).
client udp_only {
  ipaddr = 127.0.0.2
  secret = testing123
}
"""

# Entries a certificate must name (certificate_name): the proxy's certificate
# (CN and SAN DNS gateway-proxy) is answered from 127.0.0.3, case ignored in
# the DNS name, and refused from 127.0.0.4, whose entry names another peer.
NAMED_RADSEC_CLIENTS = """clients named {
  client named_right {
    ipaddr = 127.0.0.3
    proto = tls
    certificate_name = "GATEWAY-proxy"
  }
  client named_other {
    ipaddr = 127.0.0.4
    proto = tls
    certificate_name = "gateway-server"
  }
}
"""


def free_tcp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_exactly(stream, count):
    data = b""
    while len(data) < count:
        chunk = stream.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed after %d of %d octets" % (len(data), count))
        data += chunk
    return data


def read_packet(stream):
    """One RADIUS packet framed by its Length field (RFC 6613, RFC 6614)."""
    header = read_exactly(stream, 4)
    length = struct.unpack("!H", header[2:4])[0]
    return header + read_exactly(stream, length - 4)


def closed_by_peer(stream):
    """True when the next read finds the connection ended: close_notify,
    a TCP end without it, or a reset."""
    try:
        return stream.recv(4096) == b""
    except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionResetError):
        return True


def read_metrics(socket_path):
    """A gateway's /metrics, read over its admin socket, as {series: value}."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(socket_path)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n")
        response = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            response += chunk
    series = {}
    for line in response.split(b"\r\n\r\n", 1)[1].decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            series[name] = float(value)
    return series


def access_request(identifier, user, password):
    authenticator = os.urandom(16)
    return build_request(ACCESS_REQUEST, identifier,
                         [(USER_NAME, user), (USER_PASSWORD, hide_password(password, RADSEC_SECRET, authenticator))],
                         secret=RADSEC_SECRET, authenticator=authenticator)


def accounting_start(identifier, session):
    return build_accounting_request(identifier, [(USER_NAME, b"alice"), (ACCT_STATUS_TYPE, struct.pack("!I", 1)),
                                                 (ACCT_SESSION_ID, session),
                                                 (NAS_IP_ADDRESS, socket.inet_aton("127.0.0.1"))],
                                    secret=RADSEC_SECRET)


class RadSecTest(RemembersFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rw-radsec-")
        cls.certs = os.path.join(cls.dir, "certs")
        cls.foreign = os.path.join(cls.dir, "foreign")
        for folder, extra in ((cls.certs, ["--revoke", "gateway-rogue"]), (cls.foreign, [])):
            done = subprocess.run([BINARY, "certs", "--dir", folder, "--gateways", "server,proxy,rogue", *extra],
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stdout + done.stderr
        cls.radsec_clients = os.path.join(cls.dir, "radsec-clients.conf")
        with open(cls.radsec_clients, "w") as f:
            f.write(RADSEC_CLIENTS + NAMED_RADSEC_CLIENTS)
        cls.auth_port, cls.acct_port = free_udp_port(), free_udp_port()
        cls.radsec_port = free_tcp_port()
        cls.deployment = os.path.join(cls.dir, "dev")
        cls.log_path = os.path.join(cls.dir, "dev.log")
        cls.log = open(cls.log_path, "w")
        cls.dev = subprocess.Popen(
            [BINARY, "dev", "--dir", cls.deployment, "--users", USERS, "--clients", CLIENTS,
             "--auth-port", str(cls.auth_port), "--acct-port", str(cls.acct_port), "--stop-timeout-ms", "5000",
             "--tls-cert", cls.cert("server"), "--tls-key", cls.key("server"),
             "--tls-ca", os.path.join(cls.certs, "ca.pem"), "--tls-crl", os.path.join(cls.certs, "crl.pem"),
             "--radsec-port", str(cls.radsec_port), "--radsec-clients", cls.radsec_clients],
            stdout=cls.log, stderr=subprocess.STDOUT)
        cls.radsecproxy = None
        try:
            wait_for("the RadSec port to answer Status-Server", cls.status_server_answered, 60)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.radsecproxy is not None and cls.radsecproxy.poll() is None:
            cls.radsecproxy.terminate()
            cls.radsecproxy.wait(timeout=10)
        if cls.dev.poll() is None:
            cls.dev.terminate()
            try:
                cls.dev.wait(timeout=30)
            except subprocess.TimeoutExpired:
                cls.dev.kill()
                cls.dev.wait()
        cls.log.close()
        if cls.failed:
            print(read(cls.log_path))
            proxy_log = os.path.join(cls.dir, "radsecproxy.log")
            if os.path.exists(proxy_log):
                print("---- radsecproxy ----\n" + read(proxy_log))
            print("kept", cls.dir)
        else:
            shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def cert(cls, name, folder=None):
        return os.path.join(folder or cls.certs, "gateway-%s.pem" % name)

    @classmethod
    def key(cls, name, folder=None):
        return os.path.join(folder or cls.certs, "gateway-%s.key" % name)

    @classmethod
    def context(cls, name="proxy", folder=None, maximum=None):
        """A client context trusting the deployment's CA, with the client
        certificate `name` of `folder` (none when name is None)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(os.path.join(cls.certs, "ca.pem"))
        # The server certificate names gateway-server, not the address.
        context.check_hostname = False
        if maximum is not None:
            context.maximum_version = maximum
        if name is not None:
            context.load_cert_chain(cls.cert(name, folder), cls.key(name, folder))
        return context

    @classmethod
    def connect(cls, context=None, source=None, timeout=5.0):
        raw = socket.create_connection(("127.0.0.1", cls.radsec_port), timeout=timeout,
                                       source_address=(source, 0) if source else None)
        return (context or cls.context()).wrap_socket(raw)

    @classmethod
    def status_server_answered(cls):
        try:
            with cls.connect(timeout=1.0) as stream:
                request = build_request(STATUS_SERVER, 7, [], secret=RADSEC_SECRET)
                stream.sendall(request)
                code, _ = verify_response(read_packet(stream), request, secret=RADSEC_SECRET)
                return code == ACCESS_ACCEPT
        except (OSError, ConnectionError):
            return False

    def metrics(self):
        return read_metrics(os.path.join(self.deployment, "admin", "gateway.sock"))

    def refused(self, reason):
        return self.metrics().get('radiusward_radsec_connections_refused_total{reason="%s"}' % reason, 0)

    def assert_refused(self, context, source=None):
        """The handshake fails, or (TLS 1.3: the client finishes first) the
        first read finds the connection closed: never an answer."""
        request = build_request(STATUS_SERVER, 9, [], secret=RADSEC_SECRET)
        try:
            with self.connect(context, source=source) as stream:
                stream.sendall(request)
                reply = stream.recv(4096)
        except (ssl.SSLError, ConnectionError, OSError):
            return
        self.assertEqual(reply, b"", "a refused peer got an answer")

    def test_a_client_certificate_is_answered_over_tls_1_2_and_1_3(self):
        for maximum in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            with self.connect(self.context(maximum=maximum)) as stream:
                self.assertEqual(stream.version(), "TLSv1.2" if maximum == ssl.TLSVersion.TLSv1_2 else "TLSv1.3")
                accept = access_request(1, b"alice", b"wonderland")
                reject = access_request(2, b"alice", b"not-her-password")
                status = build_request(STATUS_SERVER, 3, [], secret=RADSEC_SECRET)
                stream.sendall(accept + reject + status)
                replies = {}
                for _ in range(3):
                    packet = read_packet(stream)
                    replies[packet[1]] = packet
                self.assertEqual(verify_response(replies[1], accept, secret=RADSEC_SECRET)[0], ACCESS_ACCEPT)
                self.assertEqual(verify_response(replies[2], reject, secret=RADSEC_SECRET)[0], ACCESS_REJECT)
                self.assertEqual(verify_response(replies[3], status, secret=RADSEC_SECRET)[0], ACCESS_ACCEPT)

    def test_peers_without_a_valid_certificate_are_refused_and_counted(self):
        before = self.refused("handshake_failed")
        self.assert_refused(self.context(name=None))
        self.assert_refused(self.context(name=None, maximum=ssl.TLSVersion.TLSv1_2))
        # Revoked by crl.pem (X509_V_FLAG_CRL_CHECK), and issued by another CA.
        self.assert_refused(self.context(name="rogue"))
        self.assert_refused(self.context(name="proxy", folder=self.foreign))
        wait_for("four handshake failures counted", lambda: self.refused("handshake_failed") >= before + 4, 10)
        # A good client is still answered afterwards.
        self.assertTrue(self.status_server_answered())

    def test_an_address_without_a_radsec_client_entry_is_refused_before_tls(self):
        before = self.refused("unknown_client")
        # 127.0.0.2 is a UDP client only: the RadSec clients file skips it.
        self.assert_refused(self.context(), source="127.0.0.2")
        wait_for("unknown_client counted", lambda: self.refused("unknown_client") >= before + 1, 10)

    def test_a_certificate_must_name_the_certificate_name_of_its_entry(self):
        # The SAN DNS name gateway-proxy, case ignored: answered.
        with self.connect(source="127.0.0.3") as stream:
            request = build_request(STATUS_SERVER, 11, [], secret=RADSEC_SECRET)
            stream.sendall(request)
            self.assertEqual(verify_response(read_packet(stream), request, secret=RADSEC_SECRET)[0], ACCESS_ACCEPT)
        # The same certificate for an entry naming gateway-server: closed
        # after the handshake, before any packet, and counted.
        before = self.refused("certificate_mismatch")
        for maximum in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            self.assert_refused(self.context(maximum=maximum), source="127.0.0.4")
        wait_for("two certificate mismatches counted",
                 lambda: self.refused("certificate_mismatch") >= before + 2, 10)
        self.log.flush()
        wait_for("the mismatch logged with the entry and the certificate's names", lambda: (
            "(named_other) refused: the certificate names CN=gateway-proxy, DNS=gateway-proxy, "
            "not certificate_name 'gateway-server'") in read(self.log_path), 10)

    def test_a_stalled_peer_does_not_block_a_new_connection(self):
        stalled = [socket.create_connection(("127.0.0.1", self.radsec_port)) for _ in range(5)]
        try:
            # Connected, never a ClientHello: a new client is answered at once.
            started = time.monotonic()
            self.assertTrue(self.status_server_answered())
            self.assertLess(time.monotonic() - started, 3.0)
            # Each stalled peer is closed at the handshake timeout (10 s).
            before = self.refused("handshake_timeout")
            for peer in stalled:
                peer.settimeout(20)
                self.assertEqual(peer.recv(1), b"")
            self.assertGreaterEqual(self.refused("handshake_timeout"), before + 5)
        finally:
            for peer in stalled:
                peer.close()

    def test_a_length_outside_20_to_4096_closes_the_connection(self):
        with self.connect() as stream:
            stream.sendall(struct.pack("!BBH", ACCESS_REQUEST, 1, 4097) + b"\0" * 16)
            stream.settimeout(5)
            self.assertTrue(closed_by_peer(stream))
        wait_for("bad_length counted", lambda: self.metrics().get(
            'radiusward_radsec_connections_closed_total{reason="bad_length"}', 0) >= 1, 10)

    def test_one_hundred_requests_in_flight_on_one_connection(self):
        wait_for("a leader", self.leader, timeout=90)
        requests = {}
        for identifier in range(100):
            if identifier % 2 == 0:
                password = b"wonderland" if identifier % 4 == 0 else b"wrong"
                requests[identifier] = access_request(identifier, b"alice", password)
            else:
                requests[identifier] = accounting_start(identifier, b"radsec-flight-%d" % identifier)
        with self.connect(timeout=30) as stream:
            # Every request is written before any reply is read.
            stream.sendall(b"".join(requests.values()))
            replies = {}
            for _ in range(100):
                packet = read_packet(stream)
                self.assertNotIn(packet[1], replies, "two replies for one request")
                replies[packet[1]] = packet
        self.assertEqual(sorted(replies), list(range(100)))
        for identifier, request in requests.items():
            code, _ = verify_response(replies[identifier], request, secret=RADSEC_SECRET,
                                      require_message_authenticator=identifier % 2 == 0)
            expected = ACCOUNTING_RESPONSE if identifier % 2 else (
                ACCESS_ACCEPT if identifier % 4 == 0 else ACCESS_REJECT)
            self.assertEqual(code, expected, "identifier %d" % identifier)
        # Acknowledged means committed: the cluster holds every session.
        for identifier in (1, 51, 99):
            wait_for("session %d listed" % identifier, lambda: self.session_listed("radsec-flight-%d" % identifier), 10)

    def test_a_reply_for_a_connection_closed_meanwhile_is_dropped(self):
        wait_for("a leader", self.leader, timeout=90)
        orphaned = 'radiusward_radsec_replies_orphaned_total'
        before = self.metrics()[orphaned]
        # The Accounting-Response is due only after the commit; the
        # connection is closed right after the request, so it usually finds
        # none. A few tries, since a fast commit may still beat the close.
        for attempt in range(5):
            with self.connect() as stream:
                stream.sendall(accounting_start(1, b"radsec-orphan-%d" % attempt))
            wait_for("the record committed", lambda: self.session_listed("radsec-orphan-%d" % attempt), 10)
            if self.metrics()[orphaned] > before:
                break
        self.assertGreater(self.metrics()[orphaned], before)
        # The gateway goes on answering.
        self.assertTrue(self.status_server_answered())

    def test_radsecproxy_forwards_authentication_and_accounting(self):
        udp_port = free_udp_port()
        config = os.path.join(self.dir, "radsecproxy.conf")
        with open(config, "w") as f:
            f.write("""ListenUDP 127.0.0.1:{udp_port}
LogLevel 4
LogDestination file://{log}
tls default {{
    CACertificateFile {ca}
    CertificateFile {cert}
    CertificateKeyFile {key}
}}
client 127.0.0.1 {{
    type udp
    secret testing123
}}
server radiusward {{
    type tls
    host 127.0.0.1
    port {radsec_port}
    secret radsec
    # The gateway's certificate names gateway-server, not 127.0.0.1.
    CertificateNameCheck off
    StatusServer on
}}
realm * {{
    server radiusward
    accountingServer radiusward
}}
""".format(udp_port=udp_port, log=os.path.join(self.dir, "radsecproxy.log"), ca=os.path.join(self.certs, "ca.pem"),
                cert=self.cert("proxy"), key=self.key("proxy"), radsec_port=self.radsec_port))
        type(self).radsecproxy = subprocess.Popen(["radsecproxy", "-f", "-c", config], stdout=subprocess.DEVNULL,
                                                  stderr=subprocess.DEVNULL)
        server = "127.0.0.1:%d" % udp_port

        def radtest(password):
            code, out = run_tool(["radtest", "-t", "pap", "alice", password, server, "0", "testing123"],
                                 timeout=30)
            return out

        wait_for("radtest through radsecproxy", lambda: "Received Access-Accept" in radtest("wonderland"), 30)
        self.assertIn("Received Access-Reject", radtest("not-her-password"))
        wait_for("a leader", self.leader, timeout=90)
        request = ("User-Name = alice, Acct-Status-Type = Start, Acct-Session-Id = radsec-proxy-1, "
                   "NAS-IP-Address = 127.0.0.1, NAS-Port = 1\n")
        done = subprocess.run(["radclient", "-x", "-r", "5", "-t", "5", server, "acct", "testing123"],
                              input=request, capture_output=True, text=True, timeout=90)
        self.assertIn("Received Accounting-Response", done.stdout, done.stdout + done.stderr)
        wait_for("the session listed", lambda: self.session_listed("radsec-proxy-1"), 10)
        metrics = self.metrics()
        self.assertGreaterEqual(metrics['radiusward_radsec_packets_total{direction="in"}'], 3)
        self.assertGreaterEqual(metrics["radiusward_radsec_connections_open"], 1)

    def leader(self):
        for member in (1, 2, 3):
            done = subprocess.run([BINARY, "ctl", "--dir", self.deployment, "--member", str(member), "status",
                                   "--json", "--grace", "0"], capture_output=True, text=True, timeout=10)
            if done.returncode in (0, 3):
                status = json.loads(done.stdout)
                if status.get("leader"):
                    return status["leader"]["id"]
        return None

    def session_listed(self, session):
        leader = self.leader()
        done = subprocess.run([BINARY, "ctl", "--dir", self.deployment, "--member", str(leader), "sessions",
                               "--session", session], capture_output=True, text=True, timeout=10)
        return done.returncode == 0 and session in done.stdout


class RadSecBounds(unittest.TestCase):
    """The bounds of docs/limits.md "RadSec" on a `radiusward gateway` whose
    config sets them small: connections per client and in all, the idle
    timeout and the handshake timeout, each counted by reason."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rw-radsec-bounds-")
        certs = os.path.join(cls.dir, "certs")
        done = subprocess.run([BINARY, "certs", "--dir", certs, "--gateways", "server,proxy"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        cls.certs = certs
        cls.port = free_tcp_port()
        files = {
            "users": 'alice Cleartext-Password := "wonderland"\n',
            "clients.conf": "client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n",
            "radsec.conf": "client a {\n  ipaddr = 127.0.0.1\n  proto = tls\n}\n"
                           "client b {\n  ipaddr = 127.0.0.2\n  proto = tls\n}\n",
            "gateway.yaml": ("listen: [127.0.0.1]\nauth_port: 0\nacct_port: 0\nworkers: 1\nusers_file: users\n"
                             "clients_file: clients.conf\nadmin_socket: gateway.sock\n"
                             "tls: {cert: certs/gateway-server.pem, key: certs/gateway-server.key, ca: certs/ca.pem}\n"
                             "radsec:\n  port: %d\n  clients_file: radsec.conf\n  handshake_timeout_ms: 500\n"
                             "  idle_timeout_s: 2\n  connections_max: 3\n  client_connections_max: 2\n" % cls.port),
        }
        for name, text in files.items():
            with open(os.path.join(cls.dir, name), "w") as f:
                f.write(text)
        cls.log = open(os.path.join(cls.dir, "gateway.log"), "w")
        cls.gateway = subprocess.Popen([BINARY, "gateway", "--config", os.path.join(cls.dir, "gateway.yaml")],
                                       stdout=cls.log, stderr=subprocess.STDOUT)
        cls.context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        cls.context.load_verify_locations(os.path.join(certs, "ca.pem"))
        cls.context.check_hostname = False
        cls.context.load_cert_chain(os.path.join(certs, "gateway-proxy.pem"), os.path.join(certs, "gateway-proxy.key"))
        wait_for("the gateway's admin socket", lambda: os.path.exists(os.path.join(cls.dir, "gateway.sock")), 30)

    @classmethod
    def tearDownClass(cls):
        cls.gateway.terminate()
        cls.gateway.wait(timeout=30)
        cls.log.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def connect(self, source="127.0.0.1"):
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=5, source_address=(source, 0))
        return self.context.wrap_socket(raw)

    def answered(self, stream):
        request = build_request(STATUS_SERVER, 5, [], secret=RADSEC_SECRET)
        stream.sendall(request)
        return verify_response(read_packet(stream), request, secret=RADSEC_SECRET)[0] == ACCESS_ACCEPT

    def series(self, name):
        return read_metrics(os.path.join(self.dir, "gateway.sock")).get(name, 0)

    def refused_at_accept(self, source, reason):
        """A connection from `source` is closed at accept, counted as `reason`."""
        name = 'radiusward_radsec_connections_refused_total{reason="%s"}' % reason
        before = self.series(name)
        try:
            with self.connect(source) as extra:
                self.assertTrue(closed_by_peer(extra))
        except (ssl.SSLError, OSError):
            pass
        wait_for(reason, lambda: self.series(name) > before, 5)

    def test_connection_bounds_per_client_and_in_all(self):
        opened = []
        try:
            # Client a at its bound of 2: a third of its connections is refused.
            opened += [self.connect(), self.connect()]
            self.refused_at_accept("127.0.0.1", "too_many_client_connections")
            # With b's first, 3 in all: the next is refused whoever it is from.
            opened.append(self.connect("127.0.0.2"))
            for stream in opened:
                self.assertTrue(self.answered(stream))
            self.refused_at_accept("127.0.0.2", "too_many_connections")
            self.assertEqual(self.series("radiusward_radsec_connections_open"), 3)
        finally:
            for stream in opened:
                stream.close()

    def test_idle_and_handshake_timeouts_close_connections(self):
        idle = 'radiusward_radsec_connections_closed_total{reason="idle_timeout"}'
        late = 'radiusward_radsec_connections_refused_total{reason="handshake_timeout"}'
        before_idle, before_late = self.series(idle), self.series(late)
        stalled = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        with self.connect() as stream:
            self.assertTrue(self.answered(stream))
            started = time.monotonic()
            stream.settimeout(10)
            self.assertTrue(closed_by_peer(stream))
            # idle_timeout_s: 2 (and a tick of 100 ms).
            self.assertGreater(time.monotonic() - started, 1.8)
        stalled.settimeout(10)
        self.assertEqual(stalled.recv(1), b"")
        stalled.close()
        wait_for("both counted", lambda: self.series(idle) > before_idle and self.series(late) > before_late, 10)


class RadSecCheck(unittest.TestCase):
    """`radiusward check` validates the `tls` and `radsec` sections: the
    certificate, key, CA and CRL load and match, the RadSec clients file
    parses with its rules, each error at file:line:col."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rw-radsec-check-")
        done = subprocess.run([BINARY, "certs", "--dir", os.path.join(cls.dir, "certs"), "--gateways", "a,b"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        for name, text in (("users", 'alice Cleartext-Password := "wonderland"\n'),
                           ("clients.conf", "client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n"),
                           ("radsec.conf", RADSEC_CLIENTS)):
            with open(os.path.join(cls.dir, name), "w") as f:
                f.write(text)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def check(self, tail):
        path = os.path.join(self.dir, "gateway.yaml")
        with open(path, "w") as f:
            f.write("listen: [127.0.0.1]\nauth_port: 0\nacct_port: 0\nusers_file: users\n"
                    "clients_file: clients.conf\n" + tail)
        done = subprocess.run([BINARY, "check", "--config", path], capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    TLS = "tls:\n  cert: certs/gateway-a.pem\n  key: certs/gateway-a.key\n  ca: certs/ca.pem\n  crl: certs/crl.pem\n"

    def test_a_valid_radsec_config_is_ok(self):
        code, out, err = self.check(self.TLS + "radsec:\n  port: 2083\n  clients_file: radsec.conf\n")
        self.assertEqual(code, 0, err)
        self.assertIn("RadSec on TCP port 2083 with 1 RadSec clients", out)

    def test_radsec_without_tls_is_refused(self):
        code, _, err = self.check("radsec:\n  clients_file: radsec.conf\n")
        self.assertEqual(code, 2)
        self.assertIn("gateway.yaml:6:1: radsec needs a 'tls' section", err)

    def test_a_key_of_another_certificate_is_refused(self):
        code, _, err = self.check(self.TLS.replace("gateway-a.key", "gateway-b.key"))
        self.assertEqual(code, 2)
        self.assertIn("gateway.yaml:6:1: ", err)
        self.assertIn("certs/gateway-b.key: ", err)
        self.assertIn("mismatch", err)

    def test_a_radsec_client_with_another_secret_is_refused_at_its_position(self):
        with open(os.path.join(self.dir, "radsec-bad.conf"), "w") as f:
            f.write("client proxy {\n  ipaddr = 192.0.2.1\n  proto = tls\n  secret = testing123\n}\n")
        code, _, err = self.check(self.TLS + "radsec:\n  clients_file: radsec-bad.conf\n")
        self.assertEqual(code, 2)
        self.assertIn("radsec-bad.conf:4:12: client proxy: the secret of a RadSec client is 'radsec'", err)

    def test_require_certificate_name_refuses_an_entry_without_it_at_its_position(self):
        code, _, err = self.check(self.TLS + "radsec:\n  clients_file: radsec.conf\n  require_certificate_name: true\n")
        self.assertEqual(code, 2)
        self.assertIn("radsec.conf:3:3: client local has no certificate_name (radsec.require_certificate_name is true)",
                      err)
        with open(os.path.join(self.dir, "radsec-named.conf"), "w") as f:
            f.write(NAMED_RADSEC_CLIENTS)
        code, out, err = self.check(self.TLS + "radsec:\n  clients_file: radsec-named.conf\n"
                                    "  require_certificate_name: true\n")
        self.assertEqual(code, 0, err)
        self.assertIn("with 2 RadSec clients", out)


if __name__ == "__main__":
    unittest.main()
