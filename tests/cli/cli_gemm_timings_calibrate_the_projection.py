#!/usr/bin/env python3
"""Measured GEMMs re-fit the efficiency table and the projection says so; a missing file is a
user error naming it."""
import harness

t = harness.Test()
csv = "tests/data/gemm/mi300x_tracelens_gemms.csv"
run = t.sextant("projection", "performance", "--gemm-timings", csv)
t.expect_output(run, r"GEMM efficiency: MI300X table calibrated on 3 GEMMs from " + csv)
run = t.sextant("projection", "performance", "--gemm-timings", "no/such.csv", expect_status=1)
t.expect_output(run, r"no/such\.csv")
t.passed()
