#!/usr/bin/env python3
"""The one-node search spread over two MPI processes; rank 0 prints the table."""
import harness

t = harness.Test()
run = t.mpi(2, "projection", "search", "--mpi", "--threads", "1", "--target-nodes", "1",
            "--top", "3")
t.expect_output(run, r"Top 3 configurations.*on 2 process\(es\) x 1 thread")
t.passed()
