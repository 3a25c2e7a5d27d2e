#pragma once
// Telemetry.Report: one stream per site agent. Authenticates the agent by its
// certificate, lets it report only its own facility's links, applies every
// message exactly once (see telemetry.proto) and asks the planner to re-solve
// when a link's state or a fabric plane's health changes. Every refused
// message is counted by reason (and ends its stream: the agent resumes
// from its last acknowledged report). Commit times, session resets and link
// state changes go to TelemetryMetrics as they happen.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "geodesic/v1/telemetry.grpc.pb.h"
#include "pathcomp/model/model.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/pathcomp_metrics.h"
#include "pathcomp/service/planner.h"

namespace geodesic::pathcomp {

struct TelemetryCounters {
  uint64_t applied = 0;     // messages applied
  uint64_t duplicates = 0;  // acknowledged again, not re-applied
  uint64_t refused_invalid = 0;        // malformed, unknown link or plane
  uint64_t refused_not_permitted = 0;  // another facility's link, a wrong certificate
  uint64_t refused_out_of_order = 0;   // a sequence gap, no open session
  uint64_t refused_oversized = 0;      // above kMaxReportBytes
};

// One agent message may not exceed this (a 500-link snapshot batch is ~40 KB).
inline constexpr size_t kMaxReportBytes = 1 << 20;

class TelemetryService final : public v1::Telemetry::Service {
 public:
  // `metrics` must outlive the service.
  TelemetryService(Model& model, Planner& planner, EventBus& events, std::string replica_id,
                   TelemetryMetrics& metrics);

  grpc::Status Report(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream)
      override;

  // Ends the streams of these facilities' agents (they reconnect at once and,
  // their sessions having been reset, send a full snapshot).
  void Resync(const std::vector<std::string>& facility_ids);

  // Called with every message applied (not a duplicate) and the time it was
  // applied (Unix ms), on the stream's thread; set before serving.
  using Observer = std::function<void(const v1::AgentMessage& message, int64_t now_unix_ms)>;
  void SetObserver(Observer observer) { observer_ = std::move(observer); }

  TelemetryCounters counters() const;
  // Open Report streams by facility (facilities with none are missing).
  std::map<std::string, size_t> ConnectedStreams() const;

 private:
  void Register(const std::string& facility_id, grpc::ServerContext* context);
  void Unregister(const std::string& facility_id, grpc::ServerContext* context);
  void CountRefusal(const absl::Status& status);

  Model& model_;
  Planner& planner_;
  EventBus& events_;
  const std::string replica_id_;
  TelemetryMetrics& metrics_;
  Observer observer_;
  std::atomic<uint64_t> applied_{0}, duplicates_{0}, refused_invalid_{0}, refused_not_permitted_{0},
      refused_out_of_order_{0}, refused_oversized_{0};

  mutable std::mutex streams_mu_;
  std::map<std::string, std::set<grpc::ServerContext*>> streams_;  // by facility
};

}  // namespace geodesic::pathcomp
