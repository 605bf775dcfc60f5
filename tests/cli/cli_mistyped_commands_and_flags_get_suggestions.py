#!/usr/bin/env python3
"""A mistyped command or flag names the closest real one, a missing or repeated argument says
what is wrong, and numbers out of range are refused with the limit, whatever command they
belong to (one policy: util/close_matches.h)."""
import os
import tempfile

import harness

t = harness.Test()

run = t.sextant("projection", "memry", expect_status=1)
t.expect_output(run, r"unknown command 'memry' for 'sextant projection'; did you mean memory\?")
run = t.sextant("projecton", "memory", expect_status=1)
t.expect_output(run, r"unknown command 'projecton' for 'sextant'; did you mean projection\?")
run = t.sextant("hardware", "shw", "MI300X", expect_status=1)
t.expect_output(run, r"did you mean show\?")
# `sextant help [COMMAND...]` is the command's --help, as in git and go.
run = t.sextant("help")
t.expect_output(run, r"Usage: sextant \[OPTIONS\] SUBCOMMAND")
run = t.sextant("help", "projection", "memory")
t.expect_output(run, r"Usage: sextant projection memory \[OPTIONS\]")
# A mistyped word there is named, not skipped over to the help of the command before it.
run = t.sextant("help", "projection", "memry", expect_status=1)
t.expect_output(run, r"unknown command 'memry' for 'sextant projection'; did you mean memory\?")
run = t.sextant("help", "projecton", expect_status=1)
t.expect_output(run, r"unknown command 'projecton' for 'sextant'; did you mean projection\?")
# A --KEY override with its value forgotten reads as true; the error says so.
run = t.sextant("projection", "memory", "--micro_batch_size", "--tensor_model_parallel_size", "2",
                expect_status=1)
t.expect_output(run, r"expected an integer, found true \(a --micro_batch_size with no value "
                     r"after it reads as true\)")
# A projection passes unknown --key flags on as configuration keys; one close to a flag of
# the command is taken for a mistyped flag.
run = t.sextant("projection", "performance", "--target-node", "4", expect_status=1)
t.expect_output(run, r"--target-node: unknown option .*did you mean --target-nodes\?")
# A command without configuration keys: CLI11 refuses the flag, with the suggestion.
with tempfile.TemporaryDirectory() as d:
    trace = os.path.join(d, "t.json")
    with open(trace, "w") as f:
        f.write('{"traceEvents": []}')
    run = t.sextant("trace", "report", trace, "--topp", "3", expect_status=1)
    t.expect_output(run, r"unknown option '--topp' for 'sextant trace report'; did you mean --top\?")

    # A diff of one trace names what is missing, not CLI11's "new is required".
    run = t.sextant("trace", "diff", trace, expect_status=1)
    t.expect_output(run, r"trace diff compares two traces: give the trace to compare with "
                         r".*t\.json after it \(sextant trace diff BASE NEW\)")

# The experiment may be named without --config; a GPU by the name its driver reports.
example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "llama3.1_8B-BF16-pretrain.yaml")
run = t.sextant("projection", "memory", example)
t.check("no --config given" not in run.output, "a bare experiment path was not taken", run)
t.expect_output(run, r"llama3\.1_8B on MI300X")
run = t.sextant("hardware", "show", "NVIDIA H200")
t.expect_output(run, r"H200: NVIDIA H200 SXM")

# An empty experiment path (a script's "$EXP" unset) is refused, not taken for the default.
run = t.sextant("projection", "memory", "--config", "", expect_status=1)
t.expect_output(run, r"--config: is empty: give a file")
t.check("no --config given" not in run.output, "an empty --config fell back to the default", run)

# A missing file or a directory where a file belongs: the readers' wording, not CLI11's.
run = t.sextant("trace", "report", "no_such_trace.json", expect_status=1)
t.expect_output(run, r"error: no_such_trace\.json: no such file or directory")
with tempfile.TemporaryDirectory() as d:
    run = t.sextant("trace", "diff", d, d, expect_status=1)
    t.expect_output(run, r"a directory with no trace files directly inside")

# A flag given twice says so.
run = t.sextant("projection", "performance", "--target-nodes", "2", "--target-nodes", "4",
                expect_status=1)
t.expect_output(run, r"--target-nodes \(or --target-num-nodes, the same option\) was given 2 "
                     r"times; give it once")
# Two spellings of one option are the option twice; the message names both.
run = t.sextant("projection", "memory", "--config", "a.yaml", "--exp", "b.yaml", expect_status=1)
t.expect_output(run, r"--config \(or --exp, the same option\) was given 2 times; give it once")

# An empty output path writes nothing; it is refused rather than reported as success.
run = t.sextant("calibrate", "a.json", "-o", "", expect_status=1)
t.expect_output(run, r"--output: an empty path names no file to write")
run = t.sextant("trace", "report", "--html", "", __file__, expect_status=1)
t.expect_output(run, r"--html: an empty path names no file to write")

# A search would ignore the single-configuration flags: it says so instead.
run = t.sextant("projection", "search", "--target-nodes", "2", "--micro-batch-size", "3",
                expect_status=1)
t.expect_output(run, r"projection search chooses --micro-batch-size itself")
run = t.sextant("projection", "search", "--target-nodes", "2", "--chrome-trace", "x.json",
                expect_status=1)
t.expect_output(run, r"does not use --chrome-trace: give it to `projection performance`")

# Numbers: the flag, the limit and the value.
run = t.sextant("projection", "performance", "--target-nodes", "0", expect_status=1)
t.expect_output(run, r"--target-nodes: must be a whole number from 1 to 100000, got '0'")
run = t.sextant("projection", "memory", "--gpu-clock-mhz", "-5", expect_status=1)
t.expect_output(run, r"--gpu-clock-mhz: must be a number above 0, got '-5'")
run = t.sextant("projection", "performance", "--gpu-clock-mhz", "5000", expect_status=1)
t.expect_output(run, r"5000 MHz is above the MI300X's maximum clock of 2100 MHz")
run = t.sextant("projection", "performance", "--global-batch-size", "0", expect_status=1)
t.expect_output(run, r"--global-batch-size: must be a whole number of at least 1")
# A misspelt flag is named as it was typed, dashes and all.
run = t.sextant("projection", "memory", "--micro-batch", "4", expect_status=1)
t.expect_output(run, r'--micro-batch: unknown configuration key "micro_batch"')
# A flag that cannot act on this model says so instead of being dropped.
run = t.sextant("projection", "performance", "--sync-free-stage", "3")
t.expect_output(run, r"DeepEP dispatch/combine .* has no effect: the model has no MoE layers")
t.passed()
