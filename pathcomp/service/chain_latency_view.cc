#include "pathcomp/service/chain_latency_view.h"

#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "entity/entity_id.h"

namespace geodesic::pathcomp {

ChainLatencyView::ChainLatencyView(Model& model, Planner& planner, StragglerRules rules, Clock clock)
    : model_(model), planner_(planner), rules_(rules), clock_(std::move(clock)) {}

ChainLatencyExplainer ChainLatencyView::Explainer() const {
  // Usable as the solver sees it (intents' drains included), measured as the agents report.
  const std::shared_ptr<const Snapshot> snapshot = model_.CurrentSnapshot();
  std::vector<MeasuredLink> links;
  for (const v1::Link& link : model_.Links()) {
    const int index = snapshot->LinkIndex(link.id());
    links.push_back({.id = link.id(),
                     .src_facility_id = link.src_facility_id(),
                     .dst_facility_id = link.dst_facility_id(),
                     .rtt_us = link.health().rtt_us(),
                     .usable = index >= 0 && snapshot->link_state(index).usable});
  }
  return ChainLatencyExplainer(links, rules_);
}

absl::StatusOr<v1::ExplainChainResponse> ChainLatencyView::Explain(const std::string& workload_id) const {
  if (!entity::IsValidEntityId(workload_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload_id \"", workload_id, "\" must match ", entity::kEntityIdRule));
  }
  const std::optional<v1::Workload> workload = model_.FindWorkload(workload_id);
  if (!workload) return absl::NotFoundError(absl::StrCat("no agent chain ", workload_id, ": no such workload"));
  if (!workload->has_chain()) {
    return absl::NotFoundError(absl::StrCat("no agent chain ", workload_id, ": it is an elephant flow"));
  }
  const std::shared_ptr<const v1::Plan> plan = planner_.CurrentPlan();
  if (!plan) return absl::UnavailableError("no plan yet");
  for (const v1::ChainPlan& chain : plan->chains()) {
    if (chain.workload_id() != workload_id) continue;
    v1::ExplainChainResponse response;
    *response.mutable_chain() = Explainer().Explain(chain, model_.ServiceReports(workload_id), clock_());
    response.mutable_chain()->set_plan_generation(plan->generation());
    *response.mutable_plan() = chain;
    return response;
  }
  return absl::UnavailableError(
      absl::StrCat("plan generation ", plan->generation(), " does not hold chain ", workload_id, " yet"));
}

absl::StatusOr<v1::ListStragglersResponse> ChainLatencyView::Stragglers(uint32_t limit) const {
  if (limit > kMaxStragglerLimit) {
    return absl::InvalidArgumentError(absl::StrCat("limit must be at most ", kMaxStragglerLimit));
  }
  if (limit == 0) limit = kDefaultStragglerLimit;
  v1::ListStragglersResponse response;
  const std::shared_ptr<const v1::Plan> plan = planner_.CurrentPlan();
  if (!plan) return response;
  response.set_plan_generation(plan->generation());
  const ChainLatencyExplainer explainer = Explainer();
  std::map<std::string, std::vector<HopReport>> reports;  // by chain
  for (HopReport& report : model_.ServiceReports()) {
    const std::string workload_id = report.report.workload_id();
    reports[workload_id].push_back(std::move(report));
  }
  const int64_t now = clock_();
  const std::vector<HopReport> none;
  std::vector<v1::ChainExplanation> chains;
  chains.reserve(plan->chains_size());
  for (const v1::ChainPlan& chain : plan->chains()) {
    auto it = reports.find(chain.workload_id());
    chains.push_back(explainer.Explain(chain, it == reports.end() ? none : it->second, now));
  }
  for (v1::Straggler& straggler : WorstHops(chains, limit)) *response.add_stragglers() = std::move(straggler);
  return response;
}

std::vector<health::PathObservation> ChainLatencyView::PathEvidence() const {
  std::vector<health::PathObservation> paths;
  const std::shared_ptr<const v1::Plan> plan = planner_.CurrentPlan();
  if (!plan) return paths;
  std::map<std::string, std::vector<HopReport>> reports;  // by chain
  for (HopReport& report : model_.ServiceReports()) {
    const std::string workload_id = report.report.workload_id();
    if (report.report.network_rtt_us() > 0) reports[workload_id].push_back(std::move(report));
  }
  if (reports.empty()) return paths;
  const ChainLatencyExplainer explainer = Explainer();
  const int64_t now = clock_();
  for (const v1::ChainPlan& chain : plan->chains()) {
    auto it = reports.find(chain.workload_id());
    if (it == reports.end()) continue;
    const v1::ChainExplanation explained = explainer.Explain(chain, it->second, now);
    std::set<uint32_t> slow_hops;
    for (const v1::Straggler& deviating : explained.deviating()) {
      if (deviating.component() == v1::LATENCY_COMPONENT_NETWORK) slow_hops.insert(deviating.hop());
    }
    for (const v1::HopLatency& hop : explained.hops()) {
      if (hop.network_source() != v1::NETWORK_SOURCE_SERVICE_REPORT || hop.network_link_ids().empty()) continue;
      paths.push_back({.id = absl::StrCat("chain ", chain.workload_id(), " hop ", hop.hop()),
                       .link_ids = {hop.network_link_ids().begin(), hop.network_link_ids().end()},
                       .bad = slow_hops.count(hop.hop()) > 0,
                       .at_unix_ms = now - hop.report_age_ms()});
    }
  }
  return paths;
}

}  // namespace geodesic::pathcomp
