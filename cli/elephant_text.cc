#include "cli/elephant_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "text/table.h"

namespace geodesic::cli {
namespace {

bool IsProtected(const v1::ElephantClass& cls) { return !cls.protection().empty() && cls.protection() != "none"; }

// "yes (245 failures, 17 limits)", "NO (52 failures, 0 limits)", "-" for an
// unprotected class.
std::string FailureSafeText(const v1::ElephantClass& cls) {
  if (!IsProtected(cls)) return "-";
  return absl::StrCat(cls.failure_safe() ? "yes" : "NO", " (", cls.failures_checked(), " failures, ",
                      cls.failure_limits(), " limits)");
}

// "0.995 (link iad-dfw: chi-dfw)", "-" for an unprotected class.
std::string WorstAfterFailureText(const v1::ElephantClass& cls) {
  if (!IsProtected(cls) || cls.failures_checked() == 0) return "-";
  return absl::StrFormat("%.3f (%s: %s)", cls.max_utilization_after_failure(), cls.worst_failure(),
                         cls.worst_failure_link());
}

}  // namespace

std::string ElephantAllocationText(const v1::ElephantAllocation& elephants) {
  if (elephants.classes().empty()) return "";
  std::string text = absl::StrFormat(
      "elephant flows: %.1f of %.1f Gbps carried, max link utilization %.3f, latency stretch mean %.3f p95 %.3f\n",
      elephants.carried_gbps(), elephants.demand_gbps(), elephants.max_utilization(), elephants.mean_stretch(),
      elephants.p95_stretch());
  text::Table table({"CLASS", "OBJECTIVE", "DEMAND_GBPS", "CARRIED_GBPS", "MLU", "CAP", "PROTECTION", "FAILURE_SAFE",
                     "WORST_AFTER_FAILURE", "UNPROTECTED_MLU"});
  std::string problems;
  for (const v1::ElephantClass& cls : elephants.classes()) {
    const bool is_protected = IsProtected(cls);
    table.Add({absl::StrCat(cls.priority()), cls.objective(), absl::StrFormat("%.1f", cls.demand_gbps()),
               absl::StrFormat("%.1f", cls.carried_gbps()), absl::StrFormat("%.3f", cls.max_utilization()),
               cls.objective() == "latency" ? absl::StrFormat("%.2f", cls.utilization_cap()) : "-",
               is_protected ? absl::StrFormat("%s <= %.2f", cls.protection(), cls.protection_limit()) : "none",
               FailureSafeText(cls), WorstAfterFailureText(cls),
               is_protected ? absl::StrFormat("%.3f", cls.unprotected_max_utilization()) : "-"});
    if (is_protected && !cls.failure_safe()) {
      absl::StrAppend(&problems, "class ", cls.priority(), " is not failure-safe (the plan is the unprotected one): ",
                      cls.protection_problem().empty() ? "no reason given" : cls.protection_problem(), "\n");
    }
  }
  return absl::StrCat(text, table.Render(), problems);
}

}  // namespace geodesic::cli
