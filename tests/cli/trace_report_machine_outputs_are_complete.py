#!/usr/bin/env python3
"""`trace report --top N` shortens only the console: --csv and --json hold every kernel, as many
as TraceLens's own kernel summary of the same trace lists (an independent count). With several
ranks, every table the --csv directory holds is in --json too (per rank or over all ranks)."""
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
# Two ranks of the DLRM run: each CSV table is a JSON key, at the top (tables over all ranks) or
# in every rank's object; the ranks table's own columns are each rank's fields.
dlrm = t.corpus("traces/param/dlrm_kineto_8rank")
pair = [os.path.join(dlrm, f) for f in sorted(os.listdir(dlrm))[:2]]
with tempfile.TemporaryDirectory() as out:
    t.sextant("trace", "report", *pair, "--csv", out)
    tables = {name[:-4] for name in os.listdir(out) if name.endswith(".csv")}
    j = t.json(t.sextant("trace", "report", *pair, "--json"))
    per_rank = set(j["ranks"][0].keys())
    missing = sorted(n for n in tables - {"ranks"} if n not in j and n not in per_rank and
                     not (n == "iterations" and "iteration_times" in per_rank))
    t.check(not missing, f"--csv tables missing from --json: {missing}")
    for key in ("world_size", "events", "input_bytes", "iterations", "gpu", "file"):
        t.check(key in j["ranks"][0], f"--json ranks lack {key}")
run = t.sextant("trace", "report", trace, "--top", "0", expect_status=1)
t.expect_output(run, r"--top: must be a whole number of at least 1, got .0.")
t.passed()
