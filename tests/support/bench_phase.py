"""What the tests of a bench phase run alone (`RW_BENCH_ONLY=...
scripts/run-bench`) share: the phase run at a tiny scale on a copy of the
repository's base run, with RW_BENCH_DOCS=0 so that the repository's page and
run are left alone, and the report made from its result."""

import glob
import os
import shutil
import subprocess
import tempfile

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE = os.path.join(ROOT, "bench", "latest-run.json")


class PhaseRun:
    """Runs the phases `only` (a list) of scripts/run-bench with `binary`
    and `env` (RW_BENCH_* knobs, unpinned and not niced) into a fresh
    folder; `done` is the finished process, `run_path` the result's JSON
    (None when there is not exactly one), `base` the copy of the base run."""

    def __init__(self, binary, only, env, timeout=280):
        self.out = tempfile.mkdtemp(prefix="rw-bench-%s-test-" % "-".join(only))
        self.base = os.path.join(self.out, "base.json")
        shutil.copyfile(BASE, self.base)
        full = dict(os.environ, RW_BENCH_ONLY=" ".join(only), RW_BENCH_BASE=self.base, RW_BENCH_OUT=self.out,
                    RW_BENCH_DOCS="0", RW_BENCH_NICE="0", RW_BENCH_PIN="0", **env)
        self.done = subprocess.run([os.path.join(ROOT, "scripts", "run-bench"), os.path.dirname(binary)], env=full,
                                   capture_output=True, text=True, timeout=timeout)
        found = glob.glob(os.path.join(self.out, "%s-*.json" % "-".join(only)))
        self.run_path = found[0] if len(found) == 1 else None

    def report(self, run_path, name):
        """The Markdown page scripts/bench-report makes from `run_path`."""
        page = os.path.join(self.out, name)
        subprocess.run([os.path.join(ROOT, "scripts", "bench-report"), run_path, "--markdown", page], check=True,
                       capture_output=True)
        with open(page) as f:
            return f.read()

    def close(self):
        shutil.rmtree(self.out, ignore_errors=True)


def without_section(page, heading):
    """`page` without the section that starts at `heading`."""
    if heading not in page:
        return page
    start = page.index(heading)
    end = page.index("\n## ", start + 1) + 1
    return page[:start] + page[end:]
