#!/usr/bin/env python3
"""The viewer in a real headless Chromium: `pp view` served and exported, on the corpus's Primus
dumps and on a schedule Sextant simulated, and `serve`'s index, trace, snapshot and projection
pages. pp_view_test.mjs checks each schedule page against the dump files it was built from
(block counts per rank, hover, zoom, pan, keys, overlay); page_test.mjs checks the others load
without errors and show their content.

    python3 tests/web/viewer_browser_test.py --sextant BIN --corpus DIR [--screenshots DIR]

Exit 0 pass, 1 fail, 77 skipped (no Chromium, Node.js or tests/web/node_modules: `npm ci`).
With --screenshots (or $SEXTANT_SCREENSHOT_DIR), each page's screenshot is written there
(docs/images/ holds the ones docs/viewer.md shows)."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SKIP = 77


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def fail(why):
    print(f"FAIL: {why}", file=sys.stderr)
    sys.exit(1)


class Server:
    """`sextant ARGS --port 0` running until the block ends."""

    def __init__(self, sextant, *args):
        self.argv = [sextant, *args, "--port", "0"]

    def __enter__(self):
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        for line in self.proc.stdout:
            match = re.search(r"Serving on (http://\S+/)", line)
            if match:
                self.url = match.group(1)
                return self
        self.proc.wait()
        fail(f"server did not start: {' '.join(self.argv)}: {self.proc.stderr.read()}")

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sextant", required=True)
    parser.add_argument("--corpus", default="")
    parser.add_argument("--screenshots", default=os.environ.get("SEXTANT_SCREENSHOT_DIR", ""))
    args = parser.parse_args()
    corpus = os.environ.get("SEXTANT_CORPUS_DIR") or args.corpus
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not os.access(chromium, os.X_OK):
        skip(f"no Chromium at {chromium} (scripts/install_deps.sh installs Debian's chromium)")
    node = shutil.which("node")
    if not node:
        skip("no Node.js on PATH")
    if not os.path.isdir(os.path.join(HERE, "node_modules", "puppeteer-core")):
        skip("tests/web/node_modules is missing: run `npm ci` in tests/web")
    if not corpus or not os.path.isdir(corpus):
        skip(f"shared corpus not found at {corpus or '(not configured)'}")

    failures = []

    def browser(script, *script_args, screenshot=None):
        argv = [node, os.path.join(HERE, script), *script_args]
        if screenshot and args.screenshots:
            os.makedirs(args.screenshots, exist_ok=True)
            argv += ["--screenshot", os.path.join(args.screenshots, screenshot)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        if done.returncode != 0:
            failures.append(" ".join(argv))

    dumps = os.path.join(corpus, "pp_dumps", "gpu8_layer64_gbs16")
    pp8, vpp2 = os.path.join(dumps, "pp8"), os.path.join(dumps, "pp8_vpp2")
    sextant = args.sextant
    with tempfile.TemporaryDirectory() as tmp:
        # 1. Measured dumps, served; then the same view exported as one file.
        print("== pp view (served): two measured dumps, iteration 7")
        with Server(sextant, "pp", "view", pp8, vpp2, "--iteration", "7") as s:
            browser("pp_view_test.mjs", "--url", s.url, "--dump", pp8, "--dump", vpp2,
                    screenshot="viewer-pp-measured.png")
        print("== pp view --html: the same view as a file")
        html = os.path.join(tmp, "measured.html")
        subprocess.run([sextant, "pp", "view", pp8, vpp2, "--iteration", "7", "--html", html],
                       check=True, capture_output=True)
        browser("pp_view_test.mjs", "--url", "file://" + html, "--dump", pp8, "--dump", vpp2)

        # 1b. trace report --html of two ranks: the table rank filter shows one rank's rows.
        print("== trace report --html: two ranks, the tables filtered to rank 1")
        megatron = os.path.join(corpus, "traces", "llm_training", "megatron-tp2-v100")
        report = os.path.join(tmp, "report.html")
        subprocess.run([sextant, "trace", "report", os.path.join(megatron, "rank0.pt.trace.json"),
                        os.path.join(megatron, "rank1.pt.trace.json"), "--html", report],
                       check=True, capture_output=True)
        browser("page_test.mjs", "--url", "file://" + report, "--expect", "#sx-rank-filter select",
                "--rank-filter", "1", screenshot="trace-report-two-ranks.png")

        # 2. A schedule Sextant simulated: its --pp-dump, viewed beside the config it came from.
        print("== pp view: Sextant's simulated dump of an interleaved PP 4 config, and the config")
        config = os.path.join(ROOT, "examples", "llama3.1_8B-BF16-pretrain.yaml")
        flags = ["--pipeline_model_parallel_size=4", "--num-virtual-stages-per-pipeline-rank", "2"]
        simulated = os.path.join(tmp, "simulated")
        subprocess.run([sextant, "projection", "performance", "--config", config, *flags,
                        "--pp-dump", simulated], check=True, capture_output=True)
        with Server(sextant, "pp", "view", simulated, config, *flags) as s:
            browser("pp_view_test.mjs", "--url", s.url, "--dump", simulated,
                    screenshot="viewer-pp-simulated.png")

        # 3. serve: the index and one page of each kind.
        print("== serve: index, trace, snapshot and projection pages")
        trace = os.path.join(corpus, "traces", "TraceLens", "mi300", "resnet_act_checkpoint.json.gz")
        snapshot = os.path.join(corpus, "snapshots", "SnapViewer", "memory.pickle")
        with Server(sextant, "serve", pp8, trace, snapshot, config) as s:
            with urllib.request.urlopen(s.url + "api/index.json", timeout=30) as r:
                views = {v["kind"]: v["id"] for v in json.load(r)["views"]}
            browser("page_test.mjs", "--url", s.url, "--expect", 'a[href="/view/0"]',
                    screenshot="viewer-serve-index.png")
            # Tables, the GPU-time bars per rank, the roofline's points and ceilings.
            browser("page_test.mjs", "--url", f"{s.url}view/{views['trace']}", "--expect", "table",
                    "--expect", ".sx-bar", "--expect", ".sx-pt", "--expect", ".sx-roof",
                    screenshot="viewer-serve-trace.png")
            # The allocated/reserved chart and the active memory timeline's bands.
            browser("page_test.mjs", "--url", f"{s.url}view/{views['memory snapshot']}",
                    "--expect", "svg.chart path", "--expect", "h2", screenshot="viewer-serve-snapshot.png")
            browser("page_test.mjs", "--url", f"{s.url}view/{views['experiment config']}",
                    "--expect", "section.projection rect.mem-part", "--expect",
                    "section.projection circle.scaling-point", "--expect",
                    "section.projection svg.search-chart circle.front-point", "--expect",
                    "section.projection svg.search-chart path.own-point",
                    screenshot="viewer-serve-projection.png")
            browser("pp_view_test.mjs", "--url", f"{s.url}view/{views['pipeline dump']}",
                    "--dump", pp8)
    if failures:
        fail(f"{len(failures)} browser check(s) failed:\n  " + "\n  ".join(failures))
    print("ok")


if __name__ == "__main__":
    main()
