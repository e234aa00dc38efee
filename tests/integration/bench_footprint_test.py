#!/usr/bin/python3
"""Integration: the bench's footprint phase run alone (`RW_BENCH_ONLY=footprint
scripts/run-bench`, docs/benchmarking.md "Footprint and start-up") at a
small scale: 100 clients, 1,000 users, one repetition, against the real
binary. Its figures must land in the run it was given in place of that
run's own (every other figure kept as it was), the generated clients.conf
and users file must be read whole by `radiusward check`, and the report
must carry the section "Footprint and start-up" with every figure filled
in, while the rest of PERFORMANCE.md stays what the base run gives.
No timing is asserted: the machine is shared.
  tests/integration/bench_footprint_test.py RADIUSWARD_BINARY"""

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

if len(sys.argv) < 2:
    sys.exit("usage: bench_footprint_test.py RADIUSWARD_BINARY")
BINARY = os.path.abspath(sys.argv.pop(1))
BASE = os.path.join(ROOT, "bench", "latest-run.json")
SECTION = "## Footprint and start-up (issue 14)"


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def report(run_path, folder, name):
    page = os.path.join(folder, name)
    subprocess.run([os.path.join(ROOT, "scripts", "bench-report"), run_path, "--markdown", page], check=True,
                   capture_output=True)
    with open(page) as f:
        return f.read()


def split_section(page):
    """(the page without the footprint section, the section)."""
    if SECTION not in page:
        return page, ""
    start = page.index(SECTION)
    end = page.index("\n## ", start + 1) + 1
    return page[:start] + page[end:], page[start:end]


class FootprintPhase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="rw-bench-footprint-test-")
        cls.base = os.path.join(cls.out, "base.json")
        shutil.copyfile(BASE, cls.base)
        cls.repository_files = {p: digest(p) for p in (BASE, os.path.join(ROOT, "docs", "PERFORMANCE.md"))}
        env = dict(os.environ, RW_BENCH_ONLY="footprint", RW_BENCH_BASE=cls.base, RW_BENCH_OUT=cls.out,
                   RW_BENCH_DOCS="0", RW_BENCH_FOOTPRINT_CLIENTS="100", RW_BENCH_FOOTPRINT_USERS="1000",
                   RW_BENCH_FOOTPRINT_REPEAT="1", RW_BENCH_FOOTPRINT_RELOADS="1", RW_BENCH_FOOTPRINT_SETTLE_S="0.5",
                   RW_BENCH_NICE="0", RW_BENCH_PIN="0")
        cls.done = subprocess.run([os.path.join(ROOT, "scripts", "run-bench"), os.path.dirname(BINARY)], env=env,
                                  capture_output=True, text=True, timeout=280)
        found = glob.glob(os.path.join(cls.out, "footprint-*.json"))
        cls.run_path = found[0] if len(found) == 1 else None

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.done.returncode, 0, self.done.stderr[-5000:])
        self.assertIsNotNone(self.run_path, os.listdir(self.out))
        with open(self.run_path) as f:
            self.run_ = json.load(f)
        with open(self.base) as f:
            self.base_run = json.load(f)
        self.fp = self.run_["footprint"]

    def test_every_other_figure_is_the_base_runs(self):
        self.assertEqual({k: v for k, v in self.run_.items() if k != "footprint"},
                         {k: v for k, v in self.base_run.items() if k != "footprint"})
        # RW_BENCH_DOCS=0: the repository's page and run are left alone.
        for path, before in self.repository_files.items():
            self.assertEqual(digest(path), before, path)

    def test_the_files_are_read_whole(self):
        big = self.fp["files"]["big"]
        self.assertEqual(big["clients"]["clients"], 100)
        self.assertEqual(sum(big["clients"]["kinds"].values()), 100)
        self.assertEqual(big["counts"], {"clients": 100, "users_entries": 1002})  # and two DEFAULT entries
        self.assertEqual(big["users"]["users"], 1000)
        self.assertEqual(sum(big["users"]["forms"].values()), 1000)
        for form in ("Cleartext-Password", "NT-Password", "SSHA-Password", "SSHA2-256-Password", "Crypt-Password",
                     "MAB"):
            self.assertGreater(big["users"]["forms"].get(form, 0), 0, form)
        self.assertEqual(self.fp["files"]["small"]["counts"]["clients"], 1)
        self.assertEqual(self.fp["files"]["small"]["users"]["users"], self.base_run["conditions"]["users"])

    def test_gateway_and_member_figures(self):
        for key in ("big", "small"):
            (gateway,) = self.fp["gateway"][key]
            self.assertGreater(gateway["start_s"], 0)
            self.assertGreater(gateway["idle_rss_kib"], 0)
            self.assertGreaterEqual(gateway["start_hwm_kib"], gateway["idle_rss_kib"])
            self.assertEqual(len(gateway["reload_s"]), 1)
            self.assertEqual(len(gateway["reload_logged_s"]), 1)
            self.assertRegex(gateway["reload_log_line"],
                             r"reload \(admin API\): accepted; configuration generation 1 in effect")
            self.assertEqual(len(gateway["rss_after_each_reload_kib"]), 1)
            self.assertGreater(gateway["rss_after_reloads_kib"], 0)
        (members,) = self.fp["members"]
        self.assertGreater(members["leader_ready_s"], 0)
        self.assertEqual([m["name"] for m in members["members"]], ["member-1", "member-2", "member-3"])
        for member in members["members"]:
            self.assertGreater(member["idle_rss_kib"], 0)
            self.assertGreater(member["first_status_s"], 0)

    def test_the_section_and_nothing_else_is_added(self):
        page = report(self.run_path, self.out, "PERFORMANCE.md")
        before = report(self.base, self.out, "base-run.page")
        self.assertIn(SECTION, page)
        rest, section = split_section(page)
        # The base run may hold a footprint of its own: its section is the
        # one that differs.
        self.assertEqual(rest, split_section(before)[0])
        self.assertIn("Measured alone (`RW_BENCH_ONLY=footprint`", section)
        self.assertIn("| 100 clients, 1,000 users |", section)
        self.assertIn("| three, TLS on both cluster ports |", section)
        self.assertIn("`radiusward check` counted 100 clients and 1,002 users entries", section)
        # Every cell of the three tables is a figure: nothing left unmeasured.
        rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
        figures = [row for row in rows if re.search(r"\d+(\.\d+)? (s|ms|MiB) / ", row)]
        self.assertEqual(len(figures), 5, section)  # two gateway rows, the members, gateway and member idle
        self.assertNotIn("| — |", section)
        with open(os.path.join(self.out, "report.html")) as f:
            self.assertIn("Footprint and start-up", f.read())


if __name__ == "__main__":
    unittest.main()
