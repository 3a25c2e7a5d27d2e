#pragma once
// Telemetry.Report: one stream per site agent. Authenticates the agent by its
// certificate, lets it report only its own facility's links, applies every
// message exactly once (see telemetry.proto) and asks the planner to re-solve
// when a link's state changes.
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "geodesic/v1/telemetry.grpc.pb.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/model.h"
#include "pathcomp/service/planner.h"

namespace geodesic::pathcomp {

class TelemetryService final : public v1::Telemetry::Service {
 public:
  TelemetryService(Model& model, Planner& planner, EventBus& events, std::string replica_id);

  grpc::Status Report(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream)
      override;

  // Ends the streams of these facilities' agents (they reconnect at once and,
  // their sessions having been reset, send a full snapshot).
  void Resync(const std::vector<std::string>& facility_ids);

 private:
  void Register(const std::string& facility_id, grpc::ServerContext* context);
  void Unregister(const std::string& facility_id, grpc::ServerContext* context);

  Model& model_;
  Planner& planner_;
  EventBus& events_;
  const std::string replica_id_;

  std::mutex streams_mu_;
  std::map<std::string, std::set<grpc::ServerContext*>> streams_;  // by facility
};

}  // namespace geodesic::pathcomp
