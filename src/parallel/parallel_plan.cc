#include "parallel/parallel_plan.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sextant {

int ParallelPlan::ExpertDataParallel() const {
  const int denom = etp * ep * pp;
  return denom > 0 ? std::max(1, WorldSize() / denom) : 1;
}

int ParallelPlan::FsdpShardGroup() const {
  return std::max(1, dp * cp / std::max(1, fsdp_replicas));
}

std::string DescribeParallelSizes(const ParallelPlan& p) {
  return fmt::format("TP {} PP {} VPP {} CP {} EP {} ETP {} DP {}", p.tp, p.pp, p.vpp, p.cp, p.ep,
                     p.etp, p.dp);
}

std::string DescribeSchedule(const std::string& schedule, int pp) {
  return pp == 1 ? std::string("no pipeline") : "schedule " + schedule;
}

nlohmann::json ParallelSizesJson(const ParallelPlan& p) {
  return {{"tp", p.tp}, {"pp", p.pp},   {"vpp", p.vpp}, {"cp", p.cp},
          {"ep", p.ep}, {"etp", p.etp}, {"dp", p.dp}};
}

ParallelPlan ParallelSizesFromJson(const nlohmann::json& j) {
  ParallelPlan p;
  p.tp = j.at("tp").get<int>();
  p.pp = j.at("pp").get<int>();
  p.vpp = j.at("vpp").get<int>();
  p.cp = j.at("cp").get<int>();
  p.ep = j.at("ep").get<int>();
  p.etp = j.at("etp").get<int>();
  p.dp = j.at("dp").get<int>();
  return p;
}

}  // namespace sextant
