#!/usr/bin/env python3
"""The GPU named by an experiment's directory does not depend on how its path is typed, and
--sync-free-stage 0 turns the experiment's own sync-free stage off."""
import os

import harness

t = harness.Test()
primus = os.path.abspath(t.corpus("primus"))
t.sextant_path = os.path.abspath(t.sextant_path)

# Typed as a bare file name from inside configs/MI355X/: still an MI355X (288 GB) job.
os.chdir(os.path.join(primus, "examples/megatron/configs/MI355X"))
run = t.sextant("projection", "memory", "--config", "qwen3_30B_A3B-BF16-pretrain.yaml",
                "--primus-path", primus)
t.expect_output(run, r"GPU MI355X from the experiment's directory name")
t.expect_output(run, r"of 288\.00 GiB HBM")

# DeepSeek-V2-Lite on MI300X sets turbo_sync_free_moe_stage: 2, which turns Turbo's DeepEP on.
# --sync-free-stage 0 must act as the key set to 0: the all-to-all goes back to RCCL's.
config = os.path.join(primus, "examples/megatron/configs/MI300X/deepseek_v2_lite-BF16-pretrain.yaml")
base = ["projection", "performance", "--config", config, "--primus-path", primus, "--json",
        "--use_turbo_deepep", "false"]
as_flag = t.json(t.sextant(*base, "--sync-free-stage", "0"))
as_key = t.json(t.sextant(*base, "--turbo_sync_free_moe_stage", "0"))
as_config = t.json(t.sextant(*base))
t.check(as_flag["breakdown_ms"]["ep_comm"] == as_key["breakdown_ms"]["ep_comm"],
        f"--sync-free-stage 0 gives EP {as_flag['breakdown_ms']['ep_comm']} ms, the key set to 0 "
        f"{as_key['breakdown_ms']['ep_comm']} ms")
t.check(as_flag["breakdown_ms"]["ep_comm"] > as_config["breakdown_ms"]["ep_comm"],
        "stage 0 (all-to-all) should expose more EP communication than the config's stage 2 "
        f"(DeepEP): {as_flag['breakdown_ms']['ep_comm']} vs {as_config['breakdown_ms']['ep_comm']}")
t.passed()
