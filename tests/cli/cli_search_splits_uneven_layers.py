#!/usr/bin/env python3
"""`projection search` on DeepSeek-V3 (61 layers, which divide over no PP > 1) across 64 nodes
considers pipeline parallelism through Megatron's first/last stage layer counts: the ranked
rows include PP > 1 with the counts the rule gives by hand (middle ranks ceil(61 / PP), the
first and last sharing the rest), the grid points that cannot split are counted as pruned,
the search reports how far its estimate was from the full projection, and the winner's
Primus overrides (with decoder_first/last_pipeline_num_layers) reproduce its tokens/s."""
import math
import re

import harness

t = harness.Test()
primus = t.corpus("primus")
config = primus + "/examples/megatron/configs/MI300X/deepseek_v3-BF16-pretrain.yaml"
j = t.json(t.sextant("projection", "search", "--config", config, "--primus-path", primus,
                     "--target-nodes", "64", "--top", "10", "--json"))
c = j["counts"]
t.check(c["pruned"] > 0, f"nothing pruned: {c}")
t.check(c["enumerated"] == c["pruned"] + c["invalid"] + c["out_of_memory"] + c["evaluated"],
        f"counts do not add up: {c}")
pipelined = [e for e in j["top"] + j["pareto"] if e["parallel"]["pp"] > 1]
t.check(pipelined, "no row with PP > 1 among the top 10 and the front")
for e in pipelined:
    pp = e["parallel"]["pp"]
    middle = math.ceil(61 / pp)
    rest = 61 - middle * (pp - 2)
    t.check(e["decoder_first_pipeline_num_layers"] == rest - rest // 2
            and e["decoder_last_pipeline_num_layers"] == rest // 2,
            f"PP {pp}: first/last {e['decoder_first_pipeline_num_layers']}/"
            f"{e['decoder_last_pipeline_num_layers']}, by hand {rest - rest // 2}/{rest // 2}")
t.check(0 <= j["estimate_error_pct"]["median"] <= j["estimate_error_pct"]["max"],
        f"estimate error not reported: {j['estimate_error_pct']}")

# The best pipelined configuration, as overrides, reproduces the search's numbers.
best = pipelined[0]
p = best["parallel"]
overrides = ["--tensor_model_parallel_size", str(p["tp"]), "--pipeline_model_parallel_size",
             str(p["pp"]), "--context_parallel_size", str(p["cp"]),
             "--expert_model_parallel_size", str(p["ep"]), "--expert_tensor_parallel_size",
             str(p["etp"]), "--sequence_parallel", "true" if p["tp"] > 1 else "false",
             "--decoder_first_pipeline_num_layers", str(best["decoder_first_pipeline_num_layers"]),
             "--decoder_last_pipeline_num_layers", str(best["decoder_last_pipeline_num_layers"]),
             "--micro_batch_size", str(best["micro_batch_size"]), "--use_distributed_optimizer",
             "true" if best["distributed_optimizer"] else "false", "--recompute_granularity",
             "null" if best["recompute"] == "none" else best["recompute"],
             "--pipeline-schedule-algorithm", best["schedule"]]
if best["fsdp2"]:
    overrides += ["--use_torch_fsdp2", "true"]
if best["recompute"] == "full":
    overrides += ["--recompute_method", "uniform", "--recompute_num_layers", "1"]
run = t.sextant("projection", "performance", "--config", config, "--primus-path", primus,
                "--target-nodes", "64", *overrides)
tokens = float(re.search(r"tokens/s per GPU +([\d.]+)", run.output).group(1))
t.check(abs(tokens - best["tokens_per_s_per_gpu"]) < 0.1,
        f"the overrides give {tokens} tokens/s, the search {best['tokens_per_s_per_gpu']:.2f}", run)
t.passed()
