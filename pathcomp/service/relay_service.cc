#include "pathcomp/service/relay_service.h"

#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "daemon/clock.h"
#include "daemon/log.h"
#include "pathcomp/model/model_queries.h"
#include "pathcomp/service/grpc_status.h"
#include "pathcomp/service/tenant_view.h"
#include "tls/peer_identity.h"

namespace geodesic::pathcomp {
namespace {

bool WriteAll(grpc::ServerWriter<v1::RelayEvent>* writer, const std::vector<v1::RelayEvent>& events) {
  for (const v1::RelayEvent& event : events) {
    if (!writer->Write(event)) return false;
  }
  return true;
}

}  // namespace

RelayService::RelayService(Model& model, Planner& planner, EventBus& events, RelayServiceOptions options)
    : model_(model), planner_(planner), events_(events), options_(options) {}

grpc::Status RelayService::Watch(grpc::ServerContext* context, const v1::RelayWatchRequest* request,
                                 grpc::ServerWriter<v1::RelayEvent>* writer) {
  const absl::StatusOr<tls::Identity> caller = tls::PeerIdentity(*context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  const absl::StatusOr<RelayScope> scope = ScopeFor(*caller, *request);
  if (!scope.ok()) return ToGrpcStatus(scope.status());
  if (auto status = CheckRequestedWorkloads(*scope, model_.Workloads()); !status.ok()) {
    return ToGrpcStatus(status);
  }
  daemon::LogInfo("relay watch", {{"caller", caller->spiffe_id},
                                  {"workloads", std::to_string(scope->workload_ids.size())}});

  // Subscribed before the first view: nothing after it is missed.
  const EventBus::SubscriptionPtr subscription = events_.Subscribe();
  RelayDiff diff(scope->operator_view, options_.diff);
  // One look at the model: the caller's view and what the diff needs with it.
  struct Look {
    std::shared_ptr<const v1::Plan> plan;
    std::vector<v1::Link> links;
    RelayDiff::View view;
  };
  auto look = [&] {
    Look now;
    now.plan = model_.CurrentPlan();
    v1::ListLinksResponse links = ListLinks(model_, {});
    now.links.assign(std::make_move_iterator(links.mutable_links()->begin()),
                     std::make_move_iterator(links.mutable_links()->end()));
    now.view = BuildTenantView(*scope, now.plan.get(), now.links, model_.Workloads());
    return now;
  };
  auto snapshot = [&](bool resync) {
    Look now = look();
    return diff.Snapshot(now.view, now.plan ? now.plan->generation() : 0, resync, daemon::UnixNowMs(),
                         RelayDiff::Clock::now());
  };

  bool open = WriteAll(writer, snapshot(false));
  uint64_t dropped = subscription->dropped();
  while (open && !context->IsCancelled() && !planner_.stopping()) {
    // Wake on an event or the poll timer; take whatever else is queued, so a
    // burst of events costs one look.
    std::optional<v1::Event> event =
        subscription->Next(std::chrono::steady_clock::now() + options_.poll_interval);
    while (event) event = subscription->Next(std::chrono::steady_clock::now());
    if (subscription->dropped() != dropped) {
      dropped = subscription->dropped();
      open = WriteAll(writer, snapshot(true));
      continue;
    }
    Look now = look();
    const RelayPlanInfo plan{.generation = now.plan ? now.plan->generation() : 0,
                             .reason = now.plan ? now.plan->reason() : ""};
    open = WriteAll(writer, diff.Update(now.view, plan, now.links, daemon::UnixNowMs(), RelayDiff::Clock::now()));
  }
  events_.Unsubscribe(subscription);
  return grpc::Status::OK;
}

}  // namespace geodesic::pathcomp
