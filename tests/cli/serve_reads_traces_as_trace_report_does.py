#!/usr/bin/env python3
"""`serve` shows traces as `trace report` reads them: a folder of one run's rank traces is one
view of every rank (its page the bytes `trace report DIR --html` writes, with the collectives
matched across ranks), a replay trace beside its capture_traces folder is read with it as
--capture, and a file named twice is one view. A folder of traces that record no rank stays one
view per file. A file named .gz that is not gzip is said to be so."""
import json
import os
import tempfile
import urllib.error
import urllib.request

import harness


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def views_of(t, *paths):
    """The index of `serve PATHS`, and the server (stopped by the caller)."""
    proc, url = t.start_server("serve", *paths)
    status, body = get(url + "api/index.json")
    t.check(status == 200, f"GET /api/index.json gave {status}")
    return proc, url, json.loads(body)["views"]


def report_html(t, tmp, *argv):
    out = os.path.join(tmp, "report.html")
    t.sextant("trace", "report", *argv, "--html", out)
    with open(out, "rb") as f:
        return f.read()


t = harness.Test()
with tempfile.TemporaryDirectory() as tmp:
    for folder, ranks in (("traces/llm_training/megatron-tp2-v100", 2),
                          ("traces/HolisticTraceAnalysis/trace_filter", 2)):
        ranks_dir = t.corpus(folder)
        proc, url, views = views_of(t, ranks_dir)
        try:
            names = [v["name"] for v in views]
            expected = f"{os.path.basename(folder)} ({ranks} ranks)"
            t.check(names == [expected], f"serve {folder}: views {names}, expected [{expected}]")
            status, page = get(url + "export/0.html")
            t.check(status == 200, f"GET /export/0.html of {folder} gave {status}")
            t.check(page == report_html(t, tmp, ranks_dir),
                    f"the page of {folder} is not what `trace report DIR --html` writes")
            if "megatron" in folder:
                for heading in (b"Collectives matched across ranks",
                                b"Waiting at collectives per rank"):
                    t.check(heading in page, f"the page of {folder} has no {heading.decode()!r}")
        finally:
            t.stop_server(proc)

    # A replay trace and its capture folder: one view, as `trace report --capture` reads them,
    # whether the folder is searched or both are named.
    replay_dir = t.corpus("traces/TraceLens/inference/vllm_prefilldecode_piecewise")
    replay = os.path.join(replay_dir, "graph_execution.json.gz")
    captures = os.path.join(replay_dir, "capture_traces")
    expected_page = report_html(t, tmp, replay, "--capture", captures)
    for paths in ([replay_dir], [replay, captures]):
        proc, url, views = views_of(t, *paths)
        try:
            names = [v["name"] for v in views]
            t.check(names == ["graph_execution.json.gz + capture_traces"],
                    f"serve {paths}: views {names}")
            status, page = get(url + "export/0.html")
            t.check(status == 200 and page == expected_page,
                    f"serve {paths}: the page is not `trace report --capture`'s ({status})")
        finally:
            t.stop_server(proc)

    # One file named three times is one view.
    single = t.corpus("traces/TraceLens/h100/gaunernst_bert-small-uncased__1016001.json.gz")
    proc, url, views = views_of(t, single, single, os.path.join(os.path.dirname(single), ".",
                                                                os.path.basename(single)))
    t.stop_server(proc)
    t.check(len(views) == 1, f"a file named three times gave {len(views)} views")

    # Five profiles of one worker record no rank: five views, not one run of five ranks.
    proc, url, views = views_of(t, t.corpus("traces/kineto/tb_plugin_samples"))
    t.stop_server(proc)
    t.check(len(views) == 5, f"tb_plugin_samples gave {len(views)} views, expected 5")

    # Compression is recognised by its magic bytes: a .gz name on other bytes is said.
    not_gzip = os.path.join(tmp, "rank0.json.gz")
    with open(not_gzip, "w") as f:
        f.write("hello, not a trace")
    proc, url, views = views_of(t, not_gzip)
    try:
        status, body = get(url + "api/0.json")
        t.check(status == 422 and b"named .gz, but not gzip: it starts with 68 65 6c 6c 6f" in body,
                f"a .json.gz that is not gzip gave {status}: {body[:300]!r}")
    finally:
        t.stop_server(proc)
    run = t.sextant("trace", "report", not_gzip, expect_status=1)
    t.expect_output(run, r"rank0\.json\.gz: named \.gz, but not gzip: it starts with 68 65 6c 6c "
                         r"6f 2c 20 6e \(\"hello, n\"\), not gzip's 1f 8b; as plain text it is not "
                         r"JSON either")
t.passed()
