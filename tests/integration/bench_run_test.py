#!/usr/bin/python3
"""Integration: a short `radiusward bench run` against a real `radiusward
gateway` started here, for PAP, CHAP and MS-CHAPv2 (docs/benchmarking.md).
Every request must be answered and verified, nothing lost, the JSON report
complete, the gateway sampled from /proc; and a short `bench ceiling`
must produce steps with verdicts and a ceiling."""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from radiusward_fixture import Gateway, binary_from_argv, free_udp_port  # noqa: E402

import signal  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

BINARY = binary_from_argv()
USERS = "".join('bench-user-%d Cleartext-Password := "bench-password-%d"\n' % (i, i) for i in range(20))
CLIENTS = "client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n"


def bench(args, timeout=120):
    done = subprocess.run([BINARY, "bench"] + args, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stderr


class BenchRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gateway = Gateway(BINARY, USERS, CLIENTS, extra_args=["--log-level", "warn"], listen=("127.0.0.1",))
        cls.out = tempfile.mkdtemp(prefix="rw-bench-test-")

    @classmethod
    def tearDownClass(cls):
        cls.gateway.__exit__(None, None, None)
        shutil.rmtree(cls.out, ignore_errors=True)

    def run_step(self, scenario):
        out = os.path.join(self.out, scenario + ".json")
        code, stderr = bench(["run", "--target", "127.0.0.1:%d" % self.gateway.auth_port, "--secret", "testing123",
                              "--scenario", scenario, "--users", "count:20", "--rate", "300", "--duration-s", "1",
                              "--sockets", "4", "--timeout-ms", "2000", "--pid", str(self.gateway.process.pid),
                              "--json", out])
        self.assertEqual(code, 0, stderr)
        self.assertIn("step  1", stderr)
        with open(out) as f:
            return json.load(f), stderr

    def check_clean(self, report, stderr):
        self.assertEqual(report["sent"], 300, stderr)
        self.assertEqual(report["answered"], 300, stderr)
        self.assertEqual(report["lost"], 0, stderr)
        self.assertEqual(report["invalid"], 0, report["invalid_by_reason"])
        self.assertTrue(report["passed"], report["reason"])
        self.assertGreater(report["p99_us"], 0)
        self.assertGreaterEqual(report["max_us"], report["p99_us"])
        self.assertGreaterEqual(report["p99_us"], report["p50_us"])
        self.assertEqual(len(report["processes"]), 1)
        self.assertGreater(report["processes"][0]["rss_peak_kib"], 0)

    def test_pap(self):
        self.check_clean(*self.run_step("pap"))

    def test_chap(self):
        self.check_clean(*self.run_step("chap"))

    def test_mschapv2(self):
        self.check_clean(*self.run_step("mschapv2"))

    def test_wrong_secret_is_lost_after_retries(self):
        out = os.path.join(self.out, "wrong.json")
        # The gateway drops requests whose Message-Authenticator does not
        # verify, so a wrong secret is lost after the retries.
        code, stderr = bench(["run", "--target", "127.0.0.1:%d" % self.gateway.auth_port, "--secret", "wrong",
                              "--scenario", "pap", "--users", "count:20", "--rate", "50", "--duration-s", "0.2",
                              "--timeout-ms", "100", "--retries", "1", "--json", out])
        self.assertEqual(code, 0, stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["answered"], 0)
        self.assertEqual(report["lost"], 10)
        self.assertEqual(report["retransmissions"], 10)
        self.assertFalse(report["passed"])

    def test_sigterm_ends_a_long_step_with_its_report(self):
        """SIGTERM ends a 600 s step at once, in both generator processes
        (the forked one only through the parent's forwarding: without it
        the step would run on for ten minutes); the requests in flight are
        awaited and the report covers what was sent."""
        out = os.path.join(self.out, "stopped.json")
        run = subprocess.Popen([BINARY, "bench", "run", "--target", "127.0.0.1:%d" % self.gateway.auth_port,
                                "--secret", "testing123", "--scenario", "pap", "--users", "count:20",
                                "--rate", "200", "--duration-s", "600", "--processes", "2", "--sockets", "4",
                                "--timeout-ms", "2000", "--json", out],
                               stderr=subprocess.PIPE, text=True)
        time.sleep(2)
        stopped_at = time.monotonic()
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=60)
        took = time.monotonic() - stopped_at
        self.assertEqual(run.returncode, 0, stderr)
        # At most the retransmission timeout of the last requests.
        self.assertLess(took, 30, stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertTrue(report["stopped_early"], report)
        self.assertGreater(report["sent"], 0, report)
        self.assertLess(report["sent"], 200 * 600 // 10, report)
        self.assertEqual(report["answered"] + report["lost"], report["sent"], report)
        self.assertEqual(report["lost"], 0, report)
        # The duration is the schedule sent, not the 600 s asked for.
        self.assertLess(report["duration_s"], 60, report)
        self.assertGreater(report["duration_s"], 0, report)

    def test_refuses_more_generator_processes_than_a_stop_reaches(self):
        code, stderr = bench(["run", "--target", "127.0.0.1:%d" % self.gateway.auth_port, "--processes", "257"])
        self.assertNotEqual(code, 0, stderr)
        self.assertIn("--processes: Value 257 not in range 1 to 256", stderr)

    def test_ceiling_runs_steps(self):
        out = os.path.join(self.out, "ceiling.json")
        code, stderr = bench(["ceiling", "--target", "127.0.0.1:%d" % self.gateway.auth_port,
                              "--secret", "testing123", "--scenario", "pap", "--users", "count:20",
                              "--start-rate", "100", "--factor", "2", "--max-rate", "200", "--step-s", "0.5",
                              "--settle-ms", "100", "--json", out])
        self.assertEqual(code, 0, stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual([s["target_rate"] for s in report["steps"]], [100, 200], stderr)
        self.assertTrue(all(s["passed"] for s in report["steps"]), stderr)
        self.assertEqual(report["ceiling"], {"rate": 200, "lower_bound": True, "text": "≥ 200/s"})
        self.assertEqual(report["at_ceiling"]["target_rate"], 200)


class BenchFloor(unittest.TestCase):
    """`radiusward bench floor`, the floor server issue 15 measures the
    gateway against: it answers the generator's PAP with verified
    Access-Accepts, drops a wrong secret, and stops cleanly on SIGTERM."""

    def test_answers_verified_and_drops_a_wrong_secret(self):
        port = free_udp_port()
        floor = subprocess.Popen([BINARY, "bench", "floor", "--listen", "127.0.0.1:%d" % port, "--workers", "1"],
                                 stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 10
            code = None
            while time.monotonic() < deadline:
                code, stderr = bench(["run", "--target", "127.0.0.1:%d" % port, "--scenario", "pap",
                                      "--rate", "200", "--duration-s", "0.5", "--timeout-ms", "500"])
                if code == 0 and "lost 0" in stderr:
                    break
            self.assertEqual(code, 0, stderr)
            # Every request answered and every answer verified. Not the step's
            # PASS: its p99 bound is a timing, and a request sent before the
            # floor was ready, answered on its retransmission 500 ms later,
            # puts the p99 at the bound on a loaded machine.
            self.assertRegex(stderr, r"answered +200/s .* lost 0 .* invalid 0 ")
            code, stderr = bench(["run", "--target", "127.0.0.1:%d" % port, "--scenario", "pap", "--secret", "wrong",
                                  "--rate", "20", "--duration-s", "0.5", "--timeout-ms", "100", "--retries", "0"])
            self.assertEqual(code, 0, stderr)
            self.assertRegex(stderr, r"answered +0/s .* lost 10 ")
        finally:
            floor.send_signal(signal.SIGTERM)
            _, stderr = floor.communicate(timeout=10)
        self.assertEqual(floor.returncode, 0, stderr)
        self.assertIn("with 1 worker(s)", stderr)
        self.assertIn("SIGTERM, stopped", stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
