#!/usr/bin/python3
"""Interop: Debian's eapol_test (package eapoltest) runs EAP-TLS, PEAP
(EAP-MSCHAPv2) and EAP-TTLS (PAP, MS-CHAPv2) against a real `radiusward
gateway` started from flags alone (--tls-cert/--tls-key/--tls-ca/--tls-crl
with a users file and a clients file: the quick start), and against one
started from a config file with eap.tls_* options. The certificates are made
here with the `openssl` command line: a CA, the server's, a valid client
certificate, a revoked one (in the CRL), an expired one, and one of another
CA. eapol_test compares the MS-MPPE keys of the Access-Accept with the MSK
it derived itself ("MPPE keys OK"). A burst of EAP-TLS handshakes runs while
PAP requests keep being answered: the TLS work runs in the EAP pool, not on
the UDP workers (docs/authentication.md "EAP", docs/limits.md "EAP")."""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from radiusward_fixture import *  # noqa: F401,F403

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_sql  # noqa: E402  (admin_get: the admin API without ctl)

BINARY = binary_from_argv()

# bob's NT-Password is the NT hash of "clientPass" (RFC 2759 §9.2's example).
USERS = r'''
alice   Cleartext-Password := "wonderland"
        Reply-Message = "Hello"
bob     NT-Password := 0x44EBBA8D5312B8D611474411F56989AE
mallory Auth-Type := Reject
client-valid Auth-Type := Accept
client-guest Auth-Type := Accept
        Reply-Message = "certificate ok"
client-revoked Auth-Type := Accept
client-expired Auth-Type := Accept
client-other Auth-Type := Accept
'''

CLIENTS = '''
client localhost {
    ipaddr = 127.0.0.1
    secret = testing123
}
'''

CA_CONFIG = '''
[ ca ]
default_ca = test
[ test ]
dir = {dir}
database = {dir}/index.txt
new_certs_dir = {dir}/issued
serial = {dir}/serial
crlnumber = {dir}/crlnumber
certificate = {dir}/ca.pem
private_key = {dir}/ca.key
default_md = sha256
default_days = 30
default_crl_days = 30
policy = any
unique_subject = no
[ any ]
commonName = supplied
[ server_ext ]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:radius.test
[ client_ext ]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
'''


def openssl(*args):
    done = subprocess.run(["openssl"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise RuntimeError("openssl %s: %s" % (" ".join(args), done.stdout))


def self_signed_ca(dir, name, cn):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", os.path.join(dir, name + ".key"), "-out", os.path.join(dir, name + ".pem"),
            "-days", "30", "-subj", "/CN=" + cn,
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")


class Pki:
    """The test's certificates, made with `openssl req` and `openssl ca`."""

    def __init__(self, dir):
        self.dir = dir
        os.makedirs(os.path.join(dir, "issued"))
        open(os.path.join(dir, "index.txt"), "w").close()
        with open(os.path.join(dir, "serial"), "w") as f:
            f.write("1000\n")
        with open(os.path.join(dir, "crlnumber"), "w") as f:
            f.write("1000\n")
        self.config = os.path.join(dir, "ca.cnf")
        with open(self.config, "w") as f:
            f.write(CA_CONFIG.replace("{dir}", dir))
        self_signed_ca(dir, "ca", "radiusward test EAP CA")
        self.issue("server", "radius.test", "server_ext")
        self.issue("client-valid", "client-valid", "client_ext")
        self.issue("client-guest", "client-guest", "client_ext")
        self.issue("client-revoked", "client-revoked", "client_ext")
        self.issue("client-expired", "client-expired", "client_ext",
                   dates=("20200101000000Z", "20210101000000Z"))
        openssl("ca", "-batch", "-config", self.config, "-revoke", self.path("client-revoked.pem"))
        openssl("ca", "-batch", "-config", self.config, "-gencrl", "-out", self.path("crl.pem"))
        # Another CA's client certificate, with the name the users file lists.
        self_signed_ca(dir, "other-ca", "another CA")
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", self.path("client-other.key"), "-out", self.path("client-other.csr"),
                "-subj", "/CN=client-other")
        openssl("x509", "-req", "-in", self.path("client-other.csr"), "-CA", self.path("other-ca.pem"),
                "-CAkey", self.path("other-ca.key"), "-CAcreateserial", "-days", "30",
                "-out", self.path("client-other.pem"))

    def path(self, name):
        return os.path.join(self.dir, name)

    def issue(self, name, cn, extensions, dates=None):
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", self.path(name + ".key"), "-out", self.path(name + ".csr"), "-subj", "/CN=" + cn)
        args = ["ca", "-batch", "-notext", "-config", self.config, "-extensions", extensions,
                "-in", self.path(name + ".csr"), "-out", self.path(name + ".pem")]
        if dates:
            args += ["-startdate", dates[0], "-enddate", dates[1]]
        openssl(*args)

    def flags(self):
        return ["--tls-cert", self.path("server.pem"), "--tls-key", self.path("server.key"),
                "--tls-ca", self.path("ca.pem"), "--tls-crl", self.path("crl.pem")]


def network_block(pki, method, identity, password=None, client=None, phase1=None, phase2=None,
                  anonymous=None, fragment_size=None):
    lines = ["key_mgmt=IEEE8021X", "eap=" + method, 'identity="%s"' % identity,
             'ca_cert="%s"' % pki.path("ca.pem"), "eapol_flags=0"]
    if anonymous:
        lines.append('anonymous_identity="%s"' % anonymous)
    if password is not None:
        lines.append('password="%s"' % password)
    if client:
        lines.append('client_cert="%s"' % pki.path(client + ".pem"))
        lines.append('private_key="%s"' % pki.path(client + ".key"))
    if phase1:
        lines.append('phase1="%s"' % phase1)
    if phase2:
        lines.append('phase2="%s"' % phase2)
    if fragment_size:
        lines.append("fragment_size=%d" % fragment_size)
    return "network={\n" + "".join("    %s\n" % line for line in lines) + "}\n"


def config_args(dir, sections):
    """Writes DIR/gateway.yaml with `sections` (the users and clients files
    come from the fixture's flags) and returns the gateway's --config flag."""
    path = os.path.join(dir, "gateway.yaml")
    with open(path, "w") as f:
        f.write("users_file: unused-users\nclients_file: unused-clients\n" + sections)
    return ["--config", path]


class EapTlsBase(RemembersFailure):
    """One gateway (and PKI) per class; each test runs eapol_test."""

    extra_args = ()

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rw-eaptls-")
        try:
            cls.pki = Pki(os.path.join(cls.dir, "pki"))
            cls.gateway = Gateway(BINARY, USERS, CLIENTS, listen=("127.0.0.1",), admin=True,
                                  extra_args=cls.pki.flags() + list(cls.gateway_args(cls.dir)))
        except Exception:
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise
        cls.runs = 0

    @classmethod
    def gateway_args(cls, dir):
        return []

    @classmethod
    def tearDownClass(cls):
        cls.end_deployment()

    def eapol_test(self, block, mac="02:00:00:00:00:01", timeout=20, keys=True):
        """Runs one eapol_test conversation (wired NAS-Port-Type); returns (exit code, output).
        Unless `keys` is false, eapol_test expects MS-MPPE keys (no -n)."""
        type(self).runs += 1
        conf = os.path.join(self.dir, "run-%d.conf" % type(self).runs)
        with open(conf, "w") as f:
            f.write(block)
        args = ["eapol_test", "-c", conf, "-a", "127.0.0.1", "-p", str(self.gateway.auth_port),
                "-s", "testing123", "-t", str(timeout), "-r", "0", "-M", mac, "-N61:d:15"]
        if not keys:
            args.append("-n")
        return run_tool(args, timeout=timeout + 30)

    def assert_accepted_with_keys(self, code, output):
        self.assertEqual(code, 0, output)
        self.assertIn("SUCCESS", output)
        # eapol_test decrypts MS-MPPE-Recv-Key and -Send-Key and compares
        # them with the keys its own EAP peer derived...
        self.assertIn("MPPE keys OK: 1  mismatch: 0", output)
        # ... and they are the MSK's halves: Recv-Key the first 32 octets,
        # Send-Key the next 32 (RFC 5216 §2.3, RFC 2548).
        msk = re.findall(r"Derived key - hexdump\(len=64\): ([0-9a-f ]+)", output)[-1].split()
        recv = re.search(r"MS-MPPE-Recv-Key \(crypt\) - hexdump\(len=32\): ([0-9a-f ]+)", output).group(1).split()
        send = re.search(r"MS-MPPE-Send-Key \(sign\) - hexdump\(len=32\): ([0-9a-f ]+)", output).group(1).split()
        self.assertEqual(msk[:32], recv)
        self.assertEqual(msk[32:64], send)

    def assert_rejected(self, code, output):
        self.assertNotEqual(code, 0, output)
        self.assertIn("Access-Reject", output)


class EapTlsQuickStart(EapTlsBase, unittest.TestCase):
    """The flag-only gateway: EAP-TLS, PEAP, EAP-TTLS and EAP-MD5."""

    def tls(self, client, phase1=None, fragment_size=None):
        return self.eapol_test(network_block(self.pki, "TLS", client, client=client, phase1=phase1,
                                             fragment_size=fragment_size))

    def test_eap_tls_valid_certificate_accepted_with_mppe_keys(self):
        code, output = self.tls("client-valid")
        self.assert_accepted_with_keys(code, output)
        log = self.gateway.read_log()
        self.assertRegex(log, r'Access-Accept for "client-valid" via EAP-TLS')

    def test_eap_tls_over_tls_1_2_and_1_3(self):
        code, output = self.tls("client-valid", phase1="tls_disable_tlsv1_3=1")
        self.assert_accepted_with_keys(code, output)
        self.assertRegex(output, r"TLSv1\.2")
        code, output = self.tls("client-valid", phase1="tls_disable_tlsv1_0=1 tls_disable_tlsv1_1=1 "
                                "tls_disable_tlsv1_2=1 tls_disable_tlsv1_3=0")
        self.assert_accepted_with_keys(code, output)
        self.assertRegex(output, r"TLSv1\.3")

    def test_eap_tls_with_1000_octet_fragments(self):
        code, output = self.tls("client-valid", phase1="tls_disable_tlsv1_3=1", fragment_size=1000)
        self.assert_accepted_with_keys(code, output)
        # Both sides fragmented: the server's 1000-octet fragments (flag M).
        self.assertRegex(output, r"SSL: Received packet\(len=1\d\d\d\) - Flags 0xc0")

    def test_eap_tls_revoked_certificate_rejected(self):
        code, output = self.tls("client-revoked")
        self.assert_rejected(code, output)
        # The server's TLS alert says why.
        self.assertRegex(output, r"alert.*certificate revoked")

    def test_eap_tls_expired_certificate_rejected(self):
        code, output = self.tls("client-expired")
        self.assert_rejected(code, output)
        self.assertRegex(output, r"alert.*certificate expired")

    def test_eap_tls_other_ca_certificate_rejected(self):
        code, output = self.tls("client-other")
        self.assert_rejected(code, output)
        self.assertRegex(output, r"alert.*unknown CA")

    def peap(self, identity, password, phase1="peapver=0"):
        return self.eapol_test(network_block(self.pki, "PEAP", identity, password=password,
                                             anonymous="anonymous", phase1=phase1,
                                             phase2="auth=MSCHAPV2"))

    def test_peap_mschapv2_accepted_and_wrong_password_rejected(self):
        code, output = self.peap("alice", "wonderland")
        self.assert_accepted_with_keys(code, output)
        log = self.gateway.read_log()
        self.assertRegex(log, r'Access-Accept for "alice" \(outer identity "anonymous"\) via PEAP')
        self.assert_rejected(*self.peap("alice", "looking-glass"))
        # An NT-Password works for MS-CHAPv2.
        self.assert_accepted_with_keys(*self.peap("bob", "clientPass"))
        # The users policy of the inner identity holds: Auth-Type := Reject.
        self.assert_rejected(*self.peap("mallory", "anything"))

    def ttls(self, identity, password, inner):
        return self.eapol_test(network_block(self.pki, "TTLS", identity, password=password,
                                             anonymous="anonymous", phase2="auth=" + inner))

    def test_ttls_pap_and_mschapv2(self):
        self.assert_accepted_with_keys(*self.ttls("alice", "wonderland", "PAP"))
        self.assert_rejected(*self.ttls("alice", "looking-glass", "PAP"))
        self.assert_accepted_with_keys(*self.ttls("bob", "clientPass", "MSCHAPV2"))
        self.assert_rejected(*self.ttls("bob", "wrong", "MSCHAPV2"))
        self.assertRegex(self.gateway.read_log(), r'Access-Accept for "bob" \(outer identity "anonymous"\) via EAP-TTLS')

    def test_md5_still_served_to_wired_nases(self):
        block = 'network={\n    key_mgmt=IEEE8021X\n    eap=MD5\n    identity="alice"\n    password="wonderland"\n    eapol_flags=0\n}\n'
        code, output = self.eapol_test(block, keys=False)
        self.assertEqual(code, 0, output)

    def test_burst_of_handshakes_does_not_stop_pap(self):
        # Many EAP-TLS handshakes at once (each eapol_test its own source
        # port and MAC), while PAP requests go on: every PAP request must be
        # answered, each within a second.
        results = []
        stop = threading.Event()
        pap_late = []
        pap_answered = [0]

        def pap_loop():
            identifier = 0
            while not stop.is_set():
                identifier = (identifier + 1) % 256
                authenticator = os.urandom(16)
                request = build_request(ACCESS_REQUEST, identifier, [
                    (USER_NAME, b"alice"),
                    (USER_PASSWORD, hide_password(b"wonderland", SECRET, authenticator))],
                    authenticator=authenticator)
                started = time.monotonic()
                response = exchange(self.gateway.auth_port, request, timeout=1.0)
                if response is None:
                    pap_late.append(identifier)
                    continue
                code, _ = verify_response(response, request)
                self.assertEqual(code, ACCESS_ACCEPT)
                pap_answered[0] += 1
                time.sleep(0.01)

        def one(i):
            block = network_block(self.pki, "TLS", "client-valid", client="client-valid")
            results.append(self.eapol_test(block, mac="02:00:00:00:01:%02x" % i, timeout=30))

        pap = threading.Thread(target=pap_loop)
        pap.start()
        burst = [threading.Thread(target=one, args=(i,)) for i in range(48)]
        for thread in burst:
            thread.start()
        for thread in burst:
            thread.join()
        stop.set()
        pap.join()
        self.assertEqual(pap_late, [], "PAP requests unanswered within 1 s during the burst")
        self.assertGreater(pap_answered[0], 10)
        accepted = sum(1 for code, _ in results if code == 0)
        self.assertEqual(accepted, len(results), [output[-2000:] for code, output in results if code != 0][:1])
        metrics = bench_sql.admin_get(self.gateway.admin_socket, "/metrics").decode()
        self.assertRegex(metrics, r'radiusward_gateway_eap_pool_steps_total\{outcome="success"\} ([2-9]\d|\d\d\d)')
        self.assertRegex(metrics, r'radiusward_gateway_eap_outcomes_total\{method="EAP-TLS",outcome="accept"\} [1-9]')


class EapTlsConfigured(EapTlsBase, unittest.TestCase):
    """A gateway from a config file: TLS 1.2 only, 1000-octet fragments,
    PEAP cryptobinding required, EAP-TTLS with PAP only."""

    @classmethod
    def gateway_args(cls, dir):
        return config_args(dir, "eap:\n  methods: [tls, peap, ttls]\n  tls_fragment_octets: 1000\n"
                                "  tls_max_version: \"1.2\"\n  peap_crypto_binding: required\n"
                                "  ttls_inner_methods: [pap]\n  pool_threads: 1\n  pool_queue_max: 8\n"
                                "tls:\n  cert: pki/server.pem\n  key: pki/server.key\n  ca: pki/ca.pem\n"
                                "  crl: pki/crl.pem\n")

    def test_tls_1_2_only_with_1000_octet_server_fragments(self):
        code, output = self.eapol_test(network_block(self.pki, "TLS", "client-valid", client="client-valid"))
        self.assert_accepted_with_keys(code, output)
        self.assertRegex(output, r"TLSv1\.2")
        # The server's fragments carry at most 1000 TLS octets (+ 10 of EAP-TLS header with the length).
        self.assertRegex(output, r"SSL: Received packet\(len=1010\) - Flags 0xc0")
        # A peer that only speaks TLS 1.3 is refused.
        self.assert_rejected(*self.eapol_test(network_block(
            self.pki, "TLS", "client-valid", client="client-valid",
            phase1="tls_disable_tlsv1_2=1 tls_disable_tlsv1_3=0")))

    def test_peap_with_cryptobinding_required(self):
        self.assert_accepted_with_keys(*self.eapol_test(network_block(
            self.pki, "PEAP", "alice", password="wonderland", phase1="peapver=0 crypto_binding=2",
            phase2="auth=MSCHAPV2")))
        self.assert_rejected(*self.eapol_test(network_block(
            self.pki, "PEAP", "alice", password="wonderland", phase1="peapver=0 crypto_binding=0",
            phase2="auth=MSCHAPV2")))

    def test_ttls_mschapv2_not_served(self):
        self.assert_accepted_with_keys(*self.eapol_test(network_block(
            self.pki, "TTLS", "alice", password="wonderland", phase2="auth=PAP")))
        self.assert_rejected(*self.eapol_test(network_block(
            self.pki, "TTLS", "bob", password="clientPass", phase2="auth=MSCHAPV2")))


class EapTlsPolicy(EapTlsBase, unittest.TestCase):
    """The authorization policy sees the EAP method, the decided identity
    and, for EAP-TLS, the certificate's subject CN and issuer."""

    @classmethod
    def gateway_args(cls, dir):
        path = os.path.join(dir, "policy.yaml")
        with open(path, "w") as f:
            f.write("default: accept\n"
                    "rules:\n"
                    "  - name: our-devices\n"
                    "    match: {method: EAP-TLS, cert_subject_cn: client-valid,"
                    " cert_issuer: \"CN=radiusward test EAP CA\"}\n"
                    "    decision: accept\n"
                    "    reply: {vlan: 42}\n"
                    "  - name: other-certificates\n"
                    "    match: {method: EAP-TLS}\n"
                    "    decision: reject\n"
                    "  - name: peap-staff\n"
                    "    match: {method: PEAP, user: alice}\n"
                    "    decision: accept\n"
                    "    reply: {vlan: 77}\n")
        return ["--policy", path]

    def test_certificate_fields_and_inner_identity_reach_the_policy(self):
        code, output = self.eapol_test(network_block(self.pki, "TLS", "anyone", client="client-valid"))
        self.assert_accepted_with_keys(code, output)
        # Tunnel-Private-Group-Id, tag 1, "42" (the policy's VLAN).
        self.assertRegex(output, r"Attribute 81 \(Tunnel-Private-Group-Id\) length=5\n\s+Value: 013432\n")
        self.assert_rejected(*self.eapol_test(network_block(self.pki, "TLS", "client-valid",
                                                            client="client-guest")))
        code, output = self.eapol_test(network_block(self.pki, "PEAP", "alice", password="wonderland",
                                                     anonymous="anonymous", phase2="auth=MSCHAPV2"))
        self.assert_accepted_with_keys(code, output)
        self.assertRegex(output, r"Attribute 81 \(Tunnel-Private-Group-Id\) length=5\n\s+Value: 013737\n")
        log = self.gateway.read_log()
        self.assertRegex(log, r'Access-Accept for "client-valid" \(outer identity "anyone"\) via EAP-TLS.*our-devices')
        self.assertRegex(log, r'Access-Reject for "client-guest" \(outer identity "client-valid"\) via EAP-TLS.*other-certificates')


class EapTlsSqlUsers(EapTlsBase, unittest.TestCase):
    """Inner users only the SQL store knows (SQLite, FreeRADIUS's schema):
    the tunnel's step waits in the EAP pool for the store to fetch the user
    (sql_users.miss_wait), then checks the password."""

    @classmethod
    def gateway_args(cls, dir):
        import sqlite3
        database = os.path.join(dir, "users.sqlite")
        with sqlite3.connect(database) as db:
            with open("/etc/freeradius/3.0/mods-config/sql/main/sqlite/schema.sql") as f:
                db.executescript(f.read())
            db.execute("INSERT INTO radcheck (username, attribute, op, value) "
                       "VALUES ('dora', 'Cleartext-Password', ':=', 'explorer')")
            db.execute("INSERT INTO radcheck (username, attribute, op, value) "
                       "VALUES ('erin', 'NT-Password', ':=', '44EBBA8D5312B8D611474411F56989AE')")
        return config_args(dir, "users_stores: [files, sql]\n"
                                "sql_users:\n  sqlite: users.sqlite\n  miss_wait_ms: 1000\n"
                                "eap:\n  methods: [peap, ttls]\n"
                                "tls:\n  cert: pki/server.pem\n  key: pki/server.key\n  ca: pki/ca.pem\n")

    def test_inner_users_from_sql(self):
        # Neither is in the store's memory when the tunnel asks.
        self.assert_accepted_with_keys(*self.eapol_test(network_block(
            self.pki, "TTLS", "dora", password="explorer", anonymous="anonymous", phase2="auth=PAP")))
        self.assert_accepted_with_keys(*self.eapol_test(network_block(
            self.pki, "PEAP", "erin", password="clientPass", anonymous="anonymous", phase2="auth=MSCHAPV2")))
        self.assert_rejected(*self.eapol_test(network_block(
            self.pki, "TTLS", "dora", password="wrong", anonymous="anonymous", phase2="auth=PAP")))
        self.assert_rejected(*self.eapol_test(network_block(
            self.pki, "PEAP", "nobody", password="x", anonymous="anonymous", phase2="auth=MSCHAPV2")))
        log = self.gateway.read_log()
        self.assertRegex(log, r'Access-Accept for "dora" \(outer identity "anonymous"\) via EAP-TTLS')
        self.assertRegex(log, r'Access-Accept for "erin" \(outer identity "anonymous"\) via PEAP')


class EapTlsOcsp(EapTlsBase, unittest.TestCase):
    """eap.ocsp (docs/security.md "OCSP"): OpenSSL's `openssl ocsp`
    responder answers from the test CA's database, where one certificate is
    revoked after the CRL was made, so that only OCSP knows. OCSP is
    required: with the responder gone, a valid certificate is refused."""

    @classmethod
    def gateway_args(cls, dir):
        pki = cls.pki
        pki.issue("client-ocsp-revoked", "client-ocsp-revoked", "client_ext")
        openssl("ca", "-batch", "-config", pki.config, "-revoke", pki.path("client-ocsp-revoked.pem"))
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        probe.bind(("127.0.0.1", 0))
        cls.ocsp_port = probe.getsockname()[1]
        probe.close()
        cls.ocsp_log = os.path.join(dir, "ocsp.log")
        with open(cls.ocsp_log, "w") as log:
            cls.responder = subprocess.Popen(
                ["openssl", "ocsp", "-index", pki.path("index.txt"), "-CA", pki.path("ca.pem"),
                 "-rsigner", pki.path("ca.pem"), "-rkey", pki.path("ca.key"), "-port", str(cls.ocsp_port),
                 "-nmin", "10", "-ignore_err"], stdout=log, stderr=subprocess.STDOUT)
        # It says when it listens (a probe connection would stall it: it
        # serves one connection at a time).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(cls.ocsp_log) as log:
                if "waiting for OCSP client connections" in log.read():
                    break
            time.sleep(0.05)
        return config_args(dir, "eap:\n  methods: [tls]\n"
                                "  ocsp:\n    responder: http://127.0.0.1:%d/\n    required: true\n"
                                "    timeout_ms: 1000\n"
                                "tls:\n  cert: pki/server.pem\n  key: pki/server.key\n  ca: pki/ca.pem\n"
                                "  crl: pki/crl.pem\n" % cls.ocsp_port)

    @classmethod
    def tearDownClass(cls):
        if cls.__dict__.get("responder") is not None:
            cls.responder.kill()
            cls.responder.wait()
        super().tearDownClass()

    def tls(self, client):
        return self.eapol_test(network_block(self.pki, "TLS", client, client=client))

    def test_ocsp_good_accepted_revoked_refused_and_no_answer_refused_when_required(self):
        self.assert_accepted_with_keys(*self.tls("client-valid"))
        code, output = self.tls("client-ocsp-revoked")
        self.assert_rejected(code, output)
        self.assertRegex(output, r"alert.*certificate revoked")
        with open(self.ocsp_log) as log:
            self.assertIn("Received request", log.read())
        # The responder gone: client-valid's answer is cached until its
        # nextUpdate, but client-guest was never asked and gets no answer.
        type(self).responder.kill()
        type(self).responder.wait()
        self.assert_accepted_with_keys(*self.tls("client-valid"))
        code, output = self.tls("client-guest")
        self.assert_rejected(code, output)


class EapTlsCaPath(EapTlsBase, unittest.TestCase):
    """tls.ca_path: the CA client certificates chain to, and its CRL, are
    found in a folder of hash links (`openssl rehash`); the CA file names
    another CA only. The CRL file turns revocation checking on, the
    folder's copy of the CRL is found by its hash too."""

    @classmethod
    def gateway_args(cls, dir):
        pki = cls.pki
        folder = os.path.join(dir, "ca-folder")
        os.makedirs(folder)
        shutil.copy(pki.path("ca.pem"), os.path.join(folder, "eap-ca.pem"))
        shutil.copy(pki.path("crl.pem"), os.path.join(folder, "eap-ca.crl.pem"))
        openssl("rehash", folder)
        return config_args(dir, "eap:\n  methods: [tls]\n"
                                "tls:\n  cert: pki/server.pem\n  key: pki/server.key\n  ca: pki/other-ca.pem\n"
                                "  ca_path: ca-folder\n  crl: pki/crl.pem\n")

    def tls(self, client):
        return self.eapol_test(network_block(self.pki, "TLS", client, client=client))

    def test_the_folders_ca_and_crl_decide(self):
        self.assert_accepted_with_keys(*self.tls("client-valid"))
        code, output = self.tls("client-revoked")
        self.assert_rejected(code, output)
        self.assertRegex(output, r"alert.*certificate revoked")


if __name__ == "__main__":
    unittest.main(verbosity=2)
