#!/usr/bin/env python3
"""A search where no configuration fits fails and reports the smallest peak memory it saw."""
import harness

t = harness.Test()
run = t.sextant("projection", "search", "--target-nodes", "1", "--num_layers", "600",
                expect_status=1)
t.expect_output(run, r"smallest peak memory seen is .* GiB, with TP ")
t.passed()
