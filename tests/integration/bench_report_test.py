#!/usr/bin/python3
"""The report of scripts/bench-report on a synthetic run: the HTML is one
self-contained file with inline SVG (no network), the trend file gains one
line, and the performance page states the conditions, both servers'
ceilings, their ratio, the lower-bound mark and every step's verdict."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def step(index, rate, answered, passed, reason="", p99_us=2000):
    return {"index": index, "target_rate": rate, "duration_s": 5, "sent": rate * 5, "answered": answered * 5,
            "answered_rate": answered, "lost": 0 if passed else 7, "retransmissions": 0, "invalid": 0,
            "p50_us": 300, "p99_us": p99_us, "max_us": p99_us * 2, "passed": passed, "reason": reason,
            "processes": [{"pid": 1, "name": "srv", "cpu_avg_percent": 80, "cpu_max_percent": 95,
                           "rss_peak_kib": 30000, "samples": 20}], "invalid_by_reason": {}}


def report(label, steps, rate, lower_bound):
    at = next(s for s in steps if s["passed"] and s["target_rate"] == rate)
    text = ("≥ " if lower_bound else "") + "{:,}/s".format(rate)
    return {"label": label, "scenario": "pap", "steps": steps, "at_ceiling": at,
            "ceiling": {"rate": rate, "lower_bound": lower_bound, "text": text}}


RUN = {
    "format": 1, "started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:10:00+00:00",
    "machine": {"hostname": "h", "cpu_model": "Test CPU", "cores": 2, "memory_mib": 4096, "kernel": "6.1",
                "os": "Debian 12", "load_average_at_start": [1.0, 1.0, 1.0], "load_average_at_end": [2.0, 2, 2]},
    "git": {"commit": "0123456789abcdef", "dirty": False, "branch": "main"},
    "versions": {"radiusward": "radiusward 0.1.0", "freeradius": "FreeRADIUS 3.2.1", "compiler": "g++ 12"},
    "conditions": {"pinning": "servers on core 0, generator on core 1 (taskset)", "shared_machine": "shared",
                   "step_s": 5, "users": 1000, "gateway_workers": "1", "pass_rule": "0 lost",
                   "freeradius": "users file"},
    "google_benchmark": {"radius_bench": [
        {"name": "BM_Md5OfPacket", "real_time_ns": 300, "cpu_time_ns": 300, "items_per_second": None,
         "bytes_per_second": None},
        {"name": "BM_ReceiveAccessRequest", "real_time_ns": 900, "cpu_time_ns": 900, "items_per_second": None,
         "bytes_per_second": None}]},
    "results": [
        {"server": "radiusward", "scenario": "pap",
         "report": report("radiusward", [step(1, 1000, 1000, True), step(2, 2000, 2000, True)], 2000, True)},
        {"server": "freeradius", "scenario": "pap",
         "report": report("freeradius", [step(1, 1000, 1000, True), step(2, 2000, 1500, False, "lost 7"),
                                         step(3, 1500, 1500, False, "p99 600 ms > 500 ms", 600000),
                                         step(4, 1250, 1250, True)], 1250, False)},
    ],
}


class BenchReport(unittest.TestCase):
    def test_html_trend_and_markdown(self):
        folder = tempfile.mkdtemp(prefix="rw-bench-report-")
        self.addCleanup(shutil.rmtree, folder, True)
        run_path = os.path.join(folder, "run.json")
        with open(run_path, "w") as f:
            json.dump(RUN, f)
        paths = {k: os.path.join(folder, k) for k in ("report.html", "trend.jsonl", "PERFORMANCE.md")}
        for _ in range(2):
            subprocess.run([os.path.join(ROOT, "scripts", "bench-report"), run_path, "--html", paths["report.html"],
                            "--trend", paths["trend.jsonl"], "--markdown", paths["PERFORMANCE.md"]],
                           check=True, capture_output=True)
        with open(paths["report.html"]) as f:
            page = f.read()
        self.assertEqual(page.count("<svg"), 2 + 2 * 2)  # CPU, memory; two charts per server and scenario
        self.assertNotIn("http://", page.replace('xmlns="http://www.w3.org/2000/svg"', ""))
        self.assertNotIn("https://", page)
        self.assertIn("limit 500", page)
        self.assertIn("fail: p99 600 ms &gt; 500 ms", page)
        with open(paths["trend.jsonl"]) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 2)
        trend = json.loads(lines[0])
        self.assertEqual(trend["ratios"], {"pap": "≥ 1.60×"})
        self.assertEqual(trend["ceilings"]["pap"]["freeradius"]["rate"], 1250)
        with open(paths["PERFORMANCE.md"]) as f:
            page = f.read()
        self.assertIn("| pap | ≥ 2,000/s | 1,250/s | ≥ 1.60× |", page)
        self.assertIn("servers on core 0, generator on core 1", page)
        self.assertIn("| 3 | 1,500 | 1,500 | 7 | 0 | 0.30 | 600.00 | 1200.0 | fail: p99 600 ms > 500 ms |", page)
        self.assertIn("| BM_ReceiveAccessRequest | 900.0 | 1,111,111 | — | 3.0 |", page)


if __name__ == "__main__":
    unittest.main(verbosity=2)
