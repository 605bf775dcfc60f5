#!/usr/bin/env python3
"""The 8-rank DLRM trace set analysed by two MPI processes; rank 0 prints the cross-rank
collective table."""
import glob
import os

import harness

t = harness.Test()
traces = sorted(glob.glob(os.path.join(t.corpus("traces/param/dlrm_kineto_8rank"), "*.json.gz")))
t.check(len(traces) == 8, f"expected the 8 DLRM rank traces, found {len(traces)}")
run = t.mpi(2, "trace", "report", "--mpi", "--threads", "1", *traces)
t.expect_output(run, r"Collectives matched across ranks.*allreduce #000002")
t.passed()
