#!/usr/bin/python3
"""Interop: tenants (docs/design.md "Tenants") on a real `radiusward gateway
--config FILE` with two tenants besides `default`. Each tenant has its own
clients file (NAS A sends from 127.0.0.1, NAS B from 127.0.0.2), users file
with the same user `alice` under a different password, policy and audit
log: alice's tenant-A password is accepted from NAS A and refused from NAS
B and the reverse; a policy rule of tenant A refuses bob whom tenant B
accepts; each audit file holds only its tenant's decisions and `radiusward
audit verify` passes on both; a reload with a broken tenant users file
keeps serving the old state; RadSec peers must chain to the CA of their
client entry's tenant; two tenants' SQLite user databases with the same
user are two users; `radiusward check` prints file:line:col for a tenant
name given twice, an audit file of two tenants and a NAS address in two
tenants."""

import json
import os
import socket
import ssl
import struct
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from radiusward_fixture import *  # noqa: F401,F403

BINARY = binary_from_argv()

# The default tenant (the flags --users and --clients): a NAS no test uses.
DEFAULT_USERS = 'alice Cleartext-Password := "default-pass"\n'
DEFAULT_CLIENTS = 'client nas-default {\n    ipaddr = 127.0.0.3\n    secret = testing123\n}\n'

USERS_A = '''
alice   Cleartext-Password := "apple-pass"
        Reply-Message = "tenant a"
bob     Cleartext-Password := "builder"
gateway-device Auth-Type := Accept
dave    Cleartext-Password := "dave-a-pass"
'''
USERS_B = '''
alice   Cleartext-Password := "banana-pass"
        Reply-Message = "tenant b"
bob     Cleartext-Password := "builder"
gateway-device Auth-Type := Accept
dave    Cleartext-Password := "dave-b-pass"
'''
CLIENTS_A = 'client nas {\n    ipaddr = 127.0.0.1\n    secret = testing123\n    shortname = nas-a\n}\n'
# The same client name as tenant A's: names are per tenant.
CLIENTS_B = 'client nas {\n    ipaddr = 127.0.0.2\n    secret = testing123\n    shortname = nas-b\n}\n'
POLICY_A = '''
default: accept
rules:
  - name: no-bob-here
    match: {user: bob}
    decision: reject
'''


RADSEC_CLIENTS = '''clients radsec {
  client %s {
    ipaddr = %s
    proto = tls
    secret = radsec
  }
}
'''


def config_text(folder):
    return '''
# The default tenant's files; the fixture's --users and --clients name the same.
users_file: users
clients_file: clients.conf
tls: {cert: ca-default/gateway-server.pem, key: ca-default/gateway-server.key, ca: ca-default/ca.pem}
radsec: {port: %d, clients_file: radsec-default.conf}
tenants:
  - name: tenant-a
    users_file: users-a
    clients_file: clients-a.conf
    policy: policy-a.yaml
    audit: {path: audit-a.log, fsync_interval_ms: 0}
    eap: {methods: [tls, peap]}
    tls: {cert: ca-a/gateway-server.pem, key: ca-a/gateway-server.key, ca: ca-a/ca.pem}
  - name: tenant-b
    users_file: users-b
    clients_file: clients-b.conf
    audit: {path: audit-b.log, fsync_interval_ms: 0}
    radsec: {clients_file: radsec-b.conf}
    eap: {methods: [tls, peap]}
    tls: {cert: ca-b/gateway-server.pem, key: ca-b/gateway-server.key, ca: ca-b/ca.pem}
''' % free_tcp_port()


def free_tcp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def login(gateway, source, user, password):
    """An Access-Request with PAP from `source`; returns (code, Reply-Message or None)."""
    authenticator = os.urandom(16)
    request = build_request(ACCESS_REQUEST, 7, [(USER_NAME, user.encode()),
                                                (USER_PASSWORD, hide_password(password.encode(), SECRET,
                                                                              authenticator))],
                            authenticator=authenticator)
    response = exchange(gateway.auth_port, request, source=source)
    assert response is not None, "no answer from " + source
    code, attributes = verify_response(response, request)
    messages = [value.decode() for kind, value in attributes if kind == REPLY_MESSAGE]
    return code, (messages[0] if messages else None)


def decisions(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if '"decision"' in line]


class TenantsInterop(RemembersFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rw-tenants-")
        write(cls.dir, "users", DEFAULT_USERS)
        write(cls.dir, "clients.conf", DEFAULT_CLIENTS)
        write(cls.dir, "users-a", USERS_A)
        cls.users_b = write(cls.dir, "users-b", USERS_B)
        write(cls.dir, "clients-a.conf", CLIENTS_A)
        write(cls.dir, "clients-b.conf", CLIENTS_B)
        write(cls.dir, "policy-a.yaml", POLICY_A)
        for ca in ("ca-default", "ca-a", "ca-b"):
            done = subprocess.run([BINARY, "certs", "--dir", os.path.join(cls.dir, ca),
                                   "--gateways", "server,proxy,device"],
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stdout + done.stderr
        write(cls.dir, "radsec-default.conf", RADSEC_CLIENTS % ("proxy-default", "127.0.0.1"))
        write(cls.dir, "radsec-b.conf", RADSEC_CLIENTS % ("proxy-b", "127.0.0.2"))
        text = config_text(cls.dir)
        cls.radsec_port = int(text.split("radsec: {port: ")[1].split(",")[0])
        cls.config = write(cls.dir, "gateway.yaml", text)
        cls.audit_a = os.path.join(cls.dir, "audit-a.log")
        cls.audit_b = os.path.join(cls.dir, "audit-b.log")
        # Status-Server (the fixture's readiness probe) comes from 127.0.0.1: NAS A.
        cls.gateway = Gateway(BINARY, DEFAULT_USERS, DEFAULT_CLIENTS, extra_args=["--config", cls.config],
                              listen=("0.0.0.0",), admin=True)

    @classmethod
    def tearDownClass(cls):
        if cls.failed:
            print(cls.gateway.read_log())
            print("test files kept in", cls.dir)
        cls.gateway.__exit__(None, None, None)
        if not cls.failed:
            shutil.rmtree(cls.dir, ignore_errors=True)

    def test_1_same_user_two_tenants_two_passwords(self):
        self.assertEqual(login(self.gateway, "127.0.0.1", "alice", "apple-pass"), (ACCESS_ACCEPT, "tenant a"))
        self.assertEqual(login(self.gateway, "127.0.0.2", "alice", "apple-pass")[0], ACCESS_REJECT)
        self.assertEqual(login(self.gateway, "127.0.0.2", "alice", "banana-pass"), (ACCESS_ACCEPT, "tenant b"))
        self.assertEqual(login(self.gateway, "127.0.0.1", "alice", "banana-pass")[0], ACCESS_REJECT)
        # The default tenant's password is no other tenant's.
        self.assertEqual(login(self.gateway, "127.0.0.1", "alice", "default-pass")[0], ACCESS_REJECT)
        self.assertEqual(login(self.gateway, "127.0.0.2", "alice", "default-pass")[0], ACCESS_REJECT)
        wait_for("the decision log names the tenants",
                 lambda: "from client nas-b (127.0.0.2" in self.gateway.read_log() and
                 ", tenant tenant-b)" in self.gateway.read_log())

    def test_2_policy_is_per_tenant(self):
        self.assertEqual(login(self.gateway, "127.0.0.1", "bob", "builder")[0], ACCESS_REJECT)
        self.assertEqual(login(self.gateway, "127.0.0.2", "bob", "builder")[0], ACCESS_ACCEPT)
        wait_for("tenant A's rule in the decision log", lambda: "(rule no-bob-here)" in self.gateway.read_log())

    def test_3_each_audit_file_holds_its_tenant_only(self):
        # test_1 and test_2 made 4 decisions from NAS A and 4 from NAS B.
        wait_for("audit lines", lambda: len(decisions(self.audit_a)) >= 4 and len(decisions(self.audit_b)) >= 4)
        for path, tenant, address in ((self.audit_a, "tenant-a", "127.0.0.1:"), (self.audit_b, "tenant-b",
                                                                               "127.0.0.2:")):
            lines = decisions(path)
            self.assertTrue(lines)
            for line in lines:
                self.assertEqual(line["client"]["tenant"], tenant, line)
                self.assertTrue(line["client"]["address"].startswith(address), line)
            done = subprocess.run([BINARY, "audit", "verify", path], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stdout)
        logs = json.loads(admin_get(self.gateway.admin_socket, "/audit"))["logs"]
        self.assertEqual(sorted(log["tenant"] for log in logs), ["tenant-a", "tenant-b"])
        metrics = admin_get(self.gateway.admin_socket, "/metrics")
        self.assertIn('radiusward_tenant_access_requests_total{tenant="tenant-a",decision="accept"}', metrics)
        self.assertIn('radiusward_tenant_access_requests_total{tenant="tenant-b",decision="reject"}', metrics)

    def radsec_status(self, source, ca):
        """Status-Server over RadSec from `source` with the proxy certificate
        of `ca`: True when answered, False when the connection is refused."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(os.path.join(self.dir, "ca-default", "ca.pem"))
        context.check_hostname = False
        context.load_cert_chain(os.path.join(self.dir, ca, "gateway-proxy.pem"),
                                os.path.join(self.dir, ca, "gateway-proxy.key"))
        request = build_request(STATUS_SERVER, 5, [], secret=b"radsec")
        try:
            raw = socket.create_connection(("127.0.0.1", self.radsec_port), timeout=5, source_address=(source, 0))
            with context.wrap_socket(raw) as stream:
                stream.sendall(request)
                header = stream.recv(4)
                if len(header) < 4:
                    return False
                length = struct.unpack("!H", header[2:4])[0]
                body = b""
                while len(body) < length - 4:
                    chunk = stream.recv(length - 4 - len(body))
                    if not chunk:
                        return False
                    body += chunk
                return verify_response(header + body, request, secret=b"radsec")[0] == ACCESS_ACCEPT
        except (ssl.SSLError, ConnectionError, OSError):
            return False

    def test_5_radsec_peers_must_chain_to_their_tenants_ca(self):
        # The default tenant's RadSec client (127.0.0.1) with the default CA's
        # certificate, tenant B's (127.0.0.2) with CA B's: answered.
        self.assertTrue(self.radsec_status("127.0.0.1", "ca-default"))
        self.assertTrue(self.radsec_status("127.0.0.2", "ca-b"))
        # Each with the other tenant's CA: refused at the handshake.
        self.assertFalse(self.radsec_status("127.0.0.2", "ca-default"))
        self.assertFalse(self.radsec_status("127.0.0.1", "ca-b"))

    def reload(self, outcome):
        """SIGHUP, then waits for a new log line of the reload holding `outcome`."""
        before = len(self.gateway.read_log())
        self.gateway.process.send_signal(signal.SIGHUP)
        wait_for("a reload line with " + outcome, lambda: any(
            "reload" in line and outcome in line for line in self.gateway.read_log()[before:].splitlines()),
                 timeout=10)

    def test_4_reload_with_a_broken_tenant_file_keeps_the_old_state(self):
        with open(self.users_b, "w") as f:
            f.write(USERS_B.replace("banana-pass", "cherry-pass") + 'carol Cleartext-Password := "unterminated\n')
        try:
            # Every error line of the rejected reload names its file and position.
            self.reload("users-b:")
            self.assertEqual(login(self.gateway, "127.0.0.2", "alice", "banana-pass")[0], ACCESS_ACCEPT)
            self.assertEqual(login(self.gateway, "127.0.0.2", "alice", "cherry-pass")[0], ACCESS_REJECT)
            self.assertEqual(login(self.gateway, "127.0.0.1", "alice", "apple-pass")[0], ACCESS_ACCEPT)
            # Fixed, it reloads.
            with open(self.users_b, "w") as f:
                f.write(USERS_B.replace("banana-pass", "cherry-pass"))
            self.reload("reload:")
            wait_for("the new password", lambda: login(self.gateway, "127.0.0.2", "alice",
                                                       "cherry-pass")[0] == ACCESS_ACCEPT, timeout=10)
        finally:
            with open(self.users_b, "w") as f:
                f.write(USERS_B)


    def eapol_test(self, source, ca, block):
        """One eapol_test conversation from NAS `source`, trusting `ca`'s server certificate."""
        conf = write(self.dir, "eapol-%s-%d.conf" % (source, time.monotonic_ns()),
                     "network={\n    key_mgmt=IEEE8021X\n    eapol_flags=0\n    ca_cert=\"%s\"\n%s}\n"
                     % (os.path.join(self.dir, ca, "ca.pem"), block))
        return run_tool(["eapol_test", "-c", conf, "-a", "127.0.0.1", "-A", source,
                         "-p", str(self.gateway.auth_port), "-s", SECRET.decode(), "-t", "15", "-r", "0",
                         "-N61:d:15"], timeout=45)

    def eap_tls(self, source, server_ca, device_ca):
        device = os.path.join(self.dir, device_ca, "gateway-device")
        return self.eapol_test(source, server_ca, '    eap=TLS\n    identity="gateway-device"\n'
                               '    client_cert="%s.pem"\n    private_key="%s.key"\n' % (device, device))

    def peap(self, source, ca, password):
        return self.eapol_test(source, ca, '    eap=PEAP\n    identity="dave"\n    anonymous_identity="anon"\n'
                               '    password="%s"\n    phase1="peapver=0"\n    phase2="auth=MSCHAPV2"\n' % password)

    def test_6_eap_trusts_each_tenants_own_ca_and_users(self):
        # EAP-TLS: each NAS's tenant presents its own server certificate and
        # takes client certificates of its own CA only.
        for source, own, other in (("127.0.0.1", "ca-a", "ca-b"), ("127.0.0.2", "ca-b", "ca-a")):
            code, output = self.eap_tls(source, own, own)
            self.assertEqual(code, 0, output)
            self.assertIn("MPPE keys OK: 1  mismatch: 0", output)
            code, output = self.eap_tls(source, own, other)
            self.assertNotEqual(code, 0, output)
            self.assertRegex(output, r"alert.*unknown CA")
            # The other tenant's server certificate is not what this NAS's tenant presents.
            code, output = self.eap_tls(source, other, other)
            self.assertNotEqual(code, 0, output)
        # PEAP: the inner dave is the tenant's own (test 4 leaves alice's
        # tenant-b password changed).
        for source, ca, own, other in (("127.0.0.1", "ca-a", "dave-a-pass", "dave-b-pass"),
                                       ("127.0.0.2", "ca-b", "dave-b-pass", "dave-a-pass")):
            code, output = self.peap(source, ca, own)
            self.assertEqual(code, 0, output)
            code, output = self.peap(source, ca, other)
            self.assertNotEqual(code, 0, output)
            self.assertIn("Access-Reject", output)


def admin_get(socket_path, path):
    done = subprocess.run(["curl", "-s", "--unix-socket", socket_path, "http://localhost" + path],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    return done.stdout


# Tenant B's clients file is the parameter.
TWO_TENANTS = '''users_file: users
clients_file: clients.conf
tenants:
  - name: tenant-a
    users_file: users-a
    clients_file: clients-a.conf
  - name: tenant-b
    users_file: users-b
    clients_file: %s
'''


SQLITE_SCHEMA = "/etc/freeradius/3.0/mods-config/sql/main/sqlite/schema.sql"


def sqlite_users(path, password):
    """A FreeRADIUS SQLite users database (its own schema.sql) where alice has `password`."""
    import sqlite3
    with open(SQLITE_SCHEMA) as f:
        schema = f.read()
    db = sqlite3.connect(path)
    db.executescript(schema)
    db.execute("INSERT INTO radcheck (username, attribute, op, value) VALUES ('alice', 'Cleartext-Password', ':=', ?)",
               (password,))
    db.execute("INSERT INTO radreply (username, attribute, op, value) VALUES ('alice', 'Reply-Message', '=', ?)",
               ("sql " + password,))
    db.commit()
    db.close()


class TenantsSql(unittest.TestCase):
    """Each tenant's SQL store is its own: alice of tenant A's SQLite
    database is not alice of tenant B's, and each cache keeps its own."""

    def test_the_same_sql_user_in_two_tenants_is_two_users(self):
        folder = tempfile.mkdtemp(prefix="rw-tenants-sql-")
        self.addCleanup(shutil.rmtree, folder, True)
        sqlite_users(os.path.join(folder, "a.db"), "sql-apple")
        sqlite_users(os.path.join(folder, "b.db"), "sql-banana")
        for name, text in (("users", DEFAULT_USERS), ("clients.conf", DEFAULT_CLIENTS), ("users-a", ""),
                           ("users-b", ""), ("clients-a.conf", CLIENTS_A), ("clients-b.conf", CLIENTS_B)):
            write(folder, name, text)
        config = write(folder, "gateway.yaml", """users_file: users
clients_file: clients.conf
tenants:
  - name: tenant-a
    users_file: users-a
    clients_file: clients-a.conf
    users_stores: [sql]
    sql_users: {sqlite: a.db, miss_wait_ms: 500}
  - name: tenant-b
    users_file: users-b
    clients_file: clients-b.conf
    users_stores: [sql]
    sql_users: {sqlite: b.db, miss_wait_ms: 500}
""")
        with Gateway(BINARY, DEFAULT_USERS, DEFAULT_CLIENTS, extra_args=["--config", config],
                     listen=("0.0.0.0",)) as gateway:
            def answer(source, password):
                # A miss waits for the store (miss_wait_ms); one dropped meanwhile is sent again.
                for _ in range(5):
                    try:
                        return login(gateway, source, "alice", password)
                    except AssertionError:
                        continue
                self.fail("no answer from %s" % source)
            self.assertEqual(answer("127.0.0.1", "sql-apple"), (ACCESS_ACCEPT, "sql sql-apple"))
            self.assertEqual(answer("127.0.0.2", "sql-banana"), (ACCESS_ACCEPT, "sql sql-banana"))
            # Both now cached, each in its tenant's store.
            self.assertEqual(answer("127.0.0.1", "sql-banana")[0], ACCESS_REJECT)
            self.assertEqual(answer("127.0.0.2", "sql-apple")[0], ACCESS_REJECT)
            self.assertEqual(answer("127.0.0.1", "default-pass")[0], ACCESS_REJECT)


class TenantsCheck(unittest.TestCase):
    def check(self, folder, text):
        path = write(folder, "gateway.yaml", text)
        done = subprocess.run([BINARY, "check", "--config", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=60)
        return done.returncode, done.stdout + done.stderr, path

    def test_errors_have_positions_and_a_good_config_is_summarised(self):
        folder = tempfile.mkdtemp(prefix="rw-tenants-check-")
        self.addCleanup(shutil.rmtree, folder, True)
        for name, text in (("users", DEFAULT_USERS), ("clients.conf", DEFAULT_CLIENTS), ("users-a", USERS_A),
                           ("users-b", USERS_B), ("clients-a.conf", CLIENTS_A),
                           ("clients-b.conf", CLIENTS_B),
                           ("clients-a2.conf", CLIENTS_A.replace("shortname = nas-a", "shortname = again"))):
            write(folder, name, text)
        code, output, path = self.check(folder, '''users_file: users
clients_file: clients.conf
audit: {path: audit.log}
tenants:
  - name: tenant-a
    users_file: users-a
    clients_file: clients-a.conf
    audit: {path: audit.log}
  - name: tenant-a
    users_file: users-b
    clients_file: clients-b.conf
  - name: Bad_Name
    users_file: users-b
    clients_file: clients-b.conf
''')
        self.assertEqual(code, 2, output)
        self.assertIn("%s:9:11: tenant 'tenant-a' is already named at line 5" % path, output)
        self.assertIn("%s:12:11: a tenant name is" % path, output)
        self.assertIn("%s:8:13: tenant 'tenant-a': audit file" % path, output)
        code, output, path = self.check(folder, TWO_TENANTS % "clients-a2.conf")
        self.assertEqual(code, 2, output)
        # The NAS address of tenant A's client, again in tenant B's file: at that entry.
        self.assertIn("%s:1:1: client nas: its address and prefix are those of client nas at %s:1" %
                      (os.path.join(folder, "clients-a2.conf"), os.path.join(folder, "clients-a.conf")), output)
        code, output, path = self.check(folder, TWO_TENANTS % "clients-b.conf")
        self.assertEqual(code, 0, output)
        self.assertIn("tenant default: 1 clients, 0 RadSec clients, 1 users entries", output)
        self.assertIn("tenant tenant-a: 1 clients", output)
        self.assertIn("tenant tenant-b: 1 clients", output)


if __name__ == "__main__":
    unittest.main(argv=[__file__])
