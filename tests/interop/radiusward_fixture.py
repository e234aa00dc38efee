"""Shared fixture for the interop tests: starts a real `radiusward gateway`
on loopback with the given users and clients files, and offers a minimal,
independent RADIUS client (RFC 2865/2869/3579) written here in Python, so
the tests do not trust the server's own codec."""

import hashlib
import hmac
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

SECRET = b"testing123"

ACCESS_REQUEST, ACCESS_ACCEPT, ACCESS_REJECT = 1, 2, 3
ACCOUNTING_REQUEST, ACCOUNTING_RESPONSE = 4, 5
ACCESS_CHALLENGE, STATUS_SERVER = 11, 12

USER_NAME, USER_PASSWORD, CHAP_PASSWORD, NAS_IP_ADDRESS = 1, 2, 3, 4
REPLY_MESSAGE, VENDOR_SPECIFIC, CALLING_STATION_ID = 18, 26, 31
NAS_IDENTIFIER, ACCT_STATUS_TYPE, ACCT_SESSION_ID = 32, 40, 44
CHAP_CHALLENGE, MESSAGE_AUTHENTICATOR = 60, 80


def binary_from_argv():
    if len(sys.argv) < 2:
        sys.exit("usage: TEST RADIUSWARD_BINARY")
    return os.path.abspath(sys.argv.pop(1))


def free_udp_port(host="127.0.0.1"):
    """Asks the kernel for a free UDP port (the gateway binds it right after)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def encode_attributes(attributes):
    out = b""
    for attr_type, value in attributes:
        out += struct.pack("!BB", attr_type, len(value) + 2) + value
    return out


def vendor_attribute(vendor, vendor_type, value):
    return (VENDOR_SPECIFIC, struct.pack("!IBB", vendor, vendor_type, len(value) + 2) + value)


def decode_attributes(body):
    attributes = []
    offset = 0
    while offset < len(body):
        attr_type, length = body[offset], body[offset + 1]
        attributes.append((attr_type, body[offset + 2:offset + length]))
        offset += length
    return attributes


def vendor_attributes(attributes, vendor):
    """Sub-attributes (type, value) of every Vendor-Specific of `vendor`."""
    found = []
    for attr_type, value in attributes:
        if attr_type != VENDOR_SPECIFIC or len(value) < 6:
            continue
        if struct.unpack("!I", value[:4])[0] != vendor:
            continue
        offset = 4
        while offset + 2 <= len(value):
            sub_type, sub_length = value[offset], value[offset + 1]
            found.append((sub_type, value[offset + 2:offset + sub_length]))
            offset += sub_length
    return found


def hide_password(password, secret, authenticator):
    """RFC 2865 §5.2."""
    padded = password + b"\0" * (-len(password) % 16 or (16 if not password else 0))
    out = b""
    previous = authenticator
    for i in range(0, len(padded), 16):
        digest = hashlib.md5(secret + previous).digest()
        block = bytes(a ^ b for a, b in zip(padded[i:i + 16], digest))
        out += block
        previous = block
    return out


def build_request(code, identifier, attributes, secret=SECRET, authenticator=None,
                  message_authenticator=True):
    """An Access-Request or Status-Server with a random Request Authenticator
    and, unless told otherwise, a Message-Authenticator first (RFC 3579 §3.2)."""
    authenticator = authenticator or os.urandom(16)
    attrs = list(attributes)
    if message_authenticator:
        attrs.insert(0, (MESSAGE_AUTHENTICATOR, b"\0" * 16))
    body = encode_attributes(attrs)
    packet = struct.pack("!BBH", code, identifier, 20 + len(body)) + authenticator + body
    if message_authenticator:
        mac = hmac.new(secret, packet, hashlib.md5).digest()
        packet = packet[:22] + mac + packet[38:]
    return packet


def build_accounting_request(identifier, attributes, secret=SECRET):
    """RFC 2866 §3: the Request Authenticator is MD5 over the packet with a
    zero authenticator, followed by the secret."""
    body = encode_attributes(attributes)
    header = struct.pack("!BBH", ACCOUNTING_REQUEST, identifier, 20 + len(body))
    authenticator = hashlib.md5(header + b"\0" * 16 + body + secret).digest()
    return header + authenticator + body


def verify_response(response, request, secret=SECRET, require_message_authenticator=True):
    """Checks the Response Authenticator (RFC 2865 §3) and, when present or
    required, the Message-Authenticator; returns (code, attributes)."""
    code, identifier, length = struct.unpack("!BBH", response[:4])
    assert identifier == request[1], "Identifier mismatch"
    assert length == len(response), "Length mismatch"
    expected = hashlib.md5(response[:4] + request[4:20] + response[20:] + secret).digest()
    assert hmac.compare_digest(expected, response[4:20]), "bad Response Authenticator"
    attributes = decode_attributes(response[20:])
    offsets = []
    offset = 20
    for attr_type, value in attributes:
        if attr_type == MESSAGE_AUTHENTICATOR:
            offsets.append(offset)
        offset += 2 + len(value)
    if require_message_authenticator:
        assert offsets, "no Message-Authenticator in the response"
    for at in offsets:
        zeroed = response[:4] + request[4:20] + response[20:at + 2] + b"\0" * 16 + response[at + 18:]
        mac = hmac.new(secret, zeroed, hashlib.md5).digest()
        assert hmac.compare_digest(mac, response[at + 2:at + 18]), "bad Message-Authenticator"
    return code, attributes


def exchange(port, packet, host="127.0.0.1", timeout=2.0, source=None):
    """Sends one datagram and returns the reply bytes, or None on timeout."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        if source:
            s.bind((source, 0))
        s.settimeout(timeout)
        s.sendto(packet, (host, port))
        try:
            return s.recv(65535)
        except socket.timeout:
            return None


class Gateway:
    """A running `radiusward gateway` in a temporary folder."""

    def __init__(self, binary, users, clients, extra_args=(), listen=("127.0.0.1", "::1"), admin=False):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="rw-interop-")
        self.users_path = os.path.join(self.dir, "users")
        self.clients_path = os.path.join(self.dir, "clients.conf")
        with open(self.users_path, "w") as f:
            f.write(users)
        with open(self.clients_path, "w") as f:
            f.write(clients)
        self.auth_port = free_udp_port()
        self.acct_port = free_udp_port()
        self.log_path = os.path.join(self.dir, "gateway.log")
        args = [binary, "gateway", "--users", self.users_path, "--clients", self.clients_path,
                "--auth-port", str(self.auth_port), "--acct-port", str(self.acct_port),
                "--workers", "2"]
        for address in listen:
            args += ["--listen", address]
        # The admin API (docs/admin_api.md), when asked for: self.admin_socket.
        self.admin_socket = os.path.join(self.dir, "gateway.sock") if admin else None
        if admin:
            args += ["--admin-socket", self.admin_socket]
        args += list(extra_args)
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        self._wait_ready()

    def _wait_ready(self):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("gateway exited with %d:\n%s" % (self.process.returncode, self.read_log()))
            request = build_request(STATUS_SERVER, 1, [])
            if exchange(self.auth_port, request, timeout=0.2) is not None:
                return
        raise RuntimeError("gateway did not answer Status-Server:\n" + self.read_log())

    def read_log(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise RuntimeError("gateway did not stop on SIGTERM")
        self.log.close()
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        code = self.stop()
        if exc[0] is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print("gateway log kept in", self.dir)
        return False


def wait_for(what, predicate, timeout=30.0, interval=0.2):
    """Calls `predicate` until it returns a true value, which it returns;
    fails the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("timed out waiting for " + what)


def read(path):
    with open(path) as f:
        return f.read()


def run_tool(args, timeout=30):
    """Runs a Debian client tool and returns (exit code, combined output)."""
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, text=True)
    return done.returncode, done.stdout


class RemembersFailure:
    """A unittest.TestCase mixin for a class whose tests share one
    deployment: once one of them fails, `failed` is set on the class, so
    that its tearDownClass keeps the folder and prints the logs."""

    failed = False

    def run(self, result=None):
        result = super().run(result)
        if result is not None and (result.failures or result.errors):
            type(self).failed = True
        return result

    @classmethod
    def end_deployment(cls):
        """For tearDownClass: stops `cls.gateway`; removes `cls.dir` when every
        test passed, else prints the gateway's log and keeps the folder."""
        if cls.failed:
            print(cls.gateway.read_log())
            print("test files kept in", cls.dir)
        else:
            shutil.rmtree(cls.dir, ignore_errors=True)
        cls.gateway.__exit__(None, None, None)
