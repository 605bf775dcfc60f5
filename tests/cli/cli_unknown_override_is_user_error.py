#!/usr/bin/env python3
"""A misspelt config override is a user error (status 1) that suggests the key meant."""
import harness

t = harness.Test()
run = t.sextant("projection", "memory", "--tensor_model_parallel_sizee", "2", expect_status=1)
t.expect_output(run, r"did you mean tensor_model_parallel_size")
t.passed()
