#!/usr/bin/env python3
"""`sextant memory watch -- CMD` exits with CMD's own status."""
import harness

t = harness.Test()
t.sextant("memory", "watch", "--", "sh", "-c", "exit 7", expect_status=7)
t.passed()
