#include "pathcomp/service/telemetry_service.h"

#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "google/protobuf/arena.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "entity/entity_id.h"
#include "entity/oper_state_name.h"
#include "pathcomp/service/grpc_status.h"
#include "tls/peer_identity.h"

namespace geodesic::pathcomp {
namespace {

// The arena block each stream parses its reports into (a larger report, a
// snapshot batch, takes more blocks of this size until the next report).
constexpr size_t kReportArenaBlock = 64 << 10;

}  // namespace

TelemetryService::TelemetryService(Model& model, Planner& planner, EventBus& events,
                                   std::string replica_id, TelemetryMetrics& metrics,
                                   std::chrono::milliseconds measurement_flush)
    : model_(model),
      planner_(planner),
      events_(events),
      replica_id_(std::move(replica_id)),
      metrics_(metrics),
      measurement_flush_(measurement_flush) {}

TelemetryService::~TelemetryService() { StopFlusher(); }

void TelemetryService::StartFlusher() {
  std::lock_guard lock(flusher_mu_);
  if (flusher_.joinable()) return;
  stop_flusher_ = false;
  flusher_ = std::thread([this] {
    std::unique_lock wait_lock(flusher_mu_);
    // A write starts every `measurement_flush_`, or as soon as the last one
    // ended when it took longer (reports go on being applied while a write
    // runs: each write takes what arrived during the one before, so a
    // measurement waits at most the interval and two writes' time).
    auto next = std::chrono::steady_clock::now() + measurement_flush_;
    while (!flusher_cv_.wait_until(wait_lock, next, [this] { return stop_flusher_; })) {
      next = std::chrono::steady_clock::now() + measurement_flush_;
      wait_lock.unlock();
      if (auto written = model_.FlushMeasurements(); !written.ok()) {
        daemon::LogError("measurements not written (kept for the next try)",
                         {{"error", written.status().ToString()}});
      }
      wait_lock.lock();
    }
  });
}

void TelemetryService::StopFlusher() {
  {
    std::lock_guard lock(flusher_mu_);
    if (!flusher_.joinable()) return;
    stop_flusher_ = true;
  }
  flusher_cv_.notify_all();
  flusher_.join();
  if (auto written = model_.FlushMeasurements(/*sync=*/true); !written.ok()) {
    daemon::LogError("measurements not written at shutdown", {{"error", written.status().ToString()}});
  }
}

grpc::Status TelemetryService::Report(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream) {
  auto identity = tls::PeerIdentity(*context);
  if (!identity.ok()) {
    CountRefusal(identity.status());
    return ToGrpcStatus(identity.status());
  }
  if (identity->kind != tls::Identity::Kind::kAgent) {
    ++refused_not_permitted_;
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(identity->spiffe_id, " is not a site agent"));
  }

  v1::AgentMessage first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  if (!first.has_hello()) {
    ++refused_invalid_;
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the stream must open with hello");
  }
  const v1::AgentHello hello = first.hello();
  if (hello.facility_id() != identity->facility_id) {
    ++refused_not_permitted_;
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("certificate of facility ", identity->facility_id,
                                     " may not report for facility ", hello.facility_id()));
  }
  if (!entity::IsValidEntityId(hello.agent_id())) {
    ++refused_invalid_;
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("agent_id \"", hello.agent_id(), "\" is not a valid id"));
  }
  if (hello.incarnation() == 0) {
    ++refused_invalid_;
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "incarnation must be non-zero");
  }
  auto session = model_.OpenSession(hello.facility_id(), hello.agent_id(), hello.incarnation());
  if (!session.ok()) return ToGrpcStatus(session.status());
  daemon::LogInfo("agent connected", {{"agent", identity->spiffe_id},
                                      {"incarnation", std::to_string(hello.incarnation())},
                                      {"resume_after_seq",
                                       std::to_string(session->last_applied_seq())}});

  if (session->last_applied_seq() == 0) metrics_.RecordSessionReset(hello.facility_id());
  Register(hello.facility_id(), context);
  struct Unregistering {
    TelemetryService* service;
    std::string facility_id;
    grpc::ServerContext* context;
    ~Unregistering() { service->Unregister(facility_id, context); }
  } unregistering{this, hello.facility_id(), context};

  v1::ControllerMessage reply;
  reply.mutable_hello_ack()->set_replica_id(replica_id_);
  reply.mutable_hello_ack()->set_last_applied_seq(session->last_applied_seq());
  reply.mutable_hello_ack()->set_snapshot_required(session->last_applied_seq() == 0);
  if (!stream->Write(reply)) return grpc::Status::OK;

  // Each report is parsed into an arena reset after it: a delta's link
  // reports are not allocated and freed one by one (at a million link
  // updates a second that was a tenth of pathcomp's CPU). The first block,
  // room for a delta of several hundred links, is kept across reports.
  auto first_block = std::make_unique<char[]>(kReportArenaBlock);
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = first_block.get();
  arena_options.initial_block_size = kReportArenaBlock;
  arena_options.max_block_size = kReportArenaBlock;
  google::protobuf::Arena arena(arena_options);
  while (true) {
    arena.Reset();
    v1::AgentMessage& message = *google::protobuf::Arena::CreateMessage<v1::AgentMessage>(&arena);
    if (!stream->Read(&message)) break;
    const auto read_at = std::chrono::steady_clock::now();
    if (const size_t bytes = message.ByteSizeLong(); bytes > kMaxReportBytes) {
      ++refused_oversized_;
      daemon::LogWarn("telemetry refused", {{"agent", identity->spiffe_id},
                                            {"error", absl::StrCat("report of ", bytes, " bytes")}});
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("a report of ", bytes, " bytes exceeds the limit of ", kMaxReportBytes,
                                       ": send snapshots in batches"));
    }
    auto result = model_.ApplyReport(hello.facility_id(), hello.agent_id(), hello.incarnation(),
                                     message, identity->spiffe_id);
    if (!result.ok()) {
      CountRefusal(result.status());
      daemon::LogWarn("telemetry refused", {{"agent", identity->spiffe_id},
                                            {"code", absl::StatusCodeToString(result.status().code())},
                                            {"error", std::string(result.status().message())}});
      return ToGrpcStatus(result.status());
    }
    ++(result->duplicate ? duplicates_ : applied_);
    service_reports_kept_ += result->service_reports_kept;
    if (!result->service_reports_dropped.empty()) {
      service_reports_dropped_ += result->service_reports_dropped.size();
      daemon::LogWarn("service latency reports left out",
                      {{"agent", identity->spiffe_id},
                       {"count", std::to_string(result->service_reports_dropped.size())},
                       {"first", result->service_reports_dropped.front()}});
    }
    if (!result->duplicate && message.has_delta()) RecordMeasurementAge(message.delta());
    if (!result->duplicate && observer_) observer_(hello.facility_id(), message, daemon::UnixNowMs());
    if (!result->plane_changes.empty()) {
      std::string reason;
      for (const PlaneChange& change : result->plane_changes) {
        if (!reason.empty()) reason += ", ";
        absl::StrAppend(&reason, "fabric ", hello.facility_id(), " plane ", change.plane, " ",
                        entity::OperStateName(change.current));
        if (change.failed_rails > 0) absl::StrAppend(&reason, " (", change.failed_rails, " rails down)");
      }
      daemon::LogInfo("fabric plane health changed", {{"agent", identity->spiffe_id}, {"changes", reason}});
      planner_.RequestSolve(SolveCause::kTelemetry, absl::StrCat(reason, " (", hello.facility_id(), " agent)"));
    }
    if (!result->changes.empty()) {
      std::string reason;
      for (const auto& change : result->changes) {
        if (!reason.empty()) reason += ", ";
        absl::StrAppend(&reason, "link ", change.link_id, " ", entity::OperStateName(change.current));
        v1::Event event;
        event.set_at_unix_ms(daemon::UnixNowMs());
        auto& health = *event.mutable_health();
        health.set_link_id(change.link_id);
        health.set_previous(change.previous);
        health.set_current(change.current);
        health.set_reported_by(identity->spiffe_id);
        events_.Publish(event);
      }
      daemon::LogInfo("link state changed", {{"agent", identity->spiffe_id}, {"changes", reason}});
      metrics_.RecordLinkStateChanges(result->changes.size());
      planner_.RequestSolve(SolveCause::kTelemetry, absl::StrCat(reason, " (", hello.facility_id(), " agent)"));
    }
    reply.Clear();
    reply.mutable_ack()->set_seq(result->seq);
    if (!stream->Write(reply)) break;
    metrics_.RecordCommit(std::chrono::steady_clock::now() - read_at);
  }
  return grpc::Status::OK;
}

void TelemetryService::RecordMeasurementAge(const v1::Update& delta) {
  int64_t oldest_unix_ms = 0;
  for (const v1::LinkReport& link : delta.links()) {
    const int64_t measured = link.health().measured_at_unix_ms();
    if (measured > 0 && (oldest_unix_ms == 0 || measured < oldest_unix_ms)) oldest_unix_ms = measured;
  }
  if (oldest_unix_ms > 0) metrics_.RecordMeasurementAge(std::chrono::milliseconds(daemon::UnixNowMs() - oldest_unix_ms));
}

void TelemetryService::CountRefusal(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      ++refused_not_permitted_;
      break;
    case absl::StatusCode::kFailedPrecondition:
      ++refused_out_of_order_;
      break;
    default:
      ++refused_invalid_;
  }
}

TelemetryCounters TelemetryService::counters() const {
  return TelemetryCounters{.applied = applied_,
                           .duplicates = duplicates_,
                           .refused_invalid = refused_invalid_,
                           .refused_not_permitted = refused_not_permitted_,
                           .refused_out_of_order = refused_out_of_order_,
                           .refused_oversized = refused_oversized_,
                           .service_reports_kept = service_reports_kept_,
                           .service_reports_dropped = service_reports_dropped_};
}

std::map<std::string, size_t> TelemetryService::ConnectedStreams() const {
  std::lock_guard lock(streams_mu_);
  std::map<std::string, size_t> connected;
  for (const auto& [facility_id, contexts] : streams_) connected[facility_id] = contexts.size();
  return connected;
}

void TelemetryService::Register(const std::string& facility_id, grpc::ServerContext* context) {
  std::lock_guard lock(streams_mu_);
  streams_[facility_id].insert(context);
}

void TelemetryService::Unregister(const std::string& facility_id, grpc::ServerContext* context) {
  std::lock_guard lock(streams_mu_);
  auto it = streams_.find(facility_id);
  if (it == streams_.end()) return;
  it->second.erase(context);
  if (it->second.empty()) streams_.erase(it);
}

void TelemetryService::Resync(const std::vector<std::string>& facility_ids) {
  std::lock_guard lock(streams_mu_);
  for (const auto& facility_id : facility_ids) {
    auto it = streams_.find(facility_id);
    if (it == streams_.end()) continue;
    daemon::LogInfo("asking agents for a fresh snapshot",
                    {{"facility", facility_id}, {"streams", std::to_string(it->second.size())}});
    for (grpc::ServerContext* context : it->second) context->TryCancel();
  }
}

}  // namespace geodesic::pathcomp
