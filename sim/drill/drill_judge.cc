#include "sim/drill/drill_judge.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "pathcomp/health/link_judge.h"

namespace geodesic::sim {
namespace {

// ", first at 41000 ms: nyc-lon,lon-nyc (lossy)": the first action of a kind.
std::string FirstAction(const v1::DrillAutoDrain& auto_drain, v1::AutoDrainEvent::Action action) {
  for (const v1::DrillAutoDrainAction& taken : auto_drain.actions()) {
    if (taken.action() != action) continue;
    std::string verdict;
    if (taken.verdict() != v1::LINK_VERDICT_UNKNOWN) {
      verdict = absl::StrCat(" (", pathcomp::health::VerdictName(taken.verdict()), ")");
    }
    return absl::StrCat(", first at ", taken.at_ms(), " ms: ", absl::StrJoin(taken.link_ids(), ","), verdict);
  }
  return "";
}

}  // namespace

void JudgeDrill(const Expectations& e, v1::DrillReport& report) {
  bool passed = true;
  auto verdict = [&](std::string name, bool ok, std::string detail) {
    v1::DrillExpectation& expectation = *report.add_expectations();
    expectation.set_name(std::move(name));
    expectation.set_ok(ok);
    expectation.set_detail(std::move(detail));
    passed = passed && ok;
  };
  if (e.max_chain_outage_ms) {
    verdict(absl::StrCat("max_chain_outage_ms <= ", *e.max_chain_outage_ms),
            report.max_chain_outage_ms() <= *e.max_chain_outage_ms,
            report.max_chain_outage_ms() == 0
                ? "no chain lost connectivity"
                : absl::StrCat("longest: ", report.max_chain_outage_ms(), " ms, ", report.worst_chain()));
  }
  if (e.min_carried_ratio) {
    verdict(absl::StrFormat("min_carried_ratio >= %g", *e.min_carried_ratio),
            report.min_carried_ratio() + 1e-9 >= *e.min_carried_ratio,
            absl::StrFormat("lowest carried ratio %.4f", report.min_carried_ratio()));
  }
  if (e.min_settled_carried_ratio) {
    verdict(absl::StrFormat("min_settled_carried_ratio >= %g", *e.min_settled_carried_ratio),
            report.min_settled_carried_ratio() + 1e-9 >= *e.min_settled_carried_ratio,
            absl::StrFormat("lowest carried ratio of a plan %.4f", report.min_settled_carried_ratio()));
  }
  if (e.max_mlu) {
    verdict(absl::StrFormat("max_mlu <= %g", *e.max_mlu), report.max_mlu() <= *e.max_mlu + 1e-9,
            absl::StrFormat("highest MLU of any plan %.4f", report.max_mlu()));
  }
  if (e.max_budget_violations) {
    verdict(absl::StrCat("max_budget_violations <= ", *e.max_budget_violations),
            report.max_budget_violations() <= *e.max_budget_violations,
            absl::StrCat("at most ", report.max_budget_violations(), " chains over budget in a plan"));
  }
  if (e.max_cut_workloads) {
    verdict(absl::StrCat("max_cut_workloads <= ", *e.max_cut_workloads),
            static_cast<uint64_t>(report.cut_workload_ids_size()) <= *e.max_cut_workloads,
            absl::StrCat(report.cut_workload_ids_size(), " workloads without a path at the end"));
  }
  if (e.no_new_single_facility_dependencies) {
    verdict("no_new_single_facility_dependencies", report.new_dependencies().empty(),
            report.new_dependencies().empty()
                ? "none"
                : absl::StrCat(report.new_dependencies_size(), " new, first ", report.new_dependencies(0)));
  }
  // Packets are only sent in the netns lab: elsewhere these are named as not
  // judged, and pass (the simulator's and --live's verdicts stand alone).
  const bool sent = report.has_packets() && report.packets().streams() > 0;
  if (e.max_packet_loss_ms) {
    const std::string name = absl::StrFormat("max_packet_loss_ms <= %g", *e.max_packet_loss_ms);
    if (!sent) {
      verdict(name, true, "not judged: packets are sent in --netns only");
    } else {
      verdict(name, report.packets().max_loss_ms() <= *e.max_packet_loss_ms + 1e-9,
              report.packets().max_loss_ms() == 0
                  ? "no stream lost a packet"
                  : absl::StrFormat("longest: %.1f ms, %s", report.packets().max_loss_ms(), report.packets().worst()));
    }
  }
  if (e.min_delivered_ratio) {
    const std::string name = absl::StrFormat("min_delivered_ratio >= %g", *e.min_delivered_ratio);
    if (!sent) {
      verdict(name, true, "not judged: packets are sent in --netns only");
    } else {
      const uint64_t drops = report.packets().receiver_socket_drops();
      verdict(name, report.packets().delivered_ratio() + 1e-9 >= *e.min_delivered_ratio,
              absl::StrFormat("%llu of %llu packets delivered (%.4f)%s",
                              static_cast<unsigned long long>(report.packets().received()),
                              static_cast<unsigned long long>(report.packets().sent()),
                              report.packets().delivered_ratio(),
                              drops == 0 ? std::string()
                                         : absl::StrFormat("; %llu of the missing dropped by the receivers' "
                                                           "full sockets (host load, not the network)",
                                                           static_cast<unsigned long long>(drops))));
    }
  }
  // Automatic drains are simulated: --live and --netns do not observe them.
  const bool simulated = report.has_auto_drain();
  auto judged = [&](std::string name, auto ok, auto detail) {
    if (!simulated) {
      verdict(std::move(name), true, "not judged: automatic drains are judged by the simulator only");
    } else {
      verdict(std::move(name), ok(), detail());
    }
  };
  const v1::DrillAutoDrain& auto_drain = report.auto_drain();
  const std::string enabled = auto_drain.enabled() ? "" : " (auto_drain is disabled in this drill)";
  if (e.min_auto_drains) {
    judged(absl::StrCat("min_auto_drains >= ", *e.min_auto_drains),
           [&] { return auto_drain.drains() >= *e.min_auto_drains; },
           [&] { return absl::StrCat(auto_drain.drains(), " automatic drains", FirstAction(auto_drain, v1::AutoDrainEvent::ACTION_DRAINED), enabled); });
  }
  if (e.max_auto_drains) {
    judged(absl::StrCat("max_auto_drains <= ", *e.max_auto_drains),
           [&] { return auto_drain.drains() <= *e.max_auto_drains; },
           [&] { return absl::StrCat(auto_drain.drains(), " automatic drains", FirstAction(auto_drain, v1::AutoDrainEvent::ACTION_DRAINED), enabled); });
  }
  if (e.min_auto_drain_refusals) {
    judged(absl::StrCat("min_auto_drain_refusals >= ", *e.min_auto_drain_refusals),
           [&] { return auto_drain.refusals() >= *e.min_auto_drain_refusals; },
           [&] { return absl::StrCat(auto_drain.refusals(), " refused by the pre-check", FirstAction(auto_drain, v1::AutoDrainEvent::ACTION_REFUSED), enabled); });
  }
  if (e.fail_open) {
    judged(absl::StrCat("fail_open: ", *e.fail_open ? "true" : "false"),
           [&] { return auto_drain.failed_open() == *e.fail_open; },
           [&] {
             return auto_drain.failed_open()
                        ? absl::StrCat("failed open", FirstAction(auto_drain, v1::AutoDrainEvent::ACTION_FAIL_OPEN))
                        : absl::StrCat("never failed open", enabled);
           });
  }
  if (e.max_gray_link_load_gbps) {
    judged(absl::StrFormat("max_gray_link_load_gbps <= %g", *e.max_gray_link_load_gbps),
           [&] {
             return auto_drain.gray_drained_plans() > 0 &&
                    auto_drain.max_gray_link_load_gbps() <= *e.max_gray_link_load_gbps + 1e-9;
           },
           [&] {
             if (auto_drain.gray_drained_plans() == 0) {
               return absl::StrCat("no plan was made with an automatic drain of a degraded link in force", enabled);
             }
             return auto_drain.max_gray_link().empty()
                        ? absl::StrCat("no load on a degraded link in ", auto_drain.gray_drained_plans(),
                                       " plans with an automatic drain of one in force")
                        : absl::StrFormat("%.1f Gbps on %s, highest of %u plans with an automatic drain of a degraded link in force",
                                          auto_drain.max_gray_link_load_gbps(), auto_drain.max_gray_link(),
                                          auto_drain.gray_drained_plans());
           });
  }
  if (e.max_utilization_after_repair) {
    const double limit = *e.max_utilization_after_repair;
    const std::string name = absl::StrFormat("max_utilization_after_repair <= %g", limit);
    if (!report.has_forwarding()) {
      verdict(name, true, "not judged: this runner computes no link loads after local repair");
    } else {
      const v1::DrillForwarding& forwarding = report.forwarding();
      std::vector<std::string> over;
      for (const v1::DrillEventOutcome& event : report.events()) {
        if (event.repaired_at_ms() == 0 || event.max_utilization_after_repair() <= limit + 1e-9) continue;
        over.push_back(absl::StrFormat("%s: %.3f on %s", event.event(), event.max_utilization_after_repair(),
                                       event.max_utilization_after_repair_link()));
      }
      std::string detail;
      if (forwarding.repairs() == 0) {
        detail = "no local repair in this drill";
      } else if (!over.empty()) {
        detail = absl::StrFormat("over after %d of %u local repairs: %s", static_cast<int>(over.size()),
                                 forwarding.repairs(), absl::StrJoin(over, "; "));
      } else if (forwarding.max_utilization_after_repair_link().empty()) {
        detail = absl::StrFormat("no elephant load on any link after %u local repairs", forwarding.repairs());
      } else {
        detail = absl::StrFormat("highest %.3f on %s at %s, of %u local repairs",
                                 forwarding.max_utilization_after_repair(),
                                 forwarding.max_utilization_after_repair_link(),
                                 forwarding.max_utilization_after_repair_event(), forwarding.repairs());
      }
      verdict(name, over.empty(), std::move(detail));
    }
  }
  report.set_passed(passed);
}

}  // namespace geodesic::sim
