#!/usr/bin/env python3
"""`trace report --top N` shortens only the console: --csv and --json hold every kernel, as many
as TraceLens's own kernel summary of the same trace lists (an independent count)."""
import csv
import os
import tempfile

import harness

t = harness.Test()
base = t.corpus("traces/TraceLens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005")
trace = base + ".json.gz"
with open(os.path.join(base + "_perf_report_csvs", "kernel_summary.csv"), newline="") as f:
    reference = {row["Kernel name"] for row in csv.DictReader(f)}
t.check(len(reference) > 20, f"expected a long kernel summary, found {len(reference)} names")

with tempfile.TemporaryDirectory() as out:
    run = t.sextant("trace", "report", trace, "--top", "2", "--csv", out)
    t.expect_output(run, r"note: 2 of \d+ rows shown \(2 per rank\); every row is in --json")
    with open(os.path.join(out, "kernels.csv"), newline="") as f:
        rows = [row for row in csv.DictReader(f) if row["category"] != "memory"]
    names = {row["name"] for row in rows}
    t.check(names == reference,
            f"kernels.csv lists {len(names)} kernels, TraceLens {len(reference)}: "
            f"missing {sorted(reference - names)[:3]}, extra {sorted(names - reference)[:3]}")

run = t.sextant("trace", "report", trace, "--top", "1", "--json")
kernels = [k for k in t.json(run)["ranks"][0]["kernels"] if k["category"] != "memory"]
t.check(len(kernels) == len(reference),
        f"--json lists {len(kernels)} kernels, TraceLens {len(reference)}")
run = t.sextant("trace", "report", trace, "--top", "0", expect_status=1)
t.expect_output(run, r"--top: must be a whole number of at least 1, got .0.")
t.passed()
