#!/usr/bin/python3
"""Integration: the bench's EAP phases run alone (`RW_BENCH_ONLY="eap
bootstorm" scripts/run-bench`, docs/benchmarking.md "EAP") at a tiny scale
against the real binary (a gateway serving EAP-TLS and PEAP) and a real
FreeRADIUS: two short ceiling steps per method and server, and a storm of
10 devices against each. Both phases must
land in the run they were given (every other figure kept), every server
measured must have accepted authentications with the right keys, and the
report must carry the section with its tables, while the rest of
PERFORMANCE.md stays what the base run gives. No timing is asserted: the
machine is shared.
  tests/integration/bench_eap_test.py RADIUSWARD_BINARY"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

if len(sys.argv) < 2:
    sys.exit("usage: bench_eap_test.py RADIUSWARD_BINARY")
BINARY = os.path.abspath(sys.argv.pop(1))
BASE = os.path.join(ROOT, "bench", "latest-run.json")
SECTION = "## EAP-TLS and PEAP-MSCHAPv2 (issue 13)"


def report(run_path, folder, name):
    page = os.path.join(folder, name)
    subprocess.run([os.path.join(ROOT, "scripts", "bench-report"), run_path, "--markdown", page], check=True,
                   capture_output=True)
    with open(page) as f:
        return f.read()


def without_section(page):
    if SECTION not in page:
        return page
    start = page.index(SECTION)
    end = page.index("\n## ", start + 1) + 1
    return page[:start] + page[end:]


class EapPhases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="rw-bench-eap-test-")
        cls.base = os.path.join(cls.out, "base.json")
        with open(BASE) as f:
            base = json.load(f)
        # A base without EAP figures, whatever the committed run holds.
        base.pop("eap", None)
        base.pop("bootstorm", None)
        with open(cls.base, "w") as f:
            json.dump(base, f)
        env = dict(os.environ, RW_BENCH_ONLY="eap bootstorm", RW_BENCH_BASE=cls.base, RW_BENCH_OUT=cls.out,
                   RW_BENCH_DOCS="0", RW_BENCH_NICE="0", RW_BENCH_PIN="0", RW_BENCH_USERS="20",
                   RW_BENCH_EAP_START_RATE="10", RW_BENCH_EAP_MAX_RATE="20", RW_BENCH_EAP_MAX_STEPS="2",
                   RW_BENCH_EAP_STEP_S="1", RW_BENCH_EAP_SETTLE_MS="200", RW_BENCH_EAP_P99_MAX_MS="5000",
                   RW_BENCH_BOOTSTORM_N="10")
        cls.done = subprocess.run([os.path.join(ROOT, "scripts", "run-bench"), os.path.dirname(BINARY)], env=env,
                                  capture_output=True, text=True, timeout=280)
        found = glob.glob(os.path.join(cls.out, "eap-bootstorm-*.json"))
        cls.run_path = found[0] if len(found) == 1 else None

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.done.returncode, 0, self.done.stderr[-5000:])
        self.assertIsNotNone(self.run_path, os.listdir(self.out))
        with open(self.run_path) as f:
            self.run_ = json.load(f)

    def test_ceilings_of_both_methods_against_both_servers(self):
        self.assertIsNone(self.run_["eap"]["conditions"]["radiusward_skipped"])
        results = self.run_["eap"]["results"]
        measured = {(r["server"], r["method"]) for r in results}
        self.assertEqual(measured, {(server, method) for server in ("radiusward", "freeradius")
                                    for method in ("tls", "peap")})
        for r in results:
            steps = r["report"]["steps"]
            self.assertTrue(1 <= len(steps) <= 2, r)
            first = steps[0]["eap"]
            self.assertGreater(first["accepted"], 0, (r["server"], r["method"], first))
            self.assertEqual(first["failed"], {}, (r["server"], r["method"], first))
            self.assertGreater(first["generator_cpu_ms_per_auth"], 0)
            self.assertGreater(r["report"]["ceiling"]["rate"], 0, r["report"]["steps"])
            # The server's process was sampled.
            self.assertTrue(steps[0]["processes"], steps[0])

    def test_boot_storm_authenticates_every_device(self):
        results = self.run_["bootstorm"]["results"]
        self.assertEqual({r["server"] for r in results}, {"radiusward", "freeradius"})
        for r in results:
            self.assertEqual(r["devices"], 10)
            self.assertEqual(r["report"]["accepted"], 10, r["report"])
            self.assertGreater(r["report"]["elapsed_s"], 0)
            self.assertGreaterEqual(r["report"]["max_ms"], r["report"]["p99_ms"])

    def test_other_figures_are_kept_and_the_report_has_the_section(self):
        with open(self.base) as f:
            base = json.load(f)
        for key in base:
            self.assertEqual(self.run_[key], base[key], key)
        page = report(self.run_path, self.out, "PERFORMANCE.md")
        self.assertIn(SECTION, page)
        self.assertIn("**Authentications per second at the ceiling**", page)
        self.assertIn("**Boot storm: N devices start EAP-TLS at once**", page)
        self.assertIn("| EAP-TLS |", page)
        self.assertIn("| PEAP-MSCHAPv2 |", page)
        self.assertEqual(without_section(page), report(self.base, self.out, "base-run.page"))


if __name__ == "__main__":
    unittest.main()
