#pragma once
// Telemetry.Report: one stream per site agent. Authenticates the agent by its
// certificate, lets it report only its own facility's links, applies every
// message exactly once (see telemetry.proto) and asks the planner to re-solve
// when a link's state or a fabric plane's health changes. Every refused
// message is counted by reason (and ends its stream: the agent resumes
// from its last acknowledged report). Commit times, session resets and link
// state changes go to TelemetryMetrics as they happen.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
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
  // Service latency reports kept, and left out (about no hop of the model).
  uint64_t service_reports_kept = 0;
  uint64_t service_reports_dropped = 0;
};

// One agent message may not exceed this (a 500-link snapshot batch is ~40 KB).
inline constexpr size_t kMaxReportBytes = 1 << 20;

// How often the measurements applied and not yet written (perishable reports,
// Model::ApplyReport) are written to the store: pathcomp's config
// `telemetry: {measurement_flush_ms: N}`. After a crash a link's stored
// measurements are at most this (plus the write's own time) older than the
// last report acknowledged for it.
inline constexpr std::chrono::milliseconds kDefaultMeasurementFlush{100};

class TelemetryService final : public v1::Telemetry::Service {
 public:
  // `metrics` must outlive the service.
  TelemetryService(Model& model, Planner& planner, EventBus& events, std::string replica_id,
                   TelemetryMetrics& metrics,
                   std::chrono::milliseconds measurement_flush = kDefaultMeasurementFlush);
  ~TelemetryService() override;

  // Starts writing the model's unwritten measurements every
  // `measurement_flush` (Model::FlushMeasurements). Stop() stops that and
  // writes and syncs what is left: call it once the streams have ended.
  void StartFlusher();
  void StopFlusher();

  grpc::Status Report(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream)
      override;

  // Ends the streams of these facilities' agents (they reconnect at once and,
  // their sessions having been reset, send a full snapshot).
  void Resync(const std::vector<std::string>& facility_ids);

  // Called with every message applied (not a duplicate), the facility of
  // the agent that sent it and the time it was applied (Unix ms), on the
  // stream's thread; set before serving.
  using Observer =
      std::function<void(const std::string& facility_id, const v1::AgentMessage& message, int64_t now_unix_ms)>;
  void SetObserver(Observer observer) { observer_ = std::move(observer); }

  TelemetryCounters counters() const;
  // Open Report streams by facility (facilities with none are missing).
  std::map<std::string, size_t> ConnectedStreams() const;

 private:
  void Register(const std::string& facility_id, grpc::ServerContext* context);
  void Unregister(const std::string& facility_id, grpc::ServerContext* context);
  void CountRefusal(const absl::Status& status);
  // The age of `delta`'s oldest link measurement, into the metrics.
  void RecordMeasurementAge(const v1::Update& delta);

  Model& model_;
  Planner& planner_;
  EventBus& events_;
  const std::string replica_id_;
  TelemetryMetrics& metrics_;
  Observer observer_;
  std::atomic<uint64_t> applied_{0}, duplicates_{0}, refused_invalid_{0}, refused_not_permitted_{0},
      refused_out_of_order_{0}, refused_oversized_{0}, service_reports_kept_{0}, service_reports_dropped_{0};

  const std::chrono::milliseconds measurement_flush_;
  std::mutex flusher_mu_;
  std::condition_variable flusher_cv_;
  bool stop_flusher_ = false;
  std::thread flusher_;

  mutable std::mutex streams_mu_;
  std::map<std::string, std::set<grpc::ServerContext*>> streams_;  // by facility
};

}  // namespace geodesic::pathcomp
