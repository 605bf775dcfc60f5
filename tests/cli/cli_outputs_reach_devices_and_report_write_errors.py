#!/usr/bin/env python3
"""Outputs that are not regular files: a report written to /dev/null or a named pipe goes into
it (the node stays a device or a pipe, never replaced by a file), and a report that cannot be
written (/dev/full, as standard output or as --html) is an error with exit status 1."""
import os
import stat
import subprocess
import tempfile
import threading

import harness

t = harness.Test()
trace = t.corpus("traces/TraceLens/h100/gaunernst_bert-small-uncased__1016001.json.gz")

# Standard output that cannot take the report (the console's, or the JSON written a row at a
# time): one error line, status 1.
if os.path.exists("/dev/full"):
    for extra in ([], ["--json"]):
        with open("/dev/full", "w") as full:
            completed = subprocess.run([t.sextant_path, "trace", "report", trace] + extra,
                                       stdout=full, stderr=subprocess.PIPE, text=True)
        completed.stdout = ""
        run = harness.Run([t.sextant_path, "trace", "report", trace] + extra + [">", "/dev/full"],
                          completed)
        t.check(completed.returncode == 1, "a failed write to standard output exited 0", run)
        t.expect_output(run, r"sextant: error: writing standard output: No space left on device")
        t.check(len(completed.stderr.strip().splitlines()) == 1, "more than one error line", run)
    run = t.sextant("trace", "report", trace, "--html", "/dev/full", expect_status=1)
    t.expect_output(run, r"/dev/full: write failed")
    t.check(stat.S_ISCHR(os.stat("/dev/full").st_mode), "/dev/full is no longer a device", run)

# /dev/null takes the page and stays a device.
run = t.sextant("trace", "report", trace, "--html", "/dev/null")
t.check(stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is no longer a device", run)

# A named pipe receives the page and stays a pipe.
with tempfile.TemporaryDirectory() as tmp:
    fifo = os.path.join(tmp, "page.fifo")
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    run = t.sextant("trace", "report", trace, "--html", fifo)
    reader.join(timeout=60)
    t.check(received and received[0].startswith(b"<!DOCTYPE html>"),
            "the pipe did not receive the HTML page", run)
    t.check(stat.S_ISFIFO(os.stat(fifo).st_mode), "the named pipe was replaced by a file", run)
t.passed()
