#!/usr/bin/env python3
"""`trace diff DIR_A DIR_B` compares two runs rank by rank (traces paired in file-name order)
and reports the mean rank, with each rank's GPU time; runs of different rank counts are one
error line. A run against itself changes nothing on any rank."""
import os
import shutil
import tempfile

import harness

t = harness.Test()
ranks_dir = t.corpus("traces/llm_training/modded-nanogpt-8xh100")
run = t.sextant("trace", "diff", ranks_dir, ranks_dir, "--json")
diff = t.json(run)
t.check(len(diff["ranks"]) == 8, f"expected 8 ranks in the per-rank table, got {len(diff['ranks'])}", run)
t.check(sorted(r["rank"] for r in diff["ranks"]) == list(range(8)), "ranks 0-7 expected", run)
t.check(all(r["total_delta_percent"] == 0 for r in diff["ranks"]), "a run against itself moved", run)
t.check(all(k["status"] == "unchanged" for k in diff["kernels"]), "kernels changed against themselves", run)
t.expect_output(run, r"8 ranks compared rank by rank")
# Across ranks: the waits per rank and the collectives, each the same in both runs; rank 1
# waits least (5.5 ms: the others wait for it), as trace report's stragglers table says.
waits = {r["rank"]: r for r in diff["stragglers"]}
t.check(sorted(waits) == list(range(8)), f"straggler_diff ranks {sorted(waits)}", run)
t.check(all(r["wait_delta_percent"] == 0 for r in waits.values()), "waits moved against themselves", run)
t.check(abs(waits[1]["base_total_wait_us"] - 5478.9) < 0.1, f"rank 1 waits {waits[1]}", run)
t.check(len(diff["collective_sync"]) == 10 and
        all(c["base_count"] == c["new_count"] and c["latency_delta_percent"] == 0
            for c in diff["collective_sync"]), "collective_sync_diff moved against itself", run)
# The mean rank's span is the mean of the ranks' spans (report's rank_spread lists them).
report = t.json(t.sextant("trace", "report", ranks_dir, "--json"))
spans = [r["timeline_us"]["total"] for r in report["ranks"]]
mean_ms = sum(spans) / len(spans) / 1e3
total = [row for row in diff["timeline"] if row["type"] == "total_time"][0]
t.check(abs(total["base_ms"] - mean_ms) < 1e-3, f"mean span {total['base_ms']} != {mean_ms}", run)
# Traces that record their rank (distributedInfo) pair by it, whatever their names: here the
# name order (a, b, c, d) is ranks 3, 0, 1, 2 against rank0..rank3.
with tempfile.TemporaryDirectory() as d:
    base, new = os.path.join(d, "base"), os.path.join(d, "new")
    os.mkdir(base)
    os.mkdir(new)
    for r in range(4):
        shutil.copy(os.path.join(ranks_dir, f"rank{r}.json.gz"), base)
    for name, r in (("a", 3), ("b", 0), ("c", 1), ("d", 2)):
        shutil.copy(os.path.join(ranks_dir, f"rank{r}.json.gz"), os.path.join(new, name + ".json.gz"))
    run = t.sextant("trace", "diff", base, new, "--json")
    diff = t.json(run)
    t.check([r["rank"] for r in diff["ranks"]] == [0, 1, 2, 3], f"ranks {diff['ranks']}", run)
    t.check(all(r["total_delta_percent"] == 0 for r in diff["ranks"]),
            "traces of one rank were not paired with each other", run)
    os.remove(os.path.join(new, "b.json.gz"))
    shutil.copy(os.path.join(ranks_dir, "rank1.json.gz"), os.path.join(new, "b.json.gz"))
    run = t.sextant("trace", "diff", base, new, expect_status=1)
    t.expect_output(run, r"holds rank 1 twice")
with tempfile.TemporaryDirectory() as d:
    for name in ("rank0.json.gz", "rank1.json.gz"):
        shutil.copy(os.path.join(ranks_dir, name), d)
    run = t.sextant("trace", "diff", ranks_dir, d, expect_status=1)
    t.expect_output(run, r"compares two runs rank by rank: .* holds 8 traces and .* holds 2")
    t.check(len(run.stderr.strip().splitlines()) == 1, "expected one line on stderr", run)
t.passed()
