#include "fabric/plan_report.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "text/table.h"

namespace geodesic::fabric {
namespace {

std::string SwitchesInLayer(const PlanResult& plan, const std::string& name) {
  for (const PlannedLayer& layer : plan.layers) {
    if (layer.name == name) return FormatCount(layer.switches_per_plane);
  }
  return "-";
}

std::vector<std::string> ComparisonRow(const std::string& design, const TierOption& option) {
  const PlanResult& plan = option.plan;
  return {design,
          FormatCount(plan.planes),
          FormatCount(plan.gpus),
          FormatCount(plan.switches_total),
          FormatCount(plan.switch_links_total),
          FormatCount(plan.max_switch_hops),
          option.reaches_target ? "yes" : "no (most it can)"};
}

}  // namespace

std::string FormatCount(uint64_t value) {
  std::string digits = absl::StrCat(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string FormatPlanTable(const PlanResult& two_tier, const PlanResult& three_tier) {
  text::Table table({"non-blocking (1:1)", "two tiers", "three tiers"});
  auto row = [&table](const std::string& label, uint64_t two, uint64_t three) {
    table.Add({label, FormatCount(two), FormatCount(three)});
  };
  row("GPUs reached", two_tier.gpus, three_tier.gpus);
  row("endpoints per plane", two_tier.endpoints_per_plane, three_tier.endpoints_per_plane);
  row("idle endpoints per plane", two_tier.idle_endpoints_per_plane,
      three_tier.idle_endpoints_per_plane);
  for (const char* name : {"leaf", "spine", "super-spine"}) {
    table.Add({absl::StrCat(name, " switches per plane"), SwitchesInLayer(two_tier, name),
               SwitchesInLayer(three_tier, name)});
  }
  row("switches per plane", two_tier.switches_per_plane, three_tier.switches_per_plane);
  row("switches total", two_tier.switches_total, three_tier.switches_total);
  row("switch links per plane", two_tier.switch_links_per_plane,
      three_tier.switch_links_per_plane);
  row("switch links total", two_tier.switch_links_total, three_tier.switch_links_total);
  row("max switch hops GPU to GPU", two_tier.max_switch_hops, three_tier.max_switch_hops);
  return absl::StrCat("radix ", two_tier.radix, ", ", two_tier.planes,
                      two_tier.planes == 1 ? " plane, " : " planes, ", two_tier.nics_per_gpu,
                      " NICs per GPU (", two_tier.nics_per_gpu_per_plane, " per plane)\n",
                      table.Render());
}

std::string FormatComparison(const TierVsPlanes& comparison) {
  const PlanResult& two = comparison.two_tier.plan;
  const PlanResult& three = comparison.three_tier.plan;
  text::Table table({"design", "planes", "GPUs", "switches", "switch links", "hops", "reaches target"});
  table.Add(ComparisonRow("two tiers", comparison.two_tier));
  table.Add(ComparisonRow("three tiers", comparison.three_tier));
  std::string verdict;
  switch (comparison.fewer_switches_tiers) {
    case 2:
      verdict = comparison.three_tier.reaches_target
                    ? absl::StrCat("fewer switches: two tiers (", FormatCount(two.switches_total),
                                   " vs ", FormatCount(three.switches_total), ")")
                    : "only two tiers with more planes reach the target";
      break;
    case 3:
      verdict = comparison.two_tier.reaches_target
                    ? absl::StrCat("fewer switches: three tiers (", FormatCount(three.switches_total),
                                   " vs ", FormatCount(two.switches_total), ")")
                    : absl::StrCat("only three tiers reach the target: two tiers stop at ",
                                   FormatCount(two.gpus), " GPUs");
      break;
    default:
      verdict = "neither reaches the target: a larger radix or more NICs per GPU is needed";
  }
  return absl::StrCat("target ", FormatCount(comparison.target_gpus), " GPUs with radix ", two.radix,
                      " and ", two.nics_per_gpu, " NICs per GPU (planes must divide ",
                      two.nics_per_gpu, ")\n", table.Render(), verdict, "\n");
}

}  // namespace geodesic::fabric
