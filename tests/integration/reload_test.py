#!/usr/bin/python3
"""Hot reload of a real gateway under load (docs/operations.md "Reload"):
100 accepted reloads, alternately SIGHUP and `radiusward ctl reload`, each
adding a user and changing a client's secret, while client threads send
Access-Requests without pause. Every request must be answered (none lost,
none retransmitted) with the answer of a configuration generation in effect
while it was in flight; after each reload the new user is accepted, the
previous one rejected and the client's new secret works. A users file with a
syntax error, and a change of `workers` (needs a restart), are rejected
with file:line:col by ctl's output and exit status 4, by SIGHUP in the log
and by GET /reload, while the old configuration keeps answering.
  tests/integration/reload_test.py RADIUSWARD_BINARY"""

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
import bench_sql  # noqa: E402  (admin_get: the admin API without ctl)
from radiusward_fixture import (ACCESS_ACCEPT, ACCESS_REJECT, ACCESS_REQUEST, STATUS_SERVER,  # noqa: E402
                                USER_NAME, USER_PASSWORD, build_request, exchange, free_udp_port,
                                hide_password, verify_response)

if len(sys.argv) < 2:
    sys.exit("usage: reload_test.py RADIUSWARD_BINARY")
BINARY = os.path.abspath(sys.argv.pop(1))

RELOADS = 100
LOAD_THREADS = 3
# Generous: the machine may be busy; a request unanswered this long is lost.
ANSWER_TIMEOUT_S = 15.0
SECRET = b"testing123"


def users_text(generation):
    return ('alice Cleartext-Password := "alice-pw"\n'
            'gen-user-%d Cleartext-Password := "pw-%d"\n' % (generation, generation))


def clients_text(generation):
    return ("client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n"
            "client second {\n  ipaddr = 127.0.0.2\n  secret = gen-%d-secret\n}\n" % generation)


def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def access_request(user, password, secret=SECRET):
    authenticator = os.urandom(16)
    identifier = random.randrange(256)
    attributes = [(USER_NAME, user.encode()),
                  (USER_PASSWORD, hide_password(password.encode(), secret, authenticator))]
    return build_request(ACCESS_REQUEST, identifier, attributes, secret=secret, authenticator=authenticator)


class Generations:
    """What the test knows of the gateway's configuration generation: the
    last one it saw take effect, and whether a reload is under way (its
    outcome not seen yet)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.generation = 0
        self.in_flight = False

    def snapshot(self):
        with self.lock:
            return self.generation, self.in_flight

    def begin(self):
        with self.lock:
            self.in_flight = True

    def end(self, generation):
        with self.lock:
            self.generation = generation
            self.in_flight = False


class Load(threading.Thread):
    """Sends Access-Requests one after another and checks every answer
    against the generations that could have decided it."""

    def __init__(self, port, generations, stop):
        super().__init__(daemon=True)
        self.port = port
        self.generations = generations
        self.stop_event = stop
        self.sent = 0
        self.lost = 0
        self.wrong = []

    def run(self):
        rng = random.Random()
        while not self.stop_event.is_set():
            before, busy_before = self.generations.snapshot()
            choice = rng.randrange(4)
            if choice == 0:
                user, password, want = "alice", "alice-pw", {ACCESS_ACCEPT}
            elif choice == 1:
                user, password, want = "alice", "wrong", {ACCESS_REJECT}
            else:
                j = max(0, before + rng.choice((-1, 0, 1)))
                user, password, want = "gen-user-%d" % j, "pw-%d" % j, None
            request = access_request(user, password)
            self.sent += 1
            reply = exchange(self.port, request, timeout=ANSWER_TIMEOUT_S)
            after, busy_after = self.generations.snapshot()
            if reply is None:
                self.lost += 1
                continue
            try:
                code, _ = verify_response(reply, request)
            except AssertionError as e:
                self.wrong.append("%s: %s" % (user, e))
                continue
            if want is None:
                # gen-user-j exists in generation j only; the request was
                # decided by one generation in [before, after] (after + 1
                # while a reload was under way).
                j = int(user.rsplit("-", 1)[1])
                last = after + 1 if busy_after else after
                want = set()
                if before <= j <= last:
                    want.add(ACCESS_ACCEPT)
                if not before == last == j:
                    want.add(ACCESS_REJECT)
            if code not in want:
                self.wrong.append("%s got %d, generations %d..%d (busy %s/%s)" %
                                  (user, code, before, after, busy_before, busy_after))


class ReloadTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rw-reload-")
        self.users = os.path.join(self.dir, "users")
        self.clients = os.path.join(self.dir, "clients.conf")
        self.config = os.path.join(self.dir, "gateway.yaml")
        self.socket = os.path.join(self.dir, "gateway.sock")
        self.log_path = os.path.join(self.dir, "gateway.log")
        self.port = free_udp_port()
        write_atomically(self.users, users_text(0))
        write_atomically(self.clients, clients_text(0))
        self.write_config(workers=2)
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([BINARY, "gateway", "--config", self.config],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        self.addCleanup(self.cleanup)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            self.assertIsNone(self.process.poll(), self.read_log())
            if exchange(self.port, build_request(STATUS_SERVER, 1, []), timeout=0.3) is not None:
                break
        else:
            self.fail("gateway did not answer Status-Server:\n" + self.read_log())

    def write_config(self, workers):
        write_atomically(self.config,
                         "listen: [127.0.0.1]\n"
                         "auth_port: %d\n"
                         "acct_port: 0\n"
                         "workers: %d\n"
                         "users_file: users\n"
                         "clients_file: clients.conf\n"
                         "dictionary_dir:\n"
                         "admin_socket: gateway.sock\n" % (self.port, workers))

    def cleanup(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()
        if not getattr(self, "passed", False):
            with open(self.log_path) as f:
                print("gateway log, last lines:\n" + "".join(f.readlines()[-40:]))
        shutil.rmtree(self.dir, ignore_errors=True)

    def read_log(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def reload_status(self):
        body = bench_sql.admin_get(self.socket, "/reload", timeout=30)
        self.assertIsNotNone(body, "GET /reload")
        return json.loads(body)

    def ctl_reload(self):
        done = subprocess.run([BINARY, "ctl", "--socket", self.socket, "reload"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=120)
        return done.returncode, done.stdout, done.stderr

    def sighup_reload(self, attempts_before):
        """Sends SIGHUP and waits until GET /reload shows the attempt done."""
        self.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status = self.reload_status()
            if status["reloads_accepted"] + status["reloads_rejected"] > attempts_before:
                return status
            time.sleep(0.01)
        self.fail("SIGHUP reload not seen in GET /reload:\n" + self.read_log())

    def attempts(self):
        status = self.reload_status()
        return status["reloads_accepted"] + status["reloads_rejected"]

    def probe(self, generation):
        """What only generation `generation` answers: its user accepted, the
        previous one rejected, and the second client's new secret."""
        request = access_request("gen-user-%d" % generation, "pw-%d" % generation)
        reply = exchange(self.port, request, timeout=ANSWER_TIMEOUT_S)
        self.assertIsNotNone(reply, "probe lost")
        self.assertEqual(verify_response(reply, request)[0], ACCESS_ACCEPT, "gen-user-%d" % generation)
        if generation > 0:
            previous = access_request("gen-user-%d" % (generation - 1), "pw-%d" % (generation - 1))
            reply = exchange(self.port, previous, timeout=ANSWER_TIMEOUT_S)
            self.assertIsNotNone(reply, "probe lost")
            self.assertEqual(verify_response(reply, previous)[0], ACCESS_REJECT)
        secret = b"gen-%d-secret" % generation
        second = access_request("alice", "alice-pw", secret=secret)
        reply = exchange(self.port, second, source="127.0.0.2", timeout=ANSWER_TIMEOUT_S)
        self.assertIsNotNone(reply, "no answer to the second client with the secret of generation %d" % generation)
        self.assertEqual(verify_response(reply, second, secret=secret)[0], ACCESS_ACCEPT)

    def expect_rejected(self, status_and_output, where_pattern, generation):
        code, out, err = status_and_output
        self.assertEqual(code, 4, "ctl reload exit status; stdout %r stderr %r" % (out, err))
        self.assertTrue(any(re.match(where_pattern, line) for line in err.splitlines()),
                        "no %r line in ctl's stderr:\n%s" % (where_pattern, err))
        self.assertIn("configuration generation %d stays in effect" % generation, err)
        status = self.reload_status()
        self.assertEqual(status["generation"], generation)
        self.assertFalse(status["last"]["accepted"])
        self.assertTrue(any(re.match(where_pattern, e) for e in status["last"]["errors"]), status)

    def test_reloads_under_load_lose_nothing(self):
        generations = Generations()
        stop = threading.Event()
        load = [Load(self.port, generations, stop) for _ in range(LOAD_THREADS)]
        for thread in load:
            thread.start()
        try:
            self.probe(0)
            broken_users = re.escape(self.users) + r":3:30: unterminated quoted string"
            for generation in range(1, RELOADS + 1):
                if generation == 40:
                    # A users file with a syntax error: rejected whole, by ctl
                    # and by SIGHUP; the old generation keeps answering.
                    write_atomically(self.users, users_text(generation - 1) + 'broken Cleartext-Password := "unterminated\n')
                    generations.begin()
                    self.expect_rejected(self.ctl_reload(), broken_users, generation - 1)
                    generations.end(generation - 1)
                    generations.begin()
                    status = self.sighup_reload(self.attempts())
                    generations.end(generation - 1)
                    self.assertFalse(status["last"]["accepted"])
                    self.assertEqual(status["last"]["trigger"], "SIGHUP")
                    self.assertTrue(any(re.match(broken_users, e) for e in status["last"]["errors"]), status)
                    self.probe(generation - 1)
                if generation == 70:
                    # A key that needs a restart: rejected, naming it.
                    self.write_config(workers=3)
                    generations.begin()
                    self.expect_rejected(self.ctl_reload(),
                                         re.escape(self.config) + r":4:1: workers changed from 2 to 3: needs a restart",
                                         generation - 1)
                    generations.end(generation - 1)
                    self.write_config(workers=2)
                    self.probe(generation - 1)
                write_atomically(self.users, users_text(generation))
                write_atomically(self.clients, clients_text(generation))
                generations.begin()
                if generation % 2:
                    status = self.sighup_reload(self.attempts())
                    self.assertTrue(status["last"]["accepted"], status)
                    self.assertEqual(status["generation"], generation)
                else:
                    code, out, err = self.ctl_reload()
                    self.assertEqual(code, 0, "ctl reload: %s%s" % (out, err))
                    self.assertIn("reloaded: configuration generation %d in effect" % generation, out)
                generations.end(generation)
                self.probe(generation)
        finally:
            stop.set()
            for thread in load:
                thread.join(ANSWER_TIMEOUT_S + 5)
        sent = sum(thread.sent for thread in load)
        lost = sum(thread.lost for thread in load)
        wrong = [w for thread in load for w in thread.wrong]
        print("reload_test: %d reloads accepted, %d requests under load, %d lost, %d wrong" %
              (RELOADS, sent, lost, len(wrong)))
        self.assertEqual(lost, 0)
        self.assertEqual(wrong, [])
        self.assertGreater(sent, RELOADS)
        status = self.reload_status()
        self.assertEqual(status["generation"], RELOADS)
        self.assertEqual(status["reloads_accepted"], RELOADS)
        self.assertEqual(status["reloads_rejected"], 3)
        log = self.read_log()
        self.assertIn("reload (SIGHUP): accepted; configuration generation %d in effect" % (RELOADS - 1), log)
        self.assertIn("reload (admin API): rejected with 1 error(s); generation 39 stays in effect", log)
        self.assertRegex(log, r"reload \(SIGHUP\): rejected")
        self.process.send_signal(signal.SIGTERM)
        self.assertEqual(self.process.wait(timeout=30), 0)
        self.passed = True


if __name__ == "__main__":
    unittest.main(verbosity=2)
