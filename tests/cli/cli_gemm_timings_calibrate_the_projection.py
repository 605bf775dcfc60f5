#!/usr/bin/env python3
"""Measured GEMMs re-fit the efficiency table and the projection says so; a missing file is a
user error naming it."""
import harness

t = harness.Test()
csv = "tests/data/gemm/mi300x_tracelens_gemms.csv"
run = t.sextant("projection", "performance", "--gemm-timings", csv)
t.expect_output(run, r"efficiency table: MI300X table fitted on 3 measured kernels from " + csv)
run = t.sextant("projection", "performance", "--gemm-timings", "no/such.csv", expect_status=1)
t.expect_output(run, r"no/such\.csv")
t.passed()
