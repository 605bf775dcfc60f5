#!/usr/bin/env python3
"""`--hardware-config FILE`: the file's cluster applies, and an explicit --nodes wins over its
cluster.num_nodes (a flag wins over configuration, as everywhere else), with a note naming
both (tests/data/hardware/h100_cluster.yaml holds cluster.num_nodes 64). A Primus hardware file
written for MI300X nodes (node_topology "mesh") applied to an H100, whose nodes are NVSwitch
ones, is a warning in `hardware show` and in a projection; on an MI300X it is not."""
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

primus_mi300x = t.corpus("primus/examples/hardware_configs/mi300x.yaml")
run = t.sextant("hardware", "show", "H100", "--hardware-config", primus_mi300x)
t.expect_output(run, r"warning: .*mi300x\.yaml: node_topology mesh replaces the H100's switch \(NVSwitch\)")
run = t.sextant("projection", "memory", "--gpu-arch", "h100", "--hardware-config", primus_mi300x)
t.expect_output(run, r"warning: .*node_topology mesh replaces the H100's switch")
run = t.sextant("hardware", "show", "MI300X", "--hardware-config", primus_mi300x)
t.check("warning" not in run.stderr, "MI300X's own file drew a warning", run)
t.passed()
