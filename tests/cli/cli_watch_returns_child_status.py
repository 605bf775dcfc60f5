#!/usr/bin/env python3
"""`sextant memory watch -- CMD` exits with CMD's own status, and an output file that could
never be written is refused before CMD runs (not after hours of sampling)."""
import os
import tempfile

import harness

t = harness.Test()
t.sextant("memory", "watch", "--", "sh", "-c", "exit 7", expect_status=7)
with tempfile.TemporaryDirectory() as tmp:
    marker = os.path.join(tmp, "ran")
    run = t.sextant("memory", "watch", "-o", os.path.join(tmp, "missing", "w.csv"), "--", "sh",
                    "-c", f"touch {marker}; exit 3", expect_status=1)
    t.expect_output(run, r"missing")
    t.check(not os.path.exists(marker), "the command ran although its output path is missing", run)
t.passed()
