#!/usr/bin/env python3
"""`projection search` on DeepSeek-V3 (61 layers, which divide over no PP > 1) across 64 nodes
considers pipeline parallelism through Megatron's first/last stage layer counts (one chunk per
rank) and pipeline_model_parallel_layout strings (interleaved chunks): the ranked rows include
PP > 1 with the counts the rule gives by hand (middle ranks ceil(61 / PP), the first and last
sharing the rest) or the balanced layout by hand (61 layers + embedding + loss = 63 slots spread
over PP x VPP stages), the grid points that cannot split are counted as pruned, the search
reports how far its estimate was from the full projection (within 2% on the top 10), and the
best pipelined row's overrides reproduce its tokens/s."""
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


def balanced_layout(layers, stages):
    """Megatron's account_for_embedding/loss_in_pipeline_split by hand: layers + 2 slots, the
    first stage one of the larger shares, the other larger shares on the last stages."""
    slots = layers + 2
    base, extra = divmod(slots, stages)
    parts = []
    for i in range(stages):
        larger = extra > 0 and (i == 0 or i >= stages - (extra - 1))
        n = base + larger - (i == 0) - (i == stages - 1)
        parts.append(("E" if i == 0 else "") + (f"t*{n}" if n > 0 else "")
                     + (",L" if i == stages - 1 else ""))
    return "|".join(parts)


pipelined = [e for e in j["top"] + j["pareto"] if e["parallel"]["pp"] > 1]
t.check(pipelined, "no row with PP > 1 among the top 10 and the front")
for e in pipelined:
    pp, vpp = e["parallel"]["pp"], e["parallel"]["vpp"]
    if vpp == 1:
        middle = math.ceil(61 / pp)
        rest = 61 - middle * (pp - 2)
        t.check(e["decoder_first_pipeline_num_layers"] == rest - rest // 2
                and e["decoder_last_pipeline_num_layers"] == rest // 2
                and e["pipeline_model_parallel_layout"] == "",
                f"PP {pp}: first/last {e['decoder_first_pipeline_num_layers']}/"
                f"{e['decoder_last_pipeline_num_layers']}, by hand {rest - rest // 2}/{rest // 2}")
    else:
        t.check(e["pipeline_model_parallel_layout"] == balanced_layout(61, pp * vpp)
                and e["decoder_first_pipeline_num_layers"] == -1,
                f"PP {pp} x VPP {vpp}: layout {e['pipeline_model_parallel_layout']!r}, by hand "
                f"{balanced_layout(61, pp * vpp)!r}")
t.check(0 <= j["estimate_error_pct"]["median"] <= j["estimate_error_pct"]["max"] <= 2.0,
        f"estimate error not reported or above 2%: {j['estimate_error_pct']}")

# The best pipelined configuration, as overrides, reproduces the search's numbers.
best = pipelined[0]
p = best["parallel"]
overrides = ["--tensor_model_parallel_size", str(p["tp"]), "--pipeline_model_parallel_size",
             str(p["pp"]), "--context_parallel_size", str(p["cp"]),
             "--expert_model_parallel_size", str(p["ep"]), "--expert_tensor_parallel_size",
             str(p["etp"]), "--sequence_parallel", "true" if p["tp"] > 1 else "false",
             "--micro_batch_size", str(best["micro_batch_size"]), "--use_distributed_optimizer",
             "true" if best["distributed_optimizer"] else "false", "--recompute_granularity",
             "null" if best["recompute"] == "none" else best["recompute"],
             "--pipeline-schedule-algorithm", best["schedule"]]
if best["pipeline_model_parallel_layout"]:
    overrides += ["--pipeline_model_parallel_layout", best["pipeline_model_parallel_layout"]]
else:
    overrides += ["--decoder_first_pipeline_num_layers",
                  str(best["decoder_first_pipeline_num_layers"]),
                  "--decoder_last_pipeline_num_layers", str(best["decoder_last_pipeline_num_layers"])]
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
