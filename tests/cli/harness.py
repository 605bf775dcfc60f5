"""Shared pieces of the end-to-end tests in this folder (Python standard library only).

Every test script is run by CTest as
    python3 <script> --sextant BIN --corpus DIR [--mpiexec EXE]
from the repository root, and exits 0 (pass), 1 (fail, with a FAIL: line saying what was
expected and what came out) or 77 (skipped, with a SKIP: line saying why).
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

SKIP_RETURN_CODE = 77  # tests/cli/CMakeLists.txt gives CTest the same number


class Run:
    """One finished command: its exit status and what it wrote."""

    def __init__(self, argv, completed):
        self.argv = argv
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr

    @property
    def output(self):
        return self.stdout + self.stderr

    def describe(self):
        text = self.output
        if len(text) > 4000:
            text = text[:2000] + "\n[...]\n" + text[-2000:]
        return f"$ {shlex.join(self.argv)}\nexit status {self.returncode}\n{text}"


class Test:
    def __init__(self):
        parser = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__)
        parser.add_argument("--sextant", required=True, help="path of the sextant program")
        parser.add_argument("--corpus", default="", help="root of the shared corpus")
        parser.add_argument("--mpiexec", default="", help="MPI launcher, for *_mpi tests")
        args = parser.parse_args()
        self.sextant_path = args.sextant
        # As in the GoogleTest binaries (src/util/corpus_path.h), the environment variable
        # overrides the configured corpus location.
        self.corpus_dir = os.environ.get("SEXTANT_CORPUS_DIR") or args.corpus
        self.mpiexec_path = args.mpiexec

    def run(self, argv, expect_status=None):
        """Runs argv; with expect_status, fails unless it exits with that status."""
        completed = subprocess.run(argv, capture_output=True, text=True, errors="replace")
        run = Run(argv, completed)
        if expect_status is not None and run.returncode != expect_status:
            self.fail(f"expected exit status {expect_status}", run)
        return run

    def sextant(self, *args, expect_status=0):
        return self.run([self.sextant_path, *args], expect_status)

    def mpi(self, processes, *args, expect_status=0):
        """sextant under the MPI launcher with `processes` ranks."""
        if not self.mpiexec_path:
            self.fail("this test needs --mpiexec")
        argv = [self.mpiexec_path, "--allow-run-as-root", "--oversubscribe", "-np",
                str(processes), self.sextant_path, *args]
        return self.run(argv, expect_status)

    def start_server(self, *args):
        """Starts `sextant ARGS --port 0`; returns (process, base URL) once it says where it
        listens. The caller stops it with stop_server."""
        argv = [self.sextant_path, *args, "--port", "0"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        for line in proc.stdout:
            lines.append(line)
            match = re.search(r"Serving on (http://\S+/)", line)
            if match:
                return proc, match.group(1)
        proc.wait()
        self.fail(f"the server did not start: {shlex.join(argv)}\n{''.join(lines)}"
                  f"{proc.stderr.read()}")

    def stop_server(self, proc):
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            self.fail("the server did not stop on SIGTERM")

    def chromium(self, html, extra_script=""):
        """Loads the HTML file in a headless Chromium; returns (DOM after its scripts ran, the
        console messages Chromium logged). `extra_script` runs on the page once it has loaded
        (on a copy of the file) and may leave its findings in the DOM. Skips the test when
        Debian's chromium is absent (CHROMIUM overrides /usr/bin/chromium)."""
        chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        if not os.access(chromium, os.X_OK):
            print(f"SKIP: no Chromium at {chromium}")
            sys.exit(SKIP_RETURN_CODE)
        with tempfile.TemporaryDirectory() as tmp:
            if extra_script:
                with open(html, encoding="utf-8") as f:
                    page = f.read()
                html = os.path.join(tmp, "page.html")
                with open(html, "w", encoding="utf-8") as f:
                    f.write(page + "<script>window.addEventListener('load', () => {"
                            + extra_script + "});</script>")
            done = subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu",
                 "--enable-logging=stderr", "--v=0", "--user-data-dir=" + os.path.join(tmp, "p"),
                 "--window-size=1400,1000", "--virtual-time-budget=5000", "--dump-dom",
                 "file://" + os.path.abspath(html)],
                capture_output=True, text=True, errors="replace", timeout=120)
        return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]

    def corpus(self, relative=""):
        """Path below the shared corpus; skips the test when the corpus is absent."""
        if not self.corpus_dir or not os.path.isdir(self.corpus_dir):
            print(f"SKIP: shared corpus not found at {self.corpus_dir or '(not configured)'} "
                  "(set SEXTANT_CORPUS_DIR to its location)")
            sys.exit(SKIP_RETURN_CODE)
        return os.path.join(self.corpus_dir, relative)

    def json(self, run):
        """The command's standard output parsed as JSON."""
        try:
            return json.loads(run.stdout)
        except json.JSONDecodeError as e:
            self.fail(f"standard output is not JSON ({e})", run)

    def check(self, condition, message, run=None):
        if not condition:
            self.fail(message, run)

    def expect_output(self, run, pattern):
        """Fails unless the regular expression matches the output (stdout then stderr)."""
        if not re.search(pattern, run.output, re.S):
            self.fail(f"output does not match /{pattern}/", run)

    def fail(self, message, run=None):
        print(f"FAIL: {message}", file=sys.stderr)
        if run is not None:
            print(run.describe(), file=sys.stderr)
        sys.exit(1)

    def passed(self):
        print("ok")
        sys.exit(0)
