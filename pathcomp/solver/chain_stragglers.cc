#include "pathcomp/solver/chain_stragglers.h"

#include <algorithm>
#include <tuple>

#include "site_plan/chain_paths.h"

namespace geodesic::pathcomp {
namespace {

// A report's age at `now`; one from the future (a clock a little ahead) is 0.
int64_t AgeMs(const v1::ServiceLatencyReport& report, int64_t now_unix_ms) {
  return std::max<int64_t>(0, now_unix_ms - report.received_at_unix_ms());
}

double Ratio(int64_t deviation_us, uint64_t planned_us) {
  return planned_us == 0 ? 0.0 : static_cast<double>(deviation_us) / static_cast<double>(planned_us);
}

// True when measured - planned is above the noise floor.
bool Deviates(int64_t deviation_us, uint64_t planned_us, const StragglerRules& rules) {
  if (deviation_us <= 0) return false;
  const double floor = std::max(static_cast<double>(rules.min_deviation_us),
                                rules.min_deviation_ratio * static_cast<double>(planned_us));
  return static_cast<double>(deviation_us) > floor;
}

// Worst first: the larger excess, then workload id, hop, network before service.
bool Worse(const v1::Straggler& a, const v1::Straggler& b) {
  return std::make_tuple(-a.deviation_us(), a.workload_id(), a.hop(), static_cast<int>(a.component())) <
         std::make_tuple(-b.deviation_us(), b.workload_id(), b.hop(), static_cast<int>(b.component()));
}

v1::Straggler StragglerOf(const std::string& workload_id, const v1::HopLatency& hop, v1::LatencyComponent component) {
  v1::Straggler straggler;
  straggler.set_workload_id(workload_id);
  straggler.set_hop(hop.hop());
  straggler.set_service_id(hop.service_id());
  straggler.set_replica_facility_id(hop.replica_facility_id());
  straggler.set_component(component);
  if (component == v1::LATENCY_COMPONENT_NETWORK) {
    straggler.set_deviation_us(hop.network_deviation_us());
    straggler.set_deviation_ratio(hop.network_deviation_ratio());
    straggler.set_network_source(hop.network_source());
  } else {
    straggler.set_deviation_us(hop.service_deviation_us());
    straggler.set_deviation_ratio(hop.service_deviation_ratio());
  }
  return straggler;
}

}  // namespace

ChainLatencyExplainer::ChainLatencyExplainer(const std::vector<MeasuredLink>& links, StragglerRules rules)
    : rules_(rules) {
  for (const MeasuredLink& link : links) {
    if (!link.usable || link.rtt_us == 0) continue;
    auto [it, added] = best_.try_emplace({link.src_facility_id, link.dst_facility_id}, link);
    // The lowest RTT; between equals the lowest id, so the answer does not
    // depend on the order of `links`.
    if (!added && std::tie(link.rtt_us, link.id) < std::tie(it->second.rtt_us, it->second.id)) it->second = link;
  }
}

const MeasuredLink* ChainLatencyExplainer::BestLink(const std::string& from, const std::string& to) const {
  auto it = best_.find({from, to});
  return it == best_.end() ? nullptr : &it->second;
}

bool ChainLatencyExplainer::MeasurePath(const std::vector<std::string>& path, uint64_t& one_way_us,
                                        v1::HopLatency& hop) const {
  for (size_t i = 1; i < path.size(); ++i) {
    const MeasuredLink* link = BestLink(path[i - 1], path[i]);
    if (link == nullptr) return false;
    one_way_us += link->rtt_us / 2;
    hop.add_network_link_ids(link->id);
  }
  return true;
}

v1::ChainExplanation ChainLatencyExplainer::Explain(const v1::ChainPlan& chain, const std::vector<HopReport>& reports,
                                                    int64_t now_unix_ms) const {
  v1::ChainExplanation out;
  out.set_workload_id(chain.workload_id());
  out.set_latency_budget_us(chain.latency_budget_us());
  const v1::ChainAssignment& primary = chain.primary();
  out.set_placed(primary.placed());
  out.set_reason(primary.reason());
  if (!primary.placed()) return out;

  uint64_t planned_total = 0;
  uint64_t measured_total = 0;
  bool fully_measured = true;
  for (int index = 0; index < primary.hops_size(); ++index) {
    const v1::ChainHop& planned = primary.hops(index);
    const std::vector<std::string> there = site_plan::ChainPathIds(chain, planned.path_there());
    const std::vector<std::string> back = site_plan::ChainPathIds(chain, planned.path_back());
    v1::HopLatency& hop = *out.add_hops();
    hop.set_hop(static_cast<uint32_t>(index));
    hop.set_service_id(planned.service_id());
    hop.set_replica_facility_id(planned.replica_facility_id());
    hop.set_planned_network_rtt_us(planned.network_rtt_us());
    hop.set_planned_service_time_us(planned.service_time_us());
    planned_total += planned.network_rtt_us() + planned.service_time_us();

    // The freshest report of this hop from the planned replica.
    const v1::ServiceLatencyReport* report = nullptr;
    for (const HopReport& candidate : reports) {
      const v1::ServiceLatencyReport& r = candidate.report;
      if (r.workload_id() != chain.workload_id() || r.hop() != static_cast<uint32_t>(index) ||
          r.service_id() != planned.service_id() || candidate.replica_facility_id != planned.replica_facility_id()) {
        continue;
      }
      if (AgeMs(r, now_unix_ms) > rules_.report_max_age_ms) continue;
      if (report == nullptr || r.received_at_unix_ms() > report->received_at_unix_ms()) report = &r;
    }
    if (report != nullptr) {
      hop.set_report_age_ms(AgeMs(*report, now_unix_ms));
      hop.set_report_calls(report->calls());
      hop.set_service_measured(true);
      hop.set_measured_service_latency_us(report->service_latency_us());
    }

    if (report != nullptr && report->network_rtt_us() > 0) {
      hop.set_network_source(v1::NETWORK_SOURCE_SERVICE_REPORT);
      hop.set_measured_network_rtt_us(report->network_rtt_us());
      // The links the caller's measurement crossed, as the planner would take
      // them: end-to-end evidence about them (pathcomp/health/link_judge.h).
      uint64_t unused_us = 0;
      if (!MeasurePath(there, unused_us, hop) || !MeasurePath(back, unused_us, hop)) {
        hop.clear_network_link_ids();
      }
    } else if (there.empty() && back.empty()) {
      hop.set_network_source(v1::NETWORK_SOURCE_LOCAL);
      hop.set_measured_network_rtt_us(0);
    } else {
      uint64_t rtt_us = 0;
      if (MeasurePath(there, rtt_us, hop) && MeasurePath(back, rtt_us, hop)) {
        hop.set_network_source(v1::NETWORK_SOURCE_LINK_PROBES);
        hop.set_measured_network_rtt_us(rtt_us);
      } else {
        hop.clear_network_link_ids();
        hop.set_network_source(v1::NETWORK_SOURCE_NONE);
      }
    }

    if (hop.network_source() != v1::NETWORK_SOURCE_NONE) {
      const int64_t deviation = static_cast<int64_t>(hop.measured_network_rtt_us()) -
                                static_cast<int64_t>(planned.network_rtt_us());
      hop.set_network_deviation_us(deviation);
      hop.set_network_deviation_ratio(Ratio(deviation, planned.network_rtt_us()));
      measured_total += hop.measured_network_rtt_us();
      if (Deviates(deviation, planned.network_rtt_us(), rules_)) {
        *out.add_deviating() = StragglerOf(chain.workload_id(), hop, v1::LATENCY_COMPONENT_NETWORK);
      }
    } else {
      fully_measured = false;
      measured_total += planned.network_rtt_us();
    }
    if (hop.service_measured()) {
      const int64_t deviation = static_cast<int64_t>(hop.measured_service_latency_us()) -
                                static_cast<int64_t>(planned.service_time_us());
      hop.set_service_deviation_us(deviation);
      hop.set_service_deviation_ratio(Ratio(deviation, planned.service_time_us()));
      measured_total += hop.measured_service_latency_us();
      if (Deviates(deviation, planned.service_time_us(), rules_)) {
        *out.add_deviating() = StragglerOf(chain.workload_id(), hop, v1::LATENCY_COMPONENT_SERVICE);
      }
    } else {
      fully_measured = false;
      measured_total += planned.service_time_us();
    }
  }
  out.set_planned_total_us(planned_total);
  out.set_measured_total_us(measured_total);
  out.set_fully_measured(fully_measured);
  out.set_measured_within_budget(measured_total <= chain.latency_budget_us());
  auto& deviating = *out.mutable_deviating();
  std::sort(deviating.begin(), deviating.end(), Worse);
  if (!deviating.empty()) {
    deviating[0].set_chain_straggler(true);
    *out.mutable_straggler() = deviating[0];
  }
  return out;
}

std::vector<v1::Straggler> WorstHops(const std::vector<v1::ChainExplanation>& chains, size_t limit) {
  std::vector<v1::Straggler> all;
  for (const v1::ChainExplanation& chain : chains) {
    all.insert(all.end(), chain.deviating().begin(), chain.deviating().end());
  }
  const size_t kept = std::min(limit, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kept), all.end(), Worse);
  all.resize(kept);
  return all;
}

}  // namespace geodesic::pathcomp
