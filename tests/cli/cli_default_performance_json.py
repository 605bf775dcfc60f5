#!/usr/bin/env python3
"""`sextant projection both --json`: a positive iteration time, an MFU below 1, every term."""
import harness

t = harness.Test()
run = t.sextant("projection", "both", "--json")
p = t.json(run)["performance"]
t.check(p["iteration_time_ms"] > 0, f"iteration_time_ms is {p['iteration_time_ms']}", run)
t.check(0 < p["mfu"] < 1, f"mfu {p['mfu']} is not in (0, 1)", run)
terms = {"compute", "pipeline_bubble", "tp_comm", "cp_comm", "ep_comm", "pp_comm",
         "dp_comm_exposed", "optimizer"}
missing = terms - set(p["breakdown_ms"])
t.check(not missing, f"breakdown_ms lacks {sorted(missing)}", run)
t.passed()
