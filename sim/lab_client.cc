#include "sim/lab_client.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace geodesic::sim {
namespace {

std::chrono::system_clock::time_point Deadline(std::chrono::milliseconds timeout) {
  return std::chrono::system_clock::now() + timeout;
}

}  // namespace

std::string ConvergenceGap(const v1::GetPlanResponse& response, const std::vector<std::string>& facilities,
                           uint64_t min_model_revision) {
  std::vector<std::string> gaps;
  if (response.replan_pending()) {
    gaps.push_back(absl::StrCat("a re-plan is pending (model revision ", response.model_revision(),
                                ", plan from revision ", response.plan_model_revision(), ")"));
  }
  if (response.plan_model_revision() < min_model_revision) {
    gaps.push_back(absl::StrCat("the plan is from model revision ", response.plan_model_revision(), ", not yet ",
                                min_model_revision));
  }
  const uint64_t generation = response.plan().generation();
  std::map<std::string, const v1::SiteInstallStatus*> sites;
  for (const auto& site : response.sites()) sites[site.facility_id()] = &site;
  std::vector<std::string> behind;
  for (const std::string& facility : facilities) {
    auto it = sites.find(facility);
    if (it == sites.end()) {
      behind.push_back(absl::StrCat(facility, " (no install reported)"));
      continue;
    }
    const v1::SiteInstallStatus& site = *it->second;
    if (site.generation() != generation) {
      behind.push_back(absl::StrCat(facility, " (at ", site.generation(), ")"));
    } else if (!site.installed()) {
      behind.push_back(absl::StrCat(facility, " (refused: ", site.error(), ")"));
    } else if (!site.sent_to_routers()) {
      behind.push_back(absl::StrCat(facility, " (not yet at its routers)"));
    }
  }
  if (!behind.empty()) {
    gaps.push_back(absl::StrCat("generation ", generation, " is not installed at ", absl::StrJoin(behind, ", ")));
  }
  return absl::StrJoin(gaps, "; ");
}

LabClient::LabClient(LocalLab& lab, int replica, std::string operator_name)
    : lab_(lab), replica_(replica), operator_name_(std::move(operator_name)) {}

absl::StatusOr<v1::GetPlanResponse> LabClient::Plan(std::chrono::milliseconds timeout) const {
  auto stub = lab_.OperatorClient(operator_name_, replica_);
  grpc::ClientContext context;
  context.set_deadline(Deadline(timeout));
  v1::GetPlanResponse response;
  const grpc::Status status = stub->GetPlan(&context, {}, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat("GetPlan from ", lab_.ReplicaName(replica_), ": ", status.error_message()));
  }
  return response;
}

absl::StatusOr<std::vector<v1::Link>> LabClient::Links(std::chrono::milliseconds timeout) const {
  auto stub = lab_.OperatorClient(operator_name_, replica_);
  grpc::ClientContext context;
  context.set_deadline(Deadline(timeout));
  v1::ListLinksResponse response;
  const grpc::Status status = stub->ListLinks(&context, {}, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat("ListLinks from ", lab_.ReplicaName(replica_), ": ", status.error_message()));
  }
  return std::vector<v1::Link>(response.links().begin(), response.links().end());
}

std::map<std::string, v1::OperState> LabClient::LinkStates() const {
  std::map<std::string, v1::OperState> states;
  auto links = Links();
  if (!links.ok()) return states;
  for (const auto& link : *links) states[link.id()] = link.health().state();
  return states;
}

absl::StatusOr<v1::GetPlanResponse> LabClient::WaitConverged(const ConvergedOptions& options) const {
  std::vector<std::string> facilities = options.facilities;
  if (!options.at_routers) {
    facilities.clear();
  } else if (facilities.empty()) {
    for (const auto& facility : lab_.topology().facilities) facilities.push_back(facility.id());
  }
  std::string gap = "no answer yet";
  v1::GetPlanResponse converged;
  const absl::Status waited = WaitUntil(
      absl::StrCat("convergence (no re-plan pending, plan from model revision >= ", options.min_model_revision,
                   facilities.empty() ? "" : ", its generation at the routers of ", absl::StrJoin(facilities, ","),
                   ")"),
      options.timeout, [&] {
        auto plan = Plan();
        if (!plan.ok()) {
          gap = plan.status().ToString();
          return false;
        }
        gap = ConvergenceGap(*plan, facilities, options.min_model_revision);
        if (!gap.empty()) return false;
        converged = *std::move(plan);
        return true;
      });
  if (!waited.ok()) return absl::DeadlineExceededError(absl::StrCat(waited.message(), "; still: ", gap));
  return converged;
}

absl::Status LabClient::WaitLinksIn(v1::OperState state, std::chrono::milliseconds timeout) const {
  std::string off;
  const absl::Status waited =
      WaitUntil(absl::StrCat("every link ", v1::OperState_Name(state)), timeout, [&] {
        const auto states = LinkStates();
        std::vector<std::string> others;
        for (const auto& [id, link_state] : states) {
          if (link_state != state) others.push_back(absl::StrCat(id, "=", v1::OperState_Name(link_state)));
        }
        off = states.size() != lab_.topology().links.size()
                  ? absl::StrCat(states.size(), " of ", lab_.topology().links.size(), " links known")
                  : absl::StrJoin(others, ", ");
        return states.size() == lab_.topology().links.size() && others.empty();
      });
  if (!waited.ok()) return absl::DeadlineExceededError(absl::StrCat(waited.message(), "; still: ", off));
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> LabClient::WaitLinkStates(const std::vector<std::string>& link_ids, v1::OperState state,
                                                   std::chrono::milliseconds timeout) const {
  const absl::Status waited = WaitUntil(
      absl::StrCat("links ", absl::StrJoin(link_ids, ","), " ", v1::OperState_Name(state)), timeout, [&] {
        const auto states = LinkStates();
        for (const std::string& id : link_ids) {
          auto it = states.find(id);
          if (it == states.end() || it->second != state) return false;
        }
        return true;
      });
  if (!waited.ok()) return waited;
  // Read after the states: the revision covers the change that made them.
  auto plan = Plan();
  if (!plan.ok()) return plan.status();
  return plan->model_revision();
}

}  // namespace geodesic::sim
