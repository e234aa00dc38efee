#!/usr/bin/python3
"""Interop: the authorization policy (docs/policy.md) on a real
`radiusward gateway --policy FILE`, driven by FreeRADIUS's radclient: an SSID
rule that accepts with a VLAN, another SSID refused by a rule the decision
log names, a MAC on the MAB deny list, a time-of-day rule whose window is
chosen from the current time, a reload that changes the policy, and
`radiusward check` printing file:line:col for a broken policy."""

import datetime
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from radiusward_fixture import *  # noqa: F401,F403

BINARY = binary_from_argv()

USERS = '''
alice   Cleartext-Password := "wonderland"
        Tunnel-Type:1 = VLAN,
        Tunnel-Medium-Type:1 = IEEE-802,
        Tunnel-Private-Group-Id:1 = "999"
bob     Cleartext-Password := "builder"
00-11-22-33-44-55
de-ad-be-ef-00-01
'''

CLIENTS = '''
client localhost {
    ipaddr = 127.0.0.1
    secret = testing123
    shortname = ap-lobby
}
'''


def time_window(minutes_from_now, length_minutes):
    """A window 'Day HH:MM-HH:MM' (UTC) starting `minutes_from_now` from now
    and lasting `length_minutes`: a negative start puts now inside it, a
    positive one keeps now out, whenever the test runs. A window that
    crosses midnight is written as one (the end before the start), which the
    policy reads as running into the next day."""
    now = datetime.datetime.now(datetime.timezone.utc)
    start = now + datetime.timedelta(minutes=minutes_from_now)
    end = start + datetime.timedelta(minutes=length_minutes)
    return "%s %02d:%02d-%02d:%02d" % (start.strftime("%a"), start.hour, start.minute, end.hour, end.minute)


def policy_text(night_window):
    return '''
utc_offset: UTC
default: reject
mab:
  deny: ["de:ad:be:ef:00:01"]
rules:
  - name: corp-staff
    match: {ssid: corp, user: alice, client: "ap-*"}
    decision: accept
    reply: {vlan: 100, session_timeout: 3600}
  - name: corp-others
    match: {ssid: corp}
    decision: reject
    reply: {reply_message: "corp is for staff"}
  - name: lab-in-hours
    match: {ssid: lab, time: "%s"}
    decision: accept
    reply: {filter_id: lab}
  - name: devices
    match: {method: MAB}
    decision: accept
    reply: {vlan: 30}
''' % night_window


def radclient(gateway, attributes):
    done = subprocess.run(["radclient", "-x", "-r", "1", "-t", "3", "127.0.0.1:%d" % gateway.auth_port, "auth",
                           "testing123"], input=attributes + "Message-Authenticator = 0x00\n", text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    return done.stdout


def login(gateway, user, password, ssid):
    return radclient(gateway, 'User-Name = "%s"\nUser-Password = "%s"\nCalled-Station-Id = "00-11-22-33-44-55:%s"\n'
                     'Calling-Station-Id = "aa-bb-cc-dd-ee-ff"\n' % (user, password, ssid))


def mab(gateway, mac):
    return radclient(gateway, 'User-Name = "%s"\nUser-Password = "%s"\nCalling-Station-Id = "%s"\n' % (mac, mac, mac))


class PolicyInterop(RemembersFailure, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rw-policy-")
        cls.policy_path = os.path.join(cls.dir, "policy.yaml")
        # Now is inside a window that began 10 minutes ago and lasts 30.
        cls.inside = time_window(-10, 30)
        with open(cls.policy_path, "w") as f:
            f.write(policy_text(cls.inside))
        cls.gateway = Gateway(BINARY, USERS, CLIENTS, extra_args=["--policy", cls.policy_path],
                              listen=("127.0.0.1",))

    @classmethod
    def tearDownClass(cls):
        cls.end_deployment()

    def decision_lines(self, user):
        return [line for line in self.gateway.read_log().splitlines() if '"%s"' % user in line]

    def wait_for_line(self, user, text):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if any(text in line for line in self.decision_lines(user)):
                return
            time.sleep(0.05)
        self.fail("no decision line for %s with %r in:\n%s" % (user, text, self.gateway.read_log()))

    def test_ssid_rule_accepts_with_its_vlan(self):
        output = login(self.gateway, "alice", "wonderland", "corp")
        self.assertIn("Received Access-Accept", output, output)
        self.assertIn('Tunnel-Private-Group-Id:1 = "100"', output)
        self.assertIn("Tunnel-Type:1 = VLAN", output)
        self.assertIn("Tunnel-Medium-Type:1 = IEEE-802", output)
        self.assertIn("Session-Timeout = 3600", output)
        # The policy's VLAN takes the place of the users file's.
        self.assertNotIn('"999"', output)
        self.wait_for_line("alice", "(rule corp-staff)")

    def test_same_user_from_another_ssid_is_rejected_by_a_named_rule(self):
        output = login(self.gateway, "alice", "wonderland", "guest")
        self.assertIn("Received Access-Reject", output, output)
        self.wait_for_line("alice", "Access-Reject for \"alice\" via PAP from client ap-lobby (127.0.0.1")
        self.wait_for_line("alice", "policy_reject (rule default)")
        output = login(self.gateway, "bob", "builder", "corp")
        self.assertIn("Received Access-Reject", output, output)
        self.assertIn('Reply-Message = "corp is for staff"', output)
        self.wait_for_line("bob", "policy_reject (rule corp-others)")

    def test_wrong_password_is_decided_before_the_policy(self):
        output = login(self.gateway, "alice", "looking-glass", "corp")
        self.assertIn("Received Access-Reject", output, output)
        self.assertNotIn("Tunnel", output)
        self.wait_for_line("alice", ": wrong_password")

    def test_mac_on_the_deny_list_is_rejected(self):
        output = mab(self.gateway, "DE-AD-BE-EF-00-01")
        self.assertIn("Received Access-Reject", output, output)
        self.wait_for_line("DE-AD-BE-EF-00-01", "policy_reject (rule mab.deny)")
        output = mab(self.gateway, "00-11-22-33-44-55")
        self.assertIn("Received Access-Accept", output, output)
        self.assertIn('Tunnel-Private-Group-Id:1 = "30"', output)

    def test_time_of_day_rule_follows_the_clock(self):
        output = login(self.gateway, "bob", "builder", "lab")
        self.assertIn("Received Access-Accept", output, output)
        self.assertIn('Filter-Id = "lab"', output)
        self.wait_for_line("bob", "(rule lab-in-hours)")

    def reload(self):
        reloads = self.gateway.read_log().count("reload:")
        self.gateway.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while self.gateway.read_log().count("reload:") == reloads and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertIn("policy rules", self.gateway.read_log().split("reload:")[-1])

    def test_reload_applies_a_changed_policy(self):
        # A window that starts in an hour keeps now out.
        with open(self.policy_path, "w") as f:
            f.write(policy_text(time_window(60, 30)))
        try:
            self.reload()
            output = login(self.gateway, "bob", "builder", "lab")
            self.assertIn("Received Access-Reject", output, output)
            self.wait_for_line("bob", "policy_reject (rule default)")
        finally:
            with open(self.policy_path, "w") as f:
                f.write(policy_text(self.inside))
            self.reload()


class PolicyCheck(unittest.TestCase):
    def test_check_prints_file_line_col_for_a_broken_policy(self):
        folder = tempfile.mkdtemp(prefix="rw-policy-check-")
        self.addCleanup(shutil.rmtree, folder, True)
        path = os.path.join(folder, "policy.yaml")
        with open(path, "w") as f:
            f.write("default: reject\nrules:\n  - name: r\n    decision: maybe\n    match: {ssid: corp, colour: red}\n")
        done = subprocess.run([BINARY, "check", "--policy", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=60)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("%s:4:15: expected accept or reject, got 'maybe'" % path, done.stderr)
        self.assertIn("%s:5:25: unknown key 'match.colour'" % path, done.stderr)
        # The gateway refuses to start on the same policy.
        with open(os.path.join(folder, "users"), "w") as f:
            f.write(USERS)
        with open(os.path.join(folder, "clients.conf"), "w") as f:
            f.write(CLIENTS)
        with open(os.path.join(folder, "gateway.yaml"), "w") as f:
            f.write("listen: [127.0.0.1]\nauth_port: 0\nacct_port: 0\nusers_file: users\n"
                    "clients_file: clients.conf\npolicy: policy.yaml\n")
        done = subprocess.run([BINARY, "check", "--config", os.path.join(folder, "gateway.yaml")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("policy.yaml:4:15: expected accept or reject", done.stderr)
        with open(path, "w") as f:
            f.write("default: accept\n")
        done = subprocess.run([BINARY, "check", "--config", os.path.join(folder, "gateway.yaml")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("0 policy rules", done.stdout)


if __name__ == "__main__":
    unittest.main()
