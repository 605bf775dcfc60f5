#!/usr/bin/env python3
"""`projection search --time-budget S` stops taking layer shapes after S seconds and says how
many it did not reach (in the console assumptions and in --json counts); without a budget
none are skipped. On a terminal, a progress line goes to stderr; into a pipe, nothing does."""
import os
import pty
import re
import subprocess

import harness

t = harness.Test()
full = t.json(t.sextant("projection", "search", "--target-nodes", "2", "--json"))
t.check(full["counts"]["layer_shapes_skipped"] == 0, "a search without a budget skipped shapes")

# A budget of a small part of the search: the shapes started in time finish, the rest are
# counted. (Far too small a budget is an error that says so.)
run = t.sextant("projection", "search", "--target-nodes", "2", "--time-budget", "0.000001",
                expect_status=1)
t.expect_output(run, r"--time-budget 1e-06 s ran out before any configuration that fits")
run = t.sextant("projection", "search", "--target-nodes", "2", "--time-budget", "0.01", "--json")
budget = t.json(run)
skipped = budget["counts"]["layer_shapes_skipped"]
t.check(skipped > 0, "a 1 µs budget reached every layer shape", run)
t.check(any(re.search(rf"--time-budget 0.01 s: {skipped} layer shapes .* not reached", a)
            for a in budget["assumptions"]), "the skipped shapes are not said", run)
t.check(budget["counts"]["enumerated"] < full["counts"]["enumerated"],
        "the budgeted search enumerated as much as the full one", run)
run = t.sextant("projection", "search", "--target-nodes", "2", "--time-budget", "0", expect_status=1)

# Progress: on a terminal only.
t.check("search:" not in t.sextant("projection", "search", "--target-nodes", "2").stderr,
        "progress was written into a pipe")
leader, follower = pty.openpty()
proc = subprocess.run([t.sextant_path, "projection", "search", "--target-nodes", "2"],
                      stdout=subprocess.DEVNULL, stderr=follower)
os.close(follower)
seen = b""
try:
    while True:
        chunk = os.read(leader, 65536)
        if not chunk:
            break
        seen += chunk
except OSError:
    pass
os.close(leader)
t.check(proc.returncode == 0, "the search on a terminal failed")
t.check(re.search(rb"\rsearch: \d+ of \d+ layer shapes, [\d.]+ s", seen) is not None,
        f"no progress line on the terminal: {seen[:200]!r}")
t.passed()
