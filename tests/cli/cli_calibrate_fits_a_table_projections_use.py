#!/usr/bin/env python3
"""`sextant calibrate` fits MI300X's efficiency table to the kernels of real MI300X traces,
scores it on a held-out trace, refuses a --gpu-arch other than the traces' GPU, warns
about a trace cut short, writes a calibration file that `projection performance
--calibration` uses (and refuses for another GPU), and never writes over an input."""
import gzip
import hashlib
import os
import tempfile

import harness

t = harness.Test()
mi300 = t.corpus("traces/TraceLens/mi300")
qwen = os.path.join(mi300, "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
owlv2 = os.path.join(mi300, "google_owlv2-large-patch14-ensemble__1016001.json.gz")
timesformer = os.path.join(mi300, "facebook_timesformer-base-finetuned-k400__1016002.json.gz")
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "mi300x.json")
    run = t.sextant("calibrate", qwen, owlv2, "--test", timesformer, "-o", out)
    # The GPU comes from the traces' deviceProperties ("AMD Instinct MI300X VF").
    t.expect_output(run, r"MI300X efficiency fitted on \d+ measured kernels with shapes from 2 file")
    t.expect_output(run, r"GEMM +bf16 +0 GFLOP +\d+ +\d+ +0\.\d+ +0\.\d+ +yes")
    t.expect_output(run, r"Cost-model error on held-out kernels \(1 file\(s\) not fitted on\)")
    t.expect_output(run, r"launch floor \(us\)")
    cal = t.json(t.sextant("calibrate", qwen, owlv2, "--json"))
    t.check(cal["format"] == "sextant-calibration" and cal["version"] == 1 and cal["gpu"] == "MI300X",
            "the calibration JSON does not say what it is")
    t.check(cal["sources"] == [qwen, owlv2], "the calibration does not name its traces")

    run = t.sextant("projection", "performance", "--calibration", out)
    t.expect_output(run, r"efficiency table: MI300X table from " + out.replace(".", r"\.") +
                    r" \(fitted on .*Qwen")
    run = t.sextant("projection", "performance", "--gpu-arch", "h100", "--calibration", out,
                    expect_status=1)
    t.expect_output(run, r"fitted on MI300X, the job runs on H100")

    # --gpu-arch cannot relabel kernels timed on another GPU.
    run = t.sextant("calibrate", qwen, "--gpu-arch", "h100", "-o", os.path.join(tmp, "h.json"),
                    expect_status=1)
    t.expect_output(run, r"was recorded on 'AMD Instinct MI300X VF' \(MI300X\), but --gpu-arch "
                         r"says H100")
    t.check(not os.path.exists(os.path.join(tmp, "h.json")), "a refused calibration was written")

    # A trace cut short: the reader's warning is printed, and without deviceProperties (at the
    # end of a Kineto file) the GPU must be given.
    with gzip.open(owlv2, "rb") as f:
        text = f.read()
    cut = os.path.join(tmp, "cut.json")
    with open(cut, "wb") as f:
        f.write(text[: len(text) * 9 // 10])
    run = t.sextant("calibrate", cut, expect_status=1)
    t.expect_output(run, r"warning: .*cut\.json( at byte \d+)?: .*the file looks cut short")
    t.expect_output(run, r"cut\.json: ends early, before the deviceProperties that name its GPU")
    run = t.sextant("calibrate", cut, "--gpu-arch", "mi300x")
    t.expect_output(run, r"warning: .*the file looks cut short")

    # TraceLens tables do not name their GPU: it must be given.
    gemm_csv = os.path.join(mi300, "Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs", "GEMM.csv")
    run = t.sextant("calibrate", gemm_csv, expect_status=1)
    t.expect_output(run, r"--gpu-arch")
    run = t.sextant("calibrate", gemm_csv, "--gpu-arch", "mi300x", "--min-kernels", "1")
    t.expect_output(run, r"MI300X efficiency fitted on 5 measured kernels")

    # Fitted on the spot by a projection: kernels of another GPU are refused, as `calibrate`
    # refuses them; a trace's classes with fewer than 3 kernels keep the default, and a class
    # the fit predicts worse than the default is a warning.
    b200 = t.corpus("traces/TraceLens/b200/eager_trace.json.gz")
    run = t.sextant("projection", "performance", "--calibration", b200, expect_status=1)
    t.expect_output(run, r"eager_trace\.json\.gz: 'deviceProperties': was recorded on B200 "
                         r"\(NVIDIA B200\), not on the MI300X")
    run = t.sextant("projection", "performance", "--calibration", qwen)
    t.expect_output(run, r"default kept where a size class had fewer than 3 kernels")
    t.expect_output(run, r"warning: --calibration .*Qwen.*: the fitted table predicts its GEMM "
                         r"kernels worse than the default \(median error 4\.9% -> 7\.7%\)")

    # The output is never one of the inputs.
    copy = os.path.join(tmp, "trace.json.gz")
    with open(qwen, "rb") as src, open(copy, "wb") as dst:
        dst.write(src.read())
    before = hashlib.sha256(open(copy, "rb").read()).hexdigest()
    run = t.sextant("calibrate", copy, "-o", copy, expect_status=1)
    t.expect_output(run, r"trace\.json\.gz")
    t.check(hashlib.sha256(open(copy, "rb").read()).hexdigest() == before,
            "calibrate wrote over its input trace", run)
t.passed()
