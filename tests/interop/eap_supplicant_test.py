#!/usr/bin/python3
"""Interop: the bench's EAP supplicants (`radiusward bench eap`,
src/loadgen_shell/eap_supplicant.h) against a real FreeRADIUS 3.2 with
rlm_eap, configured as the bench configures it (scripts/freeradius-bench-config
AUTH_MODE eap) with certificates made by scripts/eap-bench-certs, at a
fragment size small enough that both sides fragment (L, M flags and ACKs):

- EAP-TLS with the bench client certificate: every conversation ends in
  Access-Accept whose MS-MPPE keys equal the supplicant's MSK;
- EAP-TLS with a certificate from a CA FreeRADIUS does not trust: rejected;
- PEAP-MSCHAPv2 with the right passwords: accepted (the server's MS-CHAPv2
  authenticator response checked, the keys checked);
- PEAP-MSCHAPv2 with wrong passwords: every one fails in the inner method
  (its Failure or the Result TLV);
- Debian's eapol_test (hostapd's supplicant) is accepted by the same server
  with the same files, for both methods: the server configuration is one a
  standard supplicant agrees with.

  tests/interop/eap_supplicant_test.py RADIUSWARD_BINARY"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from radiusward_fixture import *  # noqa: F401,F403

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_eap  # noqa: E402  (the bench's certificates and FreeRADIUS)

BINARY = binary_from_argv()
SECRET = "eap-interop-secret"
FRAGMENT = 300


class EapSupplicantAgainstFreeRadius(RemembersFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rw-eap-supplicant-")
        cls.certs = bench_eap.certificates(cls.dir)
        # Another CA's client certificate, which FreeRADIUS must refuse.
        cls.other = bench_eap.certificates(os.path.join(cls.dir, "other"))
        cls.users = os.path.join(cls.dir, "users.txt")
        with open(cls.users, "w") as f:
            for i in range(4):
                f.write("bench-user-%d bench-password-%d\n" % (i, i))
        cls.wrong = os.path.join(cls.dir, "wrong.txt")
        with open(cls.wrong, "w") as f:
            for i in range(4):
                f.write("bench-user-%d not-the-password-%d\n" % (i, i))
        cls.server = bench_eap.start_freeradius(cls.dir, cls.users, SECRET, cls.certs, FRAGMENT, "1.2",
                                                free_udp_port)
        cls.ready = cls.wait_ready()

    @classmethod
    def wait_ready(cls):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and cls.server.process.poll() is None:
            try:
                if cls.run_eap("tls", count=1, timeout_ms=300, retries=0)["accepted"] == 1:
                    return True
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
            time.sleep(0.3)
        return False

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        if cls.failed:
            print(cls.server.tail())
            print("kept", cls.dir)
        else:
            shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def run_eap(cls, method, count, users=None, certs=None, concurrency=8, timeout_ms=2000, retries=3):
        certs = certs or cls.certs
        args = bench_eap.eap_args(BINARY, cls.server, SECRET, dict(cls.certs, client_cert=certs["client_cert"],
                                                                   client_key=certs["client_key"]),
                                  method, users or cls.users, "1.2", FRAGMENT)
        args += ["--count", str(count), "--rate", "0", "--concurrency", str(concurrency),
                 "--timeout-ms", str(timeout_ms), "--retries", str(retries)]
        return bench_eap.run_generator(args, os.path.join(cls.dir, "out.json"), timeout=120)

    def setUp(self):
        self.assertTrue(self.ready, "FreeRADIUS never accepted EAP-TLS:\n" + self.server.tail())

    def test_eap_tls_with_the_client_certificate_is_accepted_with_the_right_keys(self):
        report = self.run_eap("tls", count=20)
        self.assertEqual(report["accepted"], 20, json.dumps(report, indent=1))
        self.assertEqual(report["failed"], {})
        self.assertEqual(report["timed_out"], 0)
        # Fragmented both ways at 300 octets: the server's flight with its
        # certificate and the client's with its own take several rounds each.
        self.assertGreater(report["rounds_per_auth"], 6)
        self.assertGreater(report["generator_cpu_s"], 0)

    def test_eap_tls_with_an_untrusted_certificate_is_rejected(self):
        report = self.run_eap("tls", count=3, certs=self.other)
        self.assertEqual(report["accepted"], 0, json.dumps(report, indent=1))
        self.assertEqual(sum(report["failed"].values()), 3, report)
        self.assertTrue(set(report["failed"]) <= {"tls_failed", "eap_failure"}, report["failed"])

    def test_peap_mschapv2_with_the_right_passwords_is_accepted(self):
        report = self.run_eap("peap", count=20)
        self.assertEqual(report["accepted"], 20, json.dumps(report, indent=1))
        self.assertEqual(report["failed"], {})

    def test_peap_mschapv2_with_wrong_passwords_fails_in_the_inner_method(self):
        report = self.run_eap("peap", count=4, users=self.wrong)
        self.assertEqual(report["accepted"], 0, json.dumps(report, indent=1))
        # FreeRADIUS (send_error = no) ends a wrong inner password with a
        # failed Result TLV rather than an EAP-MSCHAPv2 Failure; both say so.
        self.assertEqual(sum(report["failed"].values()), 4, report)
        self.assertTrue(set(report["failed"]) <= {"inner_failure", "result_failure"}, report["failed"])

    def test_eapol_test_agrees_with_the_same_server(self):
        for name, block in (
                ("tls", 'eap=TLS\n    identity="bench-user-0"\n    ca_cert="%s"\n    client_cert="%s"\n'
                        '    private_key="%s"\n' % (self.certs["ca"], self.certs["client_cert"],
                                                   self.certs["client_key"])),
                ("peap", 'eap=PEAP\n    identity="bench-user-1"\n    password="bench-password-1"\n'
                         '    ca_cert="%s"\n    phase1="peapver=0"\n    phase2="auth=MSCHAPV2"\n'
                         % self.certs["ca"])):
            conf = os.path.join(self.dir, "eapol-%s.conf" % name)
            with open(conf, "w") as f:
                f.write("network={\n    key_mgmt=IEEE8021X\n    eapol_flags=0\n    %s}\n" % block)
            done = subprocess.run(["eapol_test", "-c", conf, "-a", "127.0.0.1", "-p", str(self.server.port),
                                   "-s", SECRET, "-t", "20"], capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, name + ":\n" + done.stdout[-3000:])
            self.assertIn("MPPE keys OK", done.stdout, name)


if __name__ == "__main__":
    unittest.main()
