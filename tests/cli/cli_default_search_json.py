#!/usr/bin/env python3
"""`sextant projection search --json` on one node: consistent counts, a sorted top 3 of
configurations that fit, each with a full projection, and a Pareto front."""
import harness

t = harness.Test()
run = t.sextant("projection", "search", "--target-nodes", "1", "--top", "3", "--json")
j = t.json(run)
c = j["counts"]
t.check(c["enumerated"] > 0, "nothing enumerated", run)
t.check(c["enumerated"] == c["pruned"] + c["invalid"] + c["out_of_memory"] + c["evaluated"],
        f"counts do not add up: {c}", run)
t.check(c["valid"] == c["out_of_memory"] + c["evaluated"], f"valid is not OOM + evaluated: {c}", run)
top = j["top"]
t.check(1 <= len(top) <= 3, f"{len(top)} entries in the top 3", run)
for i, entry in enumerate(top):
    t.check(entry["verdict"] != "OOM", f"top[{i}] does not fit", run)
    t.check(entry["full_projection"], f"top[{i}] has no full projection", run)
t.check(top[0]["tokens_per_s_per_gpu"] >= top[-1]["tokens_per_s_per_gpu"] > 0,
        "top entries are not sorted by positive throughput", run)
axes = {"tp", "pp", "vpp", "cp", "ep", "etp", "dp"}
t.check(set(top[0]["parallel"]) == axes, f"parallel keys {sorted(top[0]['parallel'])}", run)
t.check(j["pareto"], "empty Pareto front", run)
t.passed()
