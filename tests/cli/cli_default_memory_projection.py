#!/usr/bin/env python3
"""`sextant projection memory --json` on the default example: a verdict, integer stage totals."""
import harness

t = harness.Test()
run = t.sextant("projection", "memory", "--json")
j = t.json(run)
t.check(j["verdict"] in ("FITS", "AT-RISK", "OOM"), f"unknown verdict {j['verdict']!r}", run)
t.check(j["stages"], "no pipeline stages in the report", run)
for i, stage in enumerate(j["stages"]):
    t.check(isinstance(stage["total_bytes"], int),
            f"stage {i}: total_bytes {stage['total_bytes']!r} is not an integer", run)
t.passed()
