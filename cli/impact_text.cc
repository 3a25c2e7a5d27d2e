#include "cli/impact_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/output.h"
#include "text/table.h"

namespace geodesic::cli {
namespace {

std::string Percent(double ratio) { return absl::StrFormat("%.1f%%", ratio * 100); }
std::string Ms(uint64_t us) { return us == 0 ? "-" : absl::StrFormat("%.3fms", us / 1000.0); }

}  // namespace

std::string ImpactText(const v1::Impact& impact) {
  std::string out = absl::StrCat(
      "against plan generation ", impact.plan_generation(), " (unchanged)\n",
      "  routes changed:   ", impact.routes_changed(), "\n",
      "  max utilization:  ", Percent(impact.mlu_before()), " -> ", Percent(impact.mlu_after()), "\n",
      "  carried demand:   ", FormatNumber(impact.carried_before_gbps()), " -> ",
      FormatNumber(impact.carried_after_gbps()), " of ", FormatNumber(impact.demand_gbps()), " Gbps\n",
      "  workloads moved:  ", impact.moved_workload_ids_size(),
      impact.moved_workload_ids().empty() ? "" : absl::StrCat(" (", absl::StrJoin(impact.moved_workload_ids(), ", "), ")"),
      "\n", "  workloads cut:    ", impact.cut_workload_ids_size(),
      impact.cut_workload_ids().empty() ? "" : absl::StrCat(" (", absl::StrJoin(impact.cut_workload_ids(), ", "), ")"),
      "\n");
  if (!impact.chains_over_budget().empty()) {
    text::Table table({"CHAIN OVER BUDGET", "BEFORE", "AFTER", "BUDGET"});
    for (const auto& chain : impact.chains_over_budget()) {
      table.Add({chain.workload_id(), Ms(chain.before_us()), Ms(chain.after_us()), Ms(chain.budget_us())});
    }
    absl::StrAppend(&out, "\n", table.Render());
  }
  if (!impact.links_over_limit().empty()) {
    text::Table table({absl::StrCat("LINK OVER ", Percent(impact.utilization_limit())), "BEFORE", "AFTER"});
    for (const auto& link : impact.links_over_limit()) {
      table.Add({link.link_id(), Percent(link.before()), Percent(link.after())});
    }
    absl::StrAppend(&out, "\n", table.Render());
  }
  if (!impact.new_dependencies().empty()) {
    text::Table table({"NEW SINGLE-FACILITY DEPENDENCY", "FACILITY", "REASON"});
    for (const auto& dependency : impact.new_dependencies()) {
      table.Add({dependency.workload_id(), dependency.facility_id(), dependency.reason()});
    }
    absl::StrAppend(&out, "\n", table.Render());
  }
  if (!impact.unreachable_added().empty()) {
    absl::StrAppend(&out, "\nnewly unreachable: ", absl::StrJoin(impact.unreachable_added(), ", "), "\n");
  }
  if (!impact.refusals().empty()) {
    absl::StrAppend(&out, "\nrefused: ", absl::StrJoin(impact.refusals(), "; "), "\n");
  }
  return out;
}

}  // namespace geodesic::cli
