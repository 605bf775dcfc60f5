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

        # 1b. trace report --html of two ranks: the table rank filter shows one rank's rows and
        # sets the charts' rank; the charts' labels stay apart (in ms and in % of the span) and
        # draw each category in the page's one colour for it.
        print("== trace report --html: two ranks, the tables filtered to rank 1")
        megatron = os.path.join(corpus, "traces", "llm_training", "megatron-tp2-v100")
        report = os.path.join(tmp, "report.html")
        subprocess.run([sextant, "trace", "report", os.path.join(megatron, "rank0.pt.trace.json"),
                        os.path.join(megatron, "rank1.pt.trace.json"), "--html", report],
                       check=True, capture_output=True)
        browser("page_test.mjs", "--url", "file://" + report, "--expect", "#sx-rank-filter select",
                "--rank-filter", "1", "--labels-apart", "--category-colors",
                screenshot="trace-report-two-ranks.png")
        browser("page_test.mjs", "--url", "file://" + report, "--click", "input[value=percent]",
                "--labels-apart")

        # 1c. A JAX profile whose attention kernel's name runs to 4,174 characters: table rows
        # stay short, the whole name on hover.
        print("== trace report --html: kernel names of thousands of characters")
        xplane = os.path.join(corpus, "traces", "TraceLens", "jax",
                              "test_data_jax_te_fused_attn_categorization", "934987a2fc2f.xplane.pb")
        jax = os.path.join(tmp, "jax.html")
        subprocess.run([sextant, "trace", "report", xplane, "--html", jax], check=True,
                       capture_output=True)
        browser("page_test.mjs", "--url", "file://" + jax, "--expect", "#kernels",
                "--max-row-height", "80")

        # 1d. A memory snapshot's allocated and reserved timeline, zoomed in: its lines stay in
        # the plot and start at the value in effect at the left edge.
        print("== memory snapshot --html: the allocated and reserved timeline zoomed in")
        snap = os.path.join(tmp, "snapshot.html")
        subprocess.run([sextant, "memory", "snapshot",
                        os.path.join(corpus, "snapshots", "Wedsonlin-assignment2-systems",
                                     "medium_512_training_memory_snapshot.pickle"),
                        "--html", snap], check=True, capture_output=True)
        browser("page_test.mjs", "--url", "file://" + snap, "--wheel-zoom", "6")

        # 1e. Labels that must not collide: a stage's memory just under the HBM line (179.91 of
        # 192 GiB), and a time axis whose last tick falls on the plot's end (a dump of one
        # 19,047.6 ms iteration: the axis runs to 5% past it, 20,000 ms).
        print("== pp view --html: chart labels apart")
        llama70b = os.path.join(corpus, "primus", "examples", "megatron", "configs", "MI300X",
                                "llama2_70B-BF16-pretrain.yaml")
        config_page = os.path.join(tmp, "llama70b.html")
        subprocess.run([sextant, "pp", "view", llama70b, "--html", config_page], check=True,
                       capture_output=True)
        browser("page_test.mjs", "--url", "file://" + config_page, "--expect",
                "section.projection text.total", "--labels-apart")
        dump = os.path.join(tmp, "round_end")
        os.makedirs(dump)
        with open(os.path.join(dump, "config.json"), "w") as f:
            json.dump({"world_size": 1, "dp_size": 1, "tp_size": 1, "ep_size": 1, "pp_size": 1,
                       "vp_size": 1, "num_mbs": 1, "train_iters": 1}, f)
        end = 20000 / 1.05
        with open(os.path.join(dump, "pp_rank_0.json"), "w") as f:
            json.dump({"1": {"total": end, "memory": 10.0, "fwd_start": [0.0], "fwd_end": [5000.0],
                             "bwd_start": [5000.0], "bwd_end": [end]}}, f)
        round_end = os.path.join(tmp, "round_end.html")
        subprocess.run([sextant, "pp", "view", dump, "--html", round_end], check=True,
                       capture_output=True)
        browser("page_test.mjs", "--url", "file://" + round_end, "--expect",
                '#app[data-ready="1"]', "--labels-apart")

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
            # Tables, the GPU-time bars per rank, the roofline's points and ceilings, their
            # labels apart and their colours those of the page's categories.
            browser("page_test.mjs", "--url", f"{s.url}view/{views['trace']}", "--expect", "table",
                    "--expect", ".sx-bar", "--expect", ".sx-pt", "--expect", ".sx-roof",
                    "--labels-apart", "--category-colors", screenshot="viewer-serve-trace.png")
            # The allocated/reserved chart and the active memory timeline's bands.
            browser("page_test.mjs", "--url", f"{s.url}view/{views['memory snapshot']}",
                    "--expect", "svg.chart path", "--expect", "h2", screenshot="viewer-serve-snapshot.png")
            browser("page_test.mjs", "--url", f"{s.url}view/{views['experiment config']}",
                    "--expect", "section.projection rect.mem-part", "--expect",
                    "section.projection circle.scaling-point", "--expect",
                    "section.projection svg.search-chart circle.front-point", "--expect",
                    "section.projection svg.search-chart path.own-point", "--labels-apart",
                    screenshot="viewer-serve-projection.png")
            browser("pp_view_test.mjs", "--url", f"{s.url}view/{views['pipeline dump']}",
                    "--dump", pp8)
    if failures:
        fail(f"{len(failures)} browser check(s) failed:\n  " + "\n  ".join(failures))
    print("ok")


if __name__ == "__main__":
    main()
