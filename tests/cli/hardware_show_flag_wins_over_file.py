#!/usr/bin/env python3
"""`hardware show --hardware-config FILE`: the file's cluster applies, and an explicit --nodes
wins over its cluster.num_nodes (a flag wins over configuration, as everywhere else), with a
note naming both. tests/data/hardware/h100_cluster.yaml holds cluster.num_nodes 64."""
import harness

t = harness.Test()
config = "tests/data/hardware/h100_cluster.yaml"
run = t.sextant("hardware", "show", "H100", "--hardware-config", config, "--json")
j = t.json(run)
t.check(j["cluster"]["num_nodes"] == 64 and j["cluster"]["world_size"] == 512,
        f"the file's 64 nodes were not applied: {j['cluster']}")
t.check("note" not in run.stderr, "a note for nodes nobody asked for", run)

run = t.sextant("hardware", "show", "H100", "--hardware-config", config, "--nodes", "4", "--json")
j = t.json(run)
t.check(j["cluster"]["num_nodes"] == 4 and j["cluster"]["world_size"] == 32,
        f"--nodes 4 did not win over the file: {j['cluster']}")
t.expect_output(run, r"note: --nodes 4 replaces .*h100_cluster\.yaml's cluster\.num_nodes 64")
t.passed()
