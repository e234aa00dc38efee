#!/usr/bin/python3
"""Interop: MS-CHAPv2 (RFC 2759) in RFC 2548 attributes, sent by python3-pyrad
with an independent Python implementation of the peer side (pycryptodome's
MD4 and DES): checks Access-Accept with MS-CHAP2-Success carrying the right
authenticator response, MS-MPPE-Send/Recv-Key decrypting (RFC 2548 §2.4) to
the keys RFC 3079 §3 derives, and MS-CHAP-Error on a wrong password."""

import hashlib
import hmac
import os
import struct
import unittest

from Cryptodome.Cipher import DES
from Cryptodome.Hash import MD4
import pyrad.dictionary
import pyrad.packet

from radiusward_fixture import *  # noqa: F401,F403

BINARY = binary_from_argv()
HERE = os.path.dirname(os.path.abspath(__file__))
MICROSOFT = 311

USERS = '''
alice   Cleartext-Password := "wonderland"
bob     NT-Password := 0x44EBBA8D5312B8D611474411F56989AE
'''
CLIENTS = 'client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n'


def nt_hash(password):
    return MD4.new(password.encode("utf-16-le")).digest()


def des_key(seven):
    bits = int.from_bytes(seven, "big")
    out = bytearray()
    for i in range(8):
        b = ((bits >> (56 - 7 * (i + 1))) & 0x7F) << 1
        out.append(b)
    return bytes(out)


def challenge_response(challenge, password_hash):
    padded = password_hash + b"\0" * 5
    return b"".join(DES.new(des_key(padded[i:i + 7]), DES.MODE_ECB).encrypt(challenge) for i in (0, 7, 14))


def challenge_hash(peer_challenge, authenticator_challenge, user_name):
    return hashlib.sha1(peer_challenge + authenticator_challenge + user_name).digest()[:8]


MAGIC1 = b"Magic server to client signing constant"
MAGIC2 = b"Pad to make it do more than one iteration"


def authenticator_response(password_hash, nt_response, peer_challenge, authenticator_challenge, user_name):
    hash_hash = MD4.new(password_hash).digest()
    digest = hashlib.sha1(hash_hash + nt_response + MAGIC1).digest()
    chal = challenge_hash(peer_challenge, authenticator_challenge, user_name)
    return "S=" + hashlib.sha1(digest + chal + MAGIC2).hexdigest().upper()


# RFC 3079 §3.4 constants.
MASTER_MAGIC = b"This is the MPPE Master Key"
SEND_MAGIC_SERVER = (b"On the client side, this is the send key; on the server side, it is the receive key.")
RECV_MAGIC_SERVER = (b"On the client side, this is the receive key; on the server side, it is the send key.")
PAD1 = b"\0" * 40
PAD2 = b"\xf2" * 40


def mppe_keys_for_server(password_hash, nt_response):
    hash_hash = MD4.new(password_hash).digest()
    master = hashlib.sha1(hash_hash + nt_response + MASTER_MAGIC).digest()[:16]
    server_send = hashlib.sha1(master + PAD1 + RECV_MAGIC_SERVER + PAD2).digest()[:16]
    server_recv = hashlib.sha1(master + PAD1 + SEND_MAGIC_SERVER + PAD2).digest()[:16]
    return server_send, server_recv


def decrypt_mppe_key(value, secret, request_authenticator):
    """RFC 2548 §2.4.2: Salt(2) then the encrypted (length byte + key + padding)."""
    salt, cipher = value[:2], value[2:]
    assert salt[0] & 0x80, "salt high bit must be set"
    assert len(cipher) % 16 == 0
    plain = b""
    previous = request_authenticator + salt
    for i in range(0, len(cipher), 16):
        digest = hashlib.md5(secret + previous).digest()
        block = cipher[i:i + 16]
        plain += bytes(a ^ b for a, b in zip(block, digest))
        previous = block
    length = plain[0]
    return plain[1:1 + length]


class MsChapV2Interop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gateway = Gateway(BINARY, USERS, CLIENTS)
        cls.dictionary = pyrad.dictionary.Dictionary(os.path.join(HERE, "pyrad.dictionary"))

    @classmethod
    def tearDownClass(cls):
        cls.gateway.__exit__(None, None, None)

    def send(self, user, password, identifier):
        authenticator_challenge = os.urandom(16)
        peer_challenge = os.urandom(16)
        ident = 0x42
        password_hash = nt_hash(password)
        chal = challenge_hash(peer_challenge, authenticator_challenge, user.encode())
        nt_response = challenge_response(chal, password_hash)
        response = bytes([ident, 0]) + peer_challenge + b"\0" * 8 + nt_response
        packet = pyrad.packet.AuthPacket(code=pyrad.packet.AccessRequest, id=identifier, secret=SECRET,
                                         dict=self.dictionary)
        packet["Message-Authenticator"] = b"\0" * 16
        packet["User-Name"] = user
        packet["MS-CHAP-Challenge"] = authenticator_challenge
        packet["MS-CHAP2-Response"] = response
        raw = packet.RequestPacket()
        # pyrad 2.1 cannot sign Message-Authenticator (RFC 3579 §3.2): do it here.
        offset = raw.index(bytes([80, 18]) + b"\0" * 16)
        mac = hmac.new(SECRET, raw, hashlib.md5).digest()
        raw = raw[:offset + 2] + mac + raw[offset + 18:]
        reply_bytes = exchange(self.gateway.auth_port, raw)
        self.assertIsNotNone(reply_bytes, "no reply")
        code, _ = verify_response(reply_bytes, raw)
        reply = pyrad.packet.Packet(packet=reply_bytes, dict=self.dictionary, secret=SECRET)
        return code, reply, reply_bytes, raw, dict(
            ident=ident, password_hash=password_hash, nt_response=nt_response, peer_challenge=peer_challenge,
            authenticator_challenge=authenticator_challenge)

    def check_success(self, user, password):
        code, reply, reply_bytes, raw, s = self.send(user, password, 11)
        self.assertEqual(code, ACCESS_ACCEPT)
        microsoft = dict(vendor_attributes(decode_attributes(reply_bytes[20:]), MICROSOFT))
        success = microsoft[26]
        self.assertEqual(success[0], s["ident"])
        expected = authenticator_response(s["password_hash"], s["nt_response"], s["peer_challenge"],
                                          s["authenticator_challenge"], user.encode())
        self.assertEqual(success[1:].decode(), expected)
        send_key, recv_key = mppe_keys_for_server(s["password_hash"], s["nt_response"])
        self.assertEqual(decrypt_mppe_key(microsoft[16], SECRET, raw[4:20]), send_key)
        self.assertEqual(decrypt_mppe_key(microsoft[17], SECRET, raw[4:20]), recv_key)
        self.assertEqual(struct.unpack("!I", microsoft[7])[0], 1)  # Encryption-Allowed
        self.assertEqual(struct.unpack("!I", microsoft[8])[0], 6)  # 40- or 128-bit keys
        # pyrad decodes the same reply independently.
        self.assertIn("MS-CHAP2-Success", reply.keys())

    def test_success_from_cleartext_password(self):
        self.check_success("alice", "wonderland")

    def test_success_from_nt_password(self):
        self.check_success("bob", "clientPass")

    def test_wrong_password_gets_ms_chap_error(self):
        code, reply, reply_bytes, raw, s = self.send("alice", "wonderlanD", 12)
        self.assertEqual(code, ACCESS_REJECT)
        microsoft = dict(vendor_attributes(decode_attributes(reply_bytes[20:]), MICROSOFT))
        error = microsoft[2]
        self.assertEqual(error[0], s["ident"])
        self.assertTrue(error[1:].startswith(b"E=691 R=0 C="), error)
        self.assertIn(b"V=3", error)


if __name__ == "__main__":
    unittest.main(verbosity=2)
