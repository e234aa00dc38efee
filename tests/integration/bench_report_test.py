#!/usr/bin/python3
"""The report of scripts/bench-report on a synthetic run: the HTML is one
self-contained file with inline SVG (no network), the trend file gains one
line, and the performance page states the conditions, both servers'
ceilings, their ratio, the lower-bound mark and every step's verdict; with
variants (acct against FreeRADIUS's detail file and rlm_sql, pap-sql cold
and cached) one ratio per pair, the exporter's lag per step and the goals.
Also the export-lag arithmetic of scripts/bench_sql.py on synthetic
samples."""

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_sql  # noqa: E402


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


def lag_step(index, records_max, seconds_max, records_end, kept):
    return {"index": index, "samples": 4, "lag_records_max": records_max, "lag_seconds_max": seconds_max,
            "lag_records_end": records_end, "lag_seconds_end": 0.1, "exported_in_step": 5000, "connected": True,
            "records_held_max": records_max, "sessions_end": 9000 * index, "kept_up": kept,
            "target_rate": 1000 * index}


def variant(server, scenario, name, text, rate, lower_bound=False, **extra):
    steps = [step(1, rate, rate, True)]
    result = {"server": server, "scenario": scenario, "variant": name, "variant_text": text,
              "report": report(server, steps, rate, lower_bound)}
    result["report"].update(extra)
    return result


VARIANTS = copy.deepcopy(RUN)
VARIANTS["conditions"]["postgresql"] = "PostgreSQL 15.8, synchronous_commit on"
VARIANTS["results"] += [
    variant("radiusward", "pap-sql", "cold", "cache off", 3000),
    variant("radiusward", "pap-sql", "cached", "cache warm", 30000),
    variant("freeradius", "pap-sql", "rlm_sql", "rlm_sql authorize", 2000),
    variant("radiusward", "acct", "export", "exporter into PostgreSQL", 24000, export={
        "steps": [lag_step(1, 900, 0.4, 100, True)], "at_ceiling": lag_step(1, 900, 0.4, 100, True),
        "drained_after_load_s": 1.5, "records_exported": 72000, "failures": 0}),
    variant("freeradius", "acct", "detail", "detail file", 8000),
    variant("freeradius", "acct", "sql", "rlm_sql into PostgreSQL, synchronous_commit on", 2000),
]
VARIANTS["results"][-3]["report"]["at_ceiling"]["processes"] = [
    {"pid": 2, "name": "radiusward", "role": "member-1", "cpu_avg_percent": 30, "cpu_max_percent": 40,
     "rss_peak_kib": 150 * 1024, "samples": 20},
    {"pid": 3, "name": "radiusward", "role": "gateway-1", "cpu_avg_percent": 30, "cpu_max_percent": 40,
     "rss_peak_kib": 40 * 1024, "samples": 20}]
VARIANTS["leader_kill"] = {"rate": 5000, "duration_s": 15, "gateways": 2, "killed": "member-1",
                           "new_leader": "member-2", "leader_seen_after_s": 0.6, "acknowledged": 75000,
                           "held_records": 75000, "checked_in": "export database in PostgreSQL", "acknowledged_missing": 0,
                           "held_twice": 0, "step": step(1, 5000, 5000, True, p99_us=400000)}
VARIANTS["leader_kill_no_export"] = dict(VARIANTS["leader_kill"], checked_in="records every member holds",
                                         step=step(1, 5000, 5000, True, p99_us=700000))


def render(test, run):
    folder = tempfile.mkdtemp(prefix="rw-bench-report-")
    test.addCleanup(shutil.rmtree, folder, True)
    run_path = os.path.join(folder, "run.json")
    with open(run_path, "w") as f:
        json.dump(run, f)
    paths = {k: os.path.join(folder, k) for k in ("report.html", "trend.jsonl", "PERFORMANCE.md")}
    subprocess.run([os.path.join(ROOT, "scripts", "bench-report"), run_path, "--html", paths["report.html"],
                    "--trend", paths["trend.jsonl"], "--markdown", paths["PERFORMANCE.md"]],
                   check=True, capture_output=True)
    out = {}
    for key, path in paths.items():
        with open(path) as f:
            out[key] = f.read()
    return out


class BenchReportVariants(unittest.TestCase):
    def test_issue_15_goal_rows(self):
        """The exported ceiling (the highest passing acct step at which the
        exporter kept up) beside the acknowledged one, mixed against its
        goal, and the gateway accounting path against 771 ns and 1.3x its
        two-MD5 floor, from the run's Google Benchmarks."""
        run = copy.deepcopy(VARIANTS)
        acct = next(r for r in run["results"] if r["scenario"] == "acct" and r["server"] == "radiusward")
        steps = [step(1, 4000, 4000, True), step(2, 8000, 8000, True), step(3, 16000, 12000, False, "lost 7"),
                 step(4, 12000, 12000, True)]
        acct["report"].update(steps=steps, at_ceiling=steps[3],
                              ceiling={"rate": 12000, "lower_bound": False, "text": "12,000/s"})
        lag = [lag_step(i + 1, 10, 0.1, 0, kept) for i, kept in enumerate((True, True, True, False))]
        for entry, rate in zip(lag, (4000, 8000, 16000, 12000)):
            entry["target_rate"] = rate
        acct["report"]["export"].update(steps=lag, at_ceiling=lag[3])
        run["results"].append(variant("radiusward", "mixed", "export", "exporter into PostgreSQL", 21000))
        run["google_benchmark"]["gateway_bench"] = [
            {"name": "BM_AccountingReceivePath", "real_time_ns": 1200, "cpu_time_ns": 1150,
             "items_per_second": None, "bytes_per_second": None},
            {"name": "BM_AccountingProtocolFloor", "real_time_ns": 420, "cpu_time_ns": 400,
             "items_per_second": None, "bytes_per_second": None},
            {"name": "BM_FullReceivePath", "real_time_ns": 1300, "cpu_time_ns": 1250,
             "items_per_second": None, "bytes_per_second": None, "counters": {"allocs/req": 1.0}}]
        run["google_benchmark"]["gateway_bench"][0]["counters"] = {"allocs/req": 0.0004}
        page = render(self, run)["PERFORMANCE.md"]
        # A steady allocation on either path (1 per request on the PAP path here) misses the goal.
        self.assertIn("| no heap allocation per request on the accounting and PAP paths | 0.000 and 1.000 "
                      "allocations per request | **no** |", page)
        run["google_benchmark"]["gateway_bench"][2]["counters"] = {"allocs/req": 0.0}
        self.assertIn("| no heap allocation per request on the accounting and PAP paths | 0.000 and 0.000 "
                      "allocations per request | yes |", render(self, run)["PERFORMANCE.md"])
        # A run from before the counters were kept says so.
        self.assertIn("| no heap allocation per request on the accounting and PAP paths | not recorded in this "
                      "run | — |", render(self, VARIANTS)["PERFORMANCE.md"])
        # 16,000/s kept up but failed: the exported ceiling is 8,000/s.
        self.assertIn("| exported ceiling = acknowledged ceiling (acct, export) | "
                      "exporter kept up to 8,000/s against 12,000/s acknowledged | **no** |", page)
        self.assertIn("| mixed 70/30 ≥ 20,000/s | 21,000/s | yes |", page)
        self.assertIn("| gateway accounting path ≤ 771 ns (CPU, one core) | 1150 ns | **no** |", page)
        self.assertIn("| gateway accounting path ≤ 1.3× its protocol floor (two MD5s) | 2.88× (floor 400 ns) | **no** |",
                      page)
        self.assertIn("## Goals (issues 5 and 15)", page)

    def test_one_ratio_per_pair_of_variants(self):
        out = render(self, VARIANTS)
        page = out["PERFORMANCE.md"]
        self.assertIn("| pap-sql: cold vs rlm_sql | 3,000/s | 2,000/s | 1.50× |", page)
        self.assertIn("| pap-sql: cached vs rlm_sql | 30,000/s | 2,000/s | 15.00× |", page)
        self.assertIn("| acct: export vs detail | 24,000/s | 8,000/s | 3.00× |", page)
        self.assertIn("| acct: export vs sql | 24,000/s | 2,000/s | 12.00× |", page)
        self.assertIn("### radiusward, pap-sql (cold): 3,000/s", page)
        self.assertIn("- freeradius acct (sql): rlm_sql into PostgreSQL, synchronous_commit on.", page)
        self.assertIn("- PostgreSQL: PostgreSQL 15.8, synchronous_commit on.", page)
        trend = json.loads(out["trend.jsonl"].splitlines()[0])
        self.assertEqual(trend["ratios"]["acct: export vs sql"], "12.00×")
        self.assertEqual(trend["ceilings"]["pap-sql (cached)"]["radiusward"]["rate"], 30000)
        self.assertEqual(trend["export_lag_at_ceiling"], [{"lag_records_max": 900, "lag_seconds_max": 0.4,
                                                          "kept_up": True}])
        self.assertIn("Export to PostgreSQL", out["report.html"])

    def test_tls_cost_next_to_its_plaintext_twin(self):
        run = copy.deepcopy(VARIANTS)
        run["results"].append(variant("radiusward", "acct", "export-plaintext", "as export, plaintext", 25000))
        page = render(self, run)["PERFORMANCE.md"]
        self.assertIn("## What TLS costs the accounting ceiling (issue 10)", page)
        self.assertIn("| acct (export) | 24,000/s | 25,000/s | -4.0 % |", page)
        # Without a plaintext twin there is no TLS section.
        self.assertNotIn("What TLS costs", render(self, VARIANTS)["PERFORMANCE.md"])

    def test_each_ceiling_beside_what_held_for_longer(self):
        run = copy.deepcopy(VARIANTS)
        acct = next(r for r in run["results"] if r["server"] == "radiusward" and r["scenario"] == "acct")
        held = dict(step(1, 21600, 21600, True), duration_s=30, export=lag_step(1, 900, 0.4, 120, True),
                    by_second={"seconds": 31, "slow_seconds": 0, "first_slow": None,
                               "worst": {"second": 3, "answered": 21600, "p99_ms": 40.0}})
        acct["report"]["hold"] = {"step_s": 30.0, "rate": 21600, "steps": [
            dict(step(1, 24000, 23000, False, "p99 900 ms > 500 ms", 900000), duration_s=30,
                 by_second={"seconds": 31, "slow_seconds": 4, "first_slow": 0,
                            "worst": {"second": 1, "answered": 24000, "p99_ms": 1087.3}}), held]}
        pap = next(r for r in run["results"] if r["server"] == "radiusward" and r["scenario"] == "pap")
        pap["report"]["hold"] = {"step_s": 30.0, "rate": None, "steps": [
            {"target_rate": 2000, "passed": False, "reason": "the generator failed (1)"}]}
        page = render(self, run)["PERFORMANCE.md"]
        self.assertIn("## Ceilings held for 30 s (issue 15)", page)
        self.assertIn("| acct (export) | 24,000/s | 21,600/s | 24,000/s: fail (p99 900 ms > 500 ms), p99 900 ms, "
                      "lost 7, 4 of 31 s with p99 over 500 ms from second 0 (worst: second 1, 1087 ms); "
                      "21,600/s: pass, p99 2 ms, lost 0, export 120 waiting, every second's p99 under 500 ms |",
                      page)
        self.assertIn("| pap | ≥ 2,000/s | none of the tries | 2,000/s: fail (the generator failed (1)), p99 0 ms, "
                      "lost 0 |", page)
        # Without an exporter each hold step ran on a fresh deployment, and says so.
        pap["report"]["hold"]["fresh_deployment"] = True
        self.assertIn("| pap (fresh deployment) | ≥ 2,000/s | none of the tries |",
                      render(self, run)["PERFORMANCE.md"])
        # A run without holds (every run before them) has no such section.
        self.assertNotIn("Ceilings held", render(self, VARIANTS)["PERFORMANCE.md"])

    def test_pap_beside_the_floor_server_and_freeradius(self):
        run = dict(RUN, results=RUN["results"] + [
            {"server": "floor", "scenario": "pap",
             "report": report("floor", [step(1, 1000, 1000, True), step(2, 4000, 4000, True),
                                        step(3, 5000, 4000, False, "lost 7")], 4000, False)}])
        page = render(self, run)["PERFORMANCE.md"]
        self.assertIn("| authentication (PAP) ≥ 0.5× the floor server | "
                      "0.50× (radiusward ≥ 2,000/s, floor 4,000/s, FreeRADIUS 1,250/s) | yes |", page)
        # The floor has no FreeRADIUS twin: the ratio table keeps one pap row.
        self.assertEqual(page.count("| pap | ≥ 2,000/s | 1,250/s | ≥ 1.60× |"), 1)

    def test_export_lag_table_and_summary(self):
        page = render(self, VARIANTS)["PERFORMANCE.md"]
        self.assertIn("radiusward, acct (export): at the ceiling (24,000/s) the exporter kept up (lag at most 900 "
                      "records / 0.4 s, 100 at the step's end); nothing was left to export 1.5 s after the search "
                      "ended.", page)
        self.assertIn("| 1 | 24,000 | pass | 900 | 100 | 0.4 | 5,000 | 900 | 9,000 | yes |", page)

    def test_goals_beside_freeradius_and_why_a_goal_is_not_met(self):
        """Each goal row carries FreeRADIUS's figure for the same question
        from the same run (or why there is none), and a goal not met names
        the docs/ section that says why; a goal met names none."""
        page = render(self, VARIANTS)["PERFORMANCE.md"]
        self.assertIn("| goal | measured | met | FreeRADIUS, same run | why not met |", page)
        self.assertIn("| accounting ≥ 24,000/s with majority fsync | 24,000/s | yes | detail file 8,000/s; "
                      "rlm_sql 2,000/s |  |", page)
        self.assertIn("| accounting ≥ 8× FreeRADIUS detail file | 3.00× | **no** | 8,000/s | [accounting.md: Issue "
                      "15's goals on one shared core](accounting.md#issue-15s-goals-on-one-shared-core) |", page)
        self.assertIn("| leader kill: longest wait < 1 s | 800 ms | yes | — (one process: no failover) |  |", page)
        self.assertIn("| member ≤ 128 MiB resident at the ceiling | 150.0 MiB (largest: member-1 in acct (export)) | "
                      "**no** | radiusd 29.3 MiB (largest: acct (sql)) | [limits.md: Member memory budget]"
                      "(limits.md#member-memory-budget) |", page)
        self.assertIn("| gateway accounting path ≤ 771 ns (CPU, one core) | not run | — | — (not measured: no "
                      "benchmark of radiusd's code path alone) |  |", page)
        html_page = render(self, VARIANTS)["report.html"]
        self.assertIn("<th>FreeRADIUS, same run</th><th>why not met</th>", html_page)
        self.assertIn("<td>docs/limits.md#member-memory-budget</td>", html_page)

    def test_every_reason_names_a_section_that_exists(self):
        """The why-not-met links of scripts/bench-report point at headings
        of docs/ as they are (GitHub's anchors: lower case, punctuation
        dropped, spaces as hyphens)."""
        with open(os.path.join(ROOT, "scripts", "bench-report")) as f:
            links = re.findall(r"\]\(([a-z_]+\.md)#([a-z0-9-]+)\)", f.read())
        self.assertGreaterEqual(len(links), 6)
        for doc, anchor in links:
            with open(os.path.join(ROOT, "docs", doc)) as f:
                headings = [line.lstrip("#").strip() for line in f if line.startswith("#")]
            slugs = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
            self.assertIn(anchor, slugs, "%s#%s names no heading" % (doc, anchor))

    def test_goals(self):
        page = render(self, VARIANTS)["PERFORMANCE.md"]
        self.assertIn("| accounting ≥ 24,000/s with majority fsync | 24,000/s | yes |", page)
        self.assertIn("| accounting ≥ 8× FreeRADIUS rlm_sql into PostgreSQL | 12.00× | yes |", page)
        self.assertIn("| accounting ≥ 8× FreeRADIUS detail file | 3.00× | **no** |", page)
        self.assertIn("| authentication (PAP) ≥ 2.5× FreeRADIUS users file | 1.60× | **no** |", page)
        self.assertIn("| authentication (PAP) ≥ 0.5× the floor server | not run |", page)
        self.assertIn("| leader kill: longest wait < 1 s | 800 ms | yes |", page)
        self.assertIn("| member ≤ 128 MiB resident at the ceiling | 150.0 MiB (largest: member-1 in acct (export)) | **no** |", page)
        self.assertNotIn("without an exporter (not a goal", page)
        # Members that hold every record (no exporter) have their own row, outside the goal.
        run = copy.deepcopy(VARIANTS)
        no_export = variant("radiusward", "acct", "no-export", "no exporter", 30000)
        no_export["report"]["at_ceiling"]["processes"] = [
            {"pid": 4, "name": "radiusward", "role": "member-2", "cpu_avg_percent": 30, "cpu_max_percent": 40,
             "rss_peak_kib": 300 * 1024, "samples": 20}]
        run["results"].append(no_export)
        page = render(self, run)["PERFORMANCE.md"]
        self.assertIn("| member ≤ 128 MiB resident at the ceiling | 150.0 MiB (largest: member-1 in acct (export)) | **no** |", page)
        self.assertIn("| member resident at the ceiling without an exporter (not a goal: every record held, within "
                      "the bench's raised held bounds) | 300.0 MiB (largest: member-2 in acct (no-export)) | — |", page)
        # The lone gateway of the authentication runs (no role) counts as a gateway.
        self.assertIn("| gateway ≤ 64 MiB resident at the ceiling | 40.0 MiB (largest: gateway-1 in acct (export)) | yes |", page)
        self.assertIn("looked for in the export database in PostgreSQL.", page)
        self.assertIn("| leader kill (members without an exporter): longest wait < 1 s | 1400 ms | **no** |", page)
        self.assertIn("## Leader killed under load (members without an exporter)", page)


def overload_run():
    """VARIANTS with an overload phase and a session sweep (scripts/run-bench
    overload(), session_sweep()), figures chosen to meet some goals and miss
    others."""
    run = copy.deepcopy(VARIANTS)
    mib = 1024
    run["overload"] = {
        "factor": 1.5, "rate": 36000, "ceiling_rate": 24000, "ceiling_from": "the acct search (export)",
        "duration_s": 60.0, "rest_s": 60.0, "after": "at rest (no load)", "sample_interval_s": 0.5, "sockets": 256,
        "exporting": True, "gateways": 2, "sent": 2160000, "answered": 2150000, "lost": 10000,
        "retransmissions": 5000, "acknowledged": 2150000, "held_or_exported": 2150100,
        "checked_in": "export database in PostgreSQL", "acknowledged_missing": 0, "held_twice": 0,
        "step": dict(step(1, 36000, 35800, False, "lost 10000", 900000), identifiers_exhausted=0,
                     invalid=3, invalid_by_reason={"bad Response Authenticator": 3}),
        "processes": {
            "member-1": {"first_kib": 24 * mib, "peak_load_kib": 150 * mib, "peak_rest_kib": 151 * mib,
                         "last_kib": 120 * mib, "goal_kib": 128 * mib, "after_within_goal": True},
            "member-2": {"first_kib": 24 * mib, "peak_load_kib": 160 * mib, "peak_rest_kib": 160 * mib,
                         "last_kib": 140 * mib, "goal_kib": 128 * mib, "after_within_goal": False},
            "gateway-1": {"first_kib": 50 * mib, "peak_load_kib": 60 * mib, "peak_rest_kib": 60 * mib,
                          "last_kib": 58 * mib, "goal_kib": 64 * mib, "after_within_goal": True}},
        "members": {"member-1": {"records_held_max": 64000, "held_bytes_max": 16000000, "raft_log_bytes_max": 33000000,
                                 "records_held_last": 0, "sessions_last": 80000, "snapshot_max_us_last": 450000,
                                 "snapshot_child_max_us_last": 1200000}},
        "series": [[0.5, "load", {"member-1": 24 * mib, "gateway-1": 50 * mib}, {"member-1": 0}],
                   [1.0, "rest", {"member-1": 150 * mib, "gateway-1": 60 * mib}, {"member-1": 64000}]]}

    def row(sessions, clients, rate, rss_opened_mib, passed=True):
        members = {"member-%d" % i: {"sessions": sessions, "held_bytes": sessions * 300, "records_held": sessions,
                                     "raft_log_bytes": 1000, "snapshot_max_us": 2000, "snapshot_child_max_us": 3000 * i}
                   for i in (1, 2, 3)}
        return {"sessions": sessions, "clients": clients, "open_rate": 10000, "rate": 8000, "duration_s": 20,
                "open_s": sessions / 10000, "open": dict(step(1, 10000, 10000, True), lost=0),
                "step": step(1, 8000, rate, passed, "" if passed else "p99 900 ms > 500 ms"),
                "rss_idle_kib": {"member-1": 24 * mib, "gateway-1": 50 * mib},
                "rss_opened_kib": {"member-1": rss_opened_mib * mib, "gateway-1": 52 * mib},
                "rss_after_kib": {"member-1": rss_opened_mib * mib + mib, "gateway-1": 53 * mib},
                "members_opened": members, "members_after": members}
    run["sweep"] = {"rate": 8000, "duration_s": 20, "open_rate": 10000, "exporter": "none", "rows": [
        row(1000, 1, 8000, 30), row(1000000, 1, 6000, 30 + 1000, passed=False), row(1000, 10000, 8000, 31)]}
    return run


class OverloadAndSweepReport(unittest.TestCase):
    def test_goal_rows(self):
        page = render(self, overload_run())["PERFORMANCE.md"]
        self.assertIn("| member ≤ 128 MiB 60 s past 1.5× the ceiling | 140.0 MiB (largest: member-2; peak during "
                      "the overload 160.0 MiB) | **no** |", page)
        self.assertIn("| gateway ≤ 64 MiB 60 s past 1.5× the ceiling | 58.0 MiB (largest: gateway-1; peak during "
                      "the overload 60.0 MiB) | yes |", page)
        self.assertIn("| nothing lost at 1.5× the ceiling | 10,000 of 2,160,000 requests never answered after "
                      "retransmissions; 0 acknowledged records missing from the export database in PostgreSQL | "
                      "**no** |", page)
        # (1,030 - 30 MiB) over 999,000 sessions.
        self.assertIn("| cost flat from 1,000 to 1,000,000 sessions: throughput ratio ≥ 0.9, RSS per session | "
                      "0.75 (6,000/s against 8,000/s, a step failed); member RSS 1050 bytes per session (with its "
                      "held Start record: no exporter) | **no** |", page)
        self.assertIn("| 10,000 NAS clients in clients.conf: throughput ratio ≥ 0.9 | 1.00 (8,000/s against "
                      "8,000/s with one client) | yes |", page)

    def test_sections(self):
        page = render(self, overload_run())["PERFORMANCE.md"]
        self.assertIn("## Overload: 1.5× the accounting ceiling for 60 s (issue 15)", page)
        self.assertIn("| member-2 | 24.0 MiB | 160.0 MiB | 160.0 MiB | 140.0 MiB | 128.0 MiB | **no** |", page)
        self.assertIn("| member-1 | 64,000 | 16,000,000 | 33,000,000 | 0 | 80,000 | 450 ms | 1200 ms |", page)
        self.assertIn("- Of the lost, 0 were never sent for want of a free Identifier (256 sockets); 3 answers were "
                      "invalid (3 bad Response Authenticator).", page)
        self.assertIn("## Cost against live sessions and NAS clients (issue 15)", page)
        self.assertIn("| 1,000,000 | 1 | 100.00 s | 0 | 6,000/s (fail: p99 900 ms > 500 ms) | 2.0 ms | 7 | "
                      "24.0 MiB | 1030.0 MiB | 1031.0 MiB | 53.0 MiB | 1,000,000 | 300,000,000 | 2 ms | 9 ms |", page)
        self.assertIn("| 1,000 | 10,000 |", page)
        html_page = render(self, overload_run())["report.html"]
        self.assertIn("Overload: RSS every 0.5 s through 60 s at 36,000/s and 60 s at rest", html_page)
        # Runs without the phases have neither section nor goal rows.
        self.assertNotIn("Overload: RSS", render(self, VARIANTS)["report.html"])
        plain = render(self, VARIANTS)["PERFORMANCE.md"]
        for text in ("## Overload", "## Cost against live sessions", "past 1.5×", "cost flat from"):
            self.assertNotIn(text, plain)


class ExportLag(unittest.TestCase):
    def export(self, lag, seconds, exported, connected=True):
        return {"active": True, "connected": connected, "lag_records": lag, "lag_seconds": seconds,
                "records_exported": exported}

    def test_export_of_picks_the_active_exporter_with_its_ledger_figures(self):
        idle = {"export": {"active": False, "lag_records": 0}, "records_held": 1}
        leader = {"export": self.export(7, 0.2, 100), "records_held": 7, "held_bytes": 700, "sessions": 3}
        self.assertIsNone(bench_sql.export_of([idle, None]))
        found = bench_sql.export_of([None, idle, leader])
        self.assertEqual((found["lag_records"], found["records_held"], found["sessions"]), (7, 7, 3))

    def test_answers_by_second_of_their_send_time(self):
        # bench run --acked-log lines: session, status, answer wall time and
        # wait (us). Second 0 (sent at 100 s): two quick answers; second 1:
        # 100 answers, one of them 900 ms late (its p99); second 2: one
        # answered 2 s after it was sent; a short line is skipped.
        lines = ["s0 Start 100100000 1000", "s1 Start 100900000 2000"]
        lines += ["s%d Interim-Update %d 3000" % (n, 101000000 + n * 1000 + 3000) for n in range(99)]
        lines += ["late Stop 101900000 900000", "slow Stop 104500000 2000000", "short"]
        seconds = bench_sql.answers_by_second(lines)
        self.assertEqual(seconds["seconds"], 3)
        self.assertEqual((seconds["slow_seconds"], seconds["first_slow"]), (2, 1))
        self.assertEqual(seconds["worst"], {"second": 2, "answered": 1, "p99_ms": 2000.0})
        quick = bench_sql.answers_by_second(lines[:2])
        self.assertEqual((quick["slow_seconds"], quick["first_slow"], quick["worst"]["p99_ms"]), (0, None, 2.0))
        self.assertIsNone(bench_sql.answers_by_second(["short"]))

    def test_samples_fall_into_the_step_they_were_taken_in(self):
        samples = [(0.5, self.export(10, 0.1, 100)), (1.0, self.export(500, 1.5, 200)),
                   (1.6, self.export(20, 0.2, 900)), (2.5, None), (3.0, self.export(4000, 3.0, 1000))]
        steps = bench_sql.summarize_lag(samples, [1.0, 2.0, 3.0])
        self.assertEqual([s["samples"] for s in steps], [2, 1, 2])
        self.assertEqual((steps[0]["lag_records_max"], steps[0]["lag_seconds_max"], steps[0]["lag_records_end"]),
                         (500, 1.5, 500))
        self.assertIsNone(steps[0]["exported_in_step"])  # no earlier figure to subtract
        self.assertEqual(steps[1]["exported_in_step"], 700)
        self.assertEqual(steps[2]["exported_in_step"], 100)
        # Another member took over the export: its own count starts again.
        moved = bench_sql.summarize_lag([(1.0, self.export(0, 0, 5000)), (2.0, self.export(0, 0, 300))], [1.0, 2.0])
        self.assertIsNone(moved[1]["exported_in_step"])
        self.assertTrue(moved[1]["exporter_moved"])
        self.assertFalse(moved[0]["exporter_moved"])
        self.assertFalse(steps[2]["connected"])  # a sample without an exporter
        self.assertTrue(steps[1]["connected"])

    def test_kept_up(self):
        (step,) = bench_sql.summarize_lag([(1.0, self.export(1500, 0.5, 10))], [1.0])
        self.assertTrue(bench_sql.kept_up(step, rate=1000, step_s=5))
        self.assertFalse(bench_sql.kept_up(step, rate=500, step_s=5))  # 3 s of records waiting at the end
        (slow,) = bench_sql.summarize_lag([(1.0, self.export(10, 2.5, 10))], [1.0])
        self.assertFalse(bench_sql.kept_up(slow, rate=1000, step_s=5))
        (down,) = bench_sql.summarize_lag([(1.0, self.export(10, 0.1, 10, connected=False))], [1.0])
        self.assertFalse(bench_sql.kept_up(down, rate=1000, step_s=5))
        (empty,) = bench_sql.summarize_lag([], [1.0])
        self.assertIsNone(bench_sql.kept_up(empty, rate=1000, step_s=5))


class GoogleBenchmarkCounters(unittest.TestCase):
    def test_user_counters_are_kept_beside_the_times(self):
        """scripts/run-bench keeps each benchmark's user counters (the
        allocations per request of gateway_bench) with its times."""
        import importlib.machinery
        import importlib.util
        loader = importlib.machinery.SourceFileLoader("run_bench", os.path.join(ROOT, "scripts", "run-bench"))
        spec = importlib.util.spec_from_loader("run_bench", loader)
        run_bench = importlib.util.module_from_spec(spec)
        loader.exec_module(run_bench)
        entries = run_bench.gbench_entries({"benchmarks": [
            {"name": "BM_AccountingReceivePath", "run_type": "iteration", "iterations": 1000, "real_time": 1.2,
             "cpu_time": 1.1, "time_unit": "us", "allocs/req": 0.0, "threads": 1},
            {"name": "BM_Md5Floor", "run_type": "iteration", "iterations": 10, "real_time": 300, "cpu_time": 299,
             "time_unit": "ns", "items_per_second": 5.0},
            {"name": "BM_Md5Floor_mean", "run_type": "aggregate", "real_time": 300, "cpu_time": 299,
             "time_unit": "ns"}]})
        self.assertEqual(len(entries), 2)
        self.assertEqual(entries[0]["counters"], {"allocs/req": 0.0})
        self.assertAlmostEqual(entries[0]["cpu_time_ns"], 1100.0)
        self.assertNotIn("counters", entries[1])
        self.assertEqual(entries[1]["items_per_second"], 5.0)


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
