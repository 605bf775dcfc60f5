#!/usr/bin/env python3
"""`sextant validate` scores the corpus's published runs and prints the mean over sources."""
import harness

t = harness.Test()
runs = t.corpus("validation/published_runs.csv")
run = t.sextant("validate", runs)
t.expect_output(run, r"overall \(mean of sources\)")
t.passed()
