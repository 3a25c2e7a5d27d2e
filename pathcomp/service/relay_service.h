#pragma once
// Relay (relay.proto): tenants watch their own workloads' paths, operators
// anyone's. The shell only: it authorizes the caller, wakes on the event bus
// (plans, link states, intents) and on a timer (measurements are not events),
// recomputes the caller's view (tenant_view.h) and sends what changed
// (relay_diff.h). A watcher that fell behind on the bus gets a fresh snapshot.
// Each stream costs one server thread while open; pathcomp never waits for a
// watcher (the bus drops for slow ones). Thread-safe.
#include <chrono>

#include "geodesic/v1/relay.grpc.pb.h"
#include "pathcomp/model/model.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/planner.h"
#include "pathcomp/service/relay_diff.h"

namespace geodesic::pathcomp {

struct RelayServiceOptions {
  // How often a stream looks at the measurements when nothing woke it.
  std::chrono::milliseconds poll_interval{500};
  RelayDiffOptions diff{};
};

class RelayService final : public v1::Relay::Service {
 public:
  // `model`, `planner` and `events` must outlive the service.
  RelayService(Model& model, Planner& planner, EventBus& events, RelayServiceOptions options = {});

  // UNAUTHENTICATED without a geodesic certificate; PERMISSION_DENIED for a
  // caller that is neither a tenant nor an operator, or a tenant naming
  // another tenant; INVALID_ARGUMENT for a malformed request; NOT_FOUND for a
  // requested id the caller may not see (worded as for one that does not
  // exist). Otherwise streams until the caller cancels or pathcomp stops.
  grpc::Status Watch(grpc::ServerContext* context, const v1::RelayWatchRequest* request,
                     grpc::ServerWriter<v1::RelayEvent>* writer) override;

 private:
  Model& model_;
  Planner& planner_;
  EventBus& events_;
  const RelayServiceOptions options_;
};

}  // namespace geodesic::pathcomp
