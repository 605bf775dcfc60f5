#!/usr/bin/env python3
"""`trace report DIR` reads the trace files directly inside DIR as ranks, in name order (HTA's
trace_dir); a directory without any is one error line naming it. `trace merge DIR` takes the
same files. A pipeline dump's files are named as such."""
import os
import tempfile

import harness

t = harness.Test()
ranks_dir = t.corpus("traces/llm_training/modded-nanogpt-8xh100")
run = t.sextant("trace", "report", ranks_dir, "--json")
report = t.json(run)
t.check(len(report["ranks"]) == 8, f"expected 8 ranks, got {len(report['ranks'])}", run)
files = [r["file"] for r in report["ranks"]]
t.check(files == sorted(files), f"ranks not in name order: {files}", run)
empty = t.corpus("traces/kineto")
run = t.sextant("trace", "report", empty, expect_status=1)
t.expect_output(run, r"kineto: a directory with no trace files directly inside")
t.check(len(run.stderr.strip().splitlines()) == 1, "expected one line on stderr", run)
# A pipeline dump is JSON but not a trace: its files, or its directory, are named as the dump
# that `pp view` shows.
dump = t.corpus("pp_dumps/gpu8_layer64_gbs16/pp8")
for argv in (["report", os.path.join(dump, "pp_rank_0.json")], ["report", dump],
             ["diff", dump, os.path.join(dump, "config.json")]):
    run = t.sextant("trace", *argv, expect_status=1)
    t.expect_output(run, r"one file of the pipeline dump .*pp8, not a profiler trace: "
                         r"`sextant pp view .*pp8` shows the dump")
    t.check(len(run.stderr.strip().splitlines()) == 1, "expected one line on stderr", run)
with tempfile.TemporaryDirectory() as d:
    merged = os.path.join(d, "merged.json.gz")
    run = t.sextant("trace", "merge", ranks_dir, "-o", merged, "--json")
    t.check(t.json(run)["files"] == 8, "trace merge DIR did not take the 8 rank files", run)
t.passed()
