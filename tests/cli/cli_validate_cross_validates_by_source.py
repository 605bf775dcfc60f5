#!/usr/bin/env python3
"""`sextant validate --cross-validate` scores each source with constants fitted without it."""
import os
import tempfile

import harness

t = harness.Test()
runs = t.corpus("validation/published_runs.csv")
with open(runs, encoding="utf-8") as f:
    lines = f.read().splitlines()
header, rows = lines[0], lines[1:]
picked = [r for r in rows if r.startswith(("torchtitan-T1-02-tps,", "llmfoundry-04,"))]
if len(picked) != 2:
    t.fail(f"expected two corpus rows, found {len(picked)}")
with tempfile.TemporaryDirectory() as tmp:
    table = os.path.join(tmp, "runs.csv")
    with open(table, "w", encoding="utf-8") as f:
        f.write(header + "\n")
        for family in ("alpha", "beta"):
            for i, row in enumerate(picked):
                f.write(f"{family}-{i}" + row[row.index(","):] + "\n")
    run = t.sextant("validate", table, "--cross-validate")
    t.expect_output(run, r"alpha\s+2\s")
    t.expect_output(run, r"beta\s+2\s")
    t.expect_output(run, r"held-out accuracy \(mean over 2 of 2 sources\)")
    both = t.sextant("validate", table, "--cross-validate", "--fit-efficiency", expect_status=1)
    # One source: no other source's rows to fit on, so no held-out score (not the search's
    # starting point presented as one).
    single = os.path.join(tmp, "single.csv")
    with open(single, "w", encoding="utf-8") as f:
        f.write(header + "\n")
        for i, row in enumerate(picked):
            f.write(f"alpha-{i}" + row[row.index(","):] + "\n")
    run = t.sextant("validate", single, "--cross-validate")
    t.expect_output(run, r"alpha\s+2\s+\S+\s+n/a\s+no rows to fit on")
    t.expect_output(run, r"no held-out accuracy")
    # A table without rows scores nothing: an error, not 0% error.
    empty = os.path.join(tmp, "empty.csv")
    with open(empty, "w", encoding="utf-8") as f:
        f.write(header + "\n")
    run = t.sextant("validate", empty, expect_status=1)
    t.expect_output(run, r"empty\.csv: the table has no rows")
    run = t.sextant("validate", empty, "--cross-validate", expect_status=1)
    t.expect_output(run, r"nothing to cross-validate")
t.passed()
