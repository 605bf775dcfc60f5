#!/usr/bin/env python3
"""`sextant projection search` without --target-nodes is a user error saying what it needs."""
import harness

t = harness.Test()
run = t.sextant("projection", "search", expect_status=1)
t.expect_output(run, r"needs --target-nodes N")
t.passed()
