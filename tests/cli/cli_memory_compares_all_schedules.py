#!/usr/bin/env python3
"""`projection memory --pipeline-schedule-algorithm all` projects the peak under every schedule
the layout can run (and says why the others cannot), instead of refusing; flags that only a
timed step can use are refused with the command that takes them."""
import harness

t = harness.Test()
pp2 = ["--pipeline_model_parallel_size", "2"]
run = t.sextant("projection", "memory", *pp2, "--pipeline-schedule-algorithm", "all", "--json")
report = t.json(run)
rows = {r["schedule"]: r for r in report.get("schedules", [])}
t.check(len(rows) == 10, f"expected a row per schedule kind, got {sorted(rows)}")
t.check(rows["interleaved"]["ran"] is False and "VPP" in rows["interleaved"]["skipped_because"],
        f"interleaved at VPP 1 must be skipped with the reason: {rows.get('interleaved')}")
t.check(rows["1f1b"]["ran"] and rows["gpipe"]["ran"], "1f1b and gpipe run at PP 2")
# GPipe holds every micro-batch's activations, 1F1B at most PP of them: never less memory.
t.check(rows["gpipe"]["peak_bytes"] >= rows["1f1b"]["peak_bytes"],
        f"gpipe {rows['gpipe']['peak_bytes']} < 1f1b {rows['1f1b']['peak_bytes']}")
# The 1F1B row is the same projection as asking for 1F1B alone.
alone = t.json(t.sextant("projection", "memory", *pp2, "--pipeline-schedule-algorithm", "1f1b",
                         "--json"))
t.check(alone["peak_bytes"] == rows["1f1b"]["peak_bytes"],
        f"1f1b alone {alone['peak_bytes']} != its row {rows['1f1b']['peak_bytes']}")

run = t.sextant("projection", "memory", "--chrome-trace", "step.json", expect_status=1)
t.expect_output(run, r"--chrome-trace, --pp-dump, --calibration, --trace, --compare, --scaling-nodes and --save-benchmark/--load-benchmark belong to the timed")
run = t.sextant("projection", "memory", "--scaling-nodes", "1,2", expect_status=1)
t.expect_output(run, r"--scaling-nodes and --save-benchmark/--load-benchmark belong to the timed step")
t.passed()
