#!/usr/bin/env python3
"""`sextant memory watch -- CMD` passes terminating signals on to CMD, reaps it, writes its
output and exits as a shell would: 128 + signal, 126/127 when CMD cannot be run."""
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time

import harness

t = harness.Test()
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGQUIT must not leave core files
tmp = tempfile.mkdtemp(prefix="sextant_watch_")

t.sextant("memory", "watch", "--", "sh", "-c", "exit 7", expect_status=7)
run = t.sextant("memory", "watch", "--", os.path.join(tmp, "missing"), expect_status=127)
t.expect_output(run, r"sextant: memory watch: cannot run '.*missing': No such file or directory\n")
t.check(len(run.stderr.strip().splitlines()) <= 2, "one line for the failure", run)
plain = os.path.join(tmp, "plain.sh")
with open(plain, "w") as f:
    f.write("#!/bin/sh\nexit 0\n")
os.chmod(plain, 0o644)
run = t.sextant("memory", "watch", "--", plain, expect_status=126)
t.expect_output(run, r"cannot run '.*plain\.sh': Permission denied")

sysfs = os.path.join("tests", "data", "snapshot", "sysfs")
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
            signal.SIGUSR2, signal.SIGPIPE):
    pid_file = os.path.join(tmp, f"pid.{int(sig)}")
    csv = os.path.join(tmp, f"samples.{int(sig)}.csv")
    argv = [t.sextant_path, "memory", "watch", "--sysfs-root", sysfs, "--interval-ms", "20",
            "-o", csv, "--", "sh", "-c", f"echo $$ > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; "
            "exec sleep 30"]
    watcher = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 20
    while not os.path.exists(pid_file) and time.time() < deadline:
        time.sleep(0.01)
    t.check(os.path.exists(pid_file), f"{sig.name}: the command never started")
    with open(pid_file) as f:
        child = int(f.read())
    time.sleep(0.1)  # let sh exec sleep
    watcher.send_signal(sig)
    try:
        out, err = watcher.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        watcher.kill()
        os.kill(child, signal.SIGKILL)
        t.fail(f"{sig.name}: the watcher did not exit after the command should have died")
    if watcher.returncode != 128 + int(sig):
        t.fail(f"{sig.name}: expected exit status {128 + int(sig)}, got {watcher.returncode}\n"
               f"{err}")
    try:
        os.kill(child, 0)
        os.kill(child, signal.SIGKILL)
        t.fail(f"{sig.name}: command pid {child} is still running after the watcher exited")
    except ProcessLookupError:
        pass
    t.check(os.path.exists(csv) and os.path.getsize(csv) > 0,
            f"{sig.name}: the samples file was not written")
shutil.rmtree(tmp)
t.passed()
