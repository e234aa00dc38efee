#!/usr/bin/python3
"""Integration: the bench's overload phase and its session and client sweep
run alone (`RW_BENCH_ONLY="overload sweep" scripts/run-bench`,
docs/benchmarking.md "Overload: 1.5× the ceiling for 60 s" and "Session and
client sweep") at a tiny scale against the real binary: an overload of
1.5x 400/s for 3 s then 2 s at rest, against three members exporting into a
real PostgreSQL and two gateways; the sweep with 100 and 1,000 live
sessions and then 100 with a clients.conf of 100 clients. Every
acknowledged record must be in the export database, every process's memory
sampled, the sweep's sessions all tracked by every member, and the report
must carry both sections and their goal rows, while the rest of
PERFORMANCE.md stays what the base run gives. No timing or memory figure is
asserted: the machine is shared.
  tests/integration/bench_overload_test.py RADIUSWARD_BINARY"""

import json
import os
import sys
import unittest

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from bench_phase import PhaseRun, without_section  # noqa: E402

if len(sys.argv) < 2:
    sys.exit("usage: bench_overload_test.py RADIUSWARD_BINARY")
BINARY = os.path.abspath(sys.argv.pop(1))
OVERLOAD = "## Overload: 1.5× the accounting ceiling for 3 s (issue 15)"
SWEEP = "## Cost against live sessions and NAS clients (issue 15)"


def strip(page):
    """`page` without both sections and their goal rows, whatever overload
    length the section's heading names (the base run's own is 60 s)."""
    page = without_section(without_section(page, OVERLOAD.split(" for ")[0] + " for "), SWEEP)
    return "".join(line for line in page.splitlines(True) if not (line.startswith("| ") and any(
        text in line for text in ("past 1.5× the ceiling", "| nothing lost at 1.5×", "sessions: throughput",
                                  "NAS clients in clients.conf"))))


class OverloadAndSweep(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.phase = PhaseRun(BINARY, ["overload", "sweep"], {
            "RW_BENCH_OVERLOAD_RATE": "400", "RW_BENCH_OVERLOAD_S": "3", "RW_BENCH_OVERLOAD_REST_S": "2",
            "RW_BENCH_OVERLOAD_SOCKETS": "16", "RW_BENCH_SWEEP_SESSIONS": "100 1000",
            "RW_BENCH_SWEEP_OPEN_RATE": "500", "RW_BENCH_SWEEP_RATE": "300", "RW_BENCH_SWEEP_S": "2",
            "RW_BENCH_SWEEP_CLIENTS": "100"})

    @classmethod
    def tearDownClass(cls):
        cls.phase.close()

    def setUp(self):
        self.assertEqual(self.phase.done.returncode, 0, self.phase.done.stderr[-5000:])
        self.assertIsNotNone(self.phase.run_path, os.listdir(self.phase.out))
        with open(self.phase.run_path) as f:
            self.run_ = json.load(f)
        with open(self.phase.base) as f:
            self.base_run = json.load(f)

    def test_every_other_figure_is_the_base_runs(self):
        self.assertEqual({k: v for k, v in self.run_.items() if k not in ("overload", "sweep")},
                         {k: v for k, v in self.base_run.items() if k not in ("overload", "sweep")})

    def test_overload_acknowledged_records_all_exported_and_memory_sampled(self):
        o = self.run_["overload"]
        self.assertEqual((o["rate"], o["ceiling_rate"], o["factor"]), (600, 400, 1.5))
        self.assertTrue(o["exporting"])
        self.assertEqual(o["checked_in"], "export database in PostgreSQL")
        self.assertGreater(o["acknowledged"], 0)
        self.assertEqual(o["acknowledged_missing"], 0)
        self.assertEqual(o["held_twice"], 0)
        self.assertEqual(sorted(o["processes"]), ["gateway-1", "gateway-2", "member-1", "member-2", "member-3"])
        for role, p in o["processes"].items():
            for key in ("first_kib", "peak_load_kib", "peak_rest_kib", "last_kib"):
                self.assertGreater(p.get(key, 0), 0, (role, key))
        for name in ("member-1", "member-2", "member-3"):
            self.assertIn("records_held_max", o["members"][name])
            self.assertIn("raft_log_bytes_max", o["members"][name])
        self.assertEqual({phase for _, phase, _, _ in o["series"]} >= {"load", "rest"}, True)

    def test_sweep_sessions_all_tracked(self):
        rows = self.run_["sweep"]["rows"]
        self.assertEqual([(r["sessions"], r["clients"]) for r in rows], [(100, 1), (1000, 1), (100, 100)])
        for row in rows:
            self.assertEqual(row["open"]["lost"], 0, row["open"])
            self.assertGreater(row["step"]["answered"], 0, row["step"])
            for name, figures in row["members_after"].items():
                # Interim-Updates opened nothing new and closed nothing.
                self.assertEqual(figures["sessions"], row["sessions"], (name, row["sessions"], row["clients"]))
            for role, kib in row["rss_after_kib"].items():
                self.assertGreater(kib, 0, role)

    def test_both_sections_and_their_goals_and_nothing_else(self):
        page = self.phase.report(self.phase.run_path, "PERFORMANCE.md")
        before = self.phase.report(self.phase.base, "base-run.page")
        self.assertIn(OVERLOAD, page)
        self.assertIn(SWEEP, page)
        self.assertIn("| member ≤ 128 MiB 2 s past 1.5× the ceiling |", page)
        self.assertIn("| gateway ≤ 64 MiB 2 s past 1.5× the ceiling |", page)
        self.assertIn("| nothing lost at 1.5× the ceiling |", page)
        self.assertIn("| cost flat from 100 to 1,000 sessions: throughput ratio ≥ 0.9, RSS per session |", page)
        self.assertIn("| 100 NAS clients in clients.conf: throughput ratio ≥ 0.9 |", page)
        self.assertIn("| 100 | 100 |", page)
        # The base run may hold the phases of its own: their sections and
        # goal rows are what differs.
        self.assertEqual(strip(page), strip(before))


if __name__ == "__main__":
    unittest.main()
