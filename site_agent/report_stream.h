#pragma once
// One long-lived Telemetry.Report stream to one pathcomp replica, losing
// nothing and repeating nothing (see telemetry.proto):
//  - every report gets the next sequence number and waits in an outbox until
//    the replica acknowledges it;
//  - after any disconnect the stream reconnects (exponential backoff with
//    jitter), learns the last sequence the replica applied, and resends the rest;
//  - when the outbox passes its bound, or the replica holds nothing of this
//    incarnation, the outbox collapses into a fresh snapshot of the current state;
//  - service latency reports published alone join the newest delta no stream
//    has been handed yet, the latest per (workload, hop) winning, so a
//    disconnected agent buffers one set of them rather than one message per post.
// Thread-safe. Owns one connection thread (plus a reader per live stream)
// between Start() and Stop().
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "geodesic/v1/telemetry.grpc.pb.h"

namespace geodesic::site_agent {

struct ReportStreamOptions {
  std::string address;
  v1::AgentHello hello;
  size_t outbox_limit = 10'000;
  size_t snapshot_batch_links = 500;
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  // Called on the stream's reader thread with every acknowledged seq
  // (benchmarks and tests measure with it); must not block.
  std::function<void(uint64_t seq)> on_ack;
};

// What one stream has done since it was made (counters) and where it is now.
struct ReportStreamStats {
  uint64_t messages_sent = 0;     // written to a stream: snapshot batches, sync markers, deltas
  uint64_t messages_resent = 0;   // of those, written again after a reconnect (not acknowledged before)
  uint64_t messages_acked = 0;    // acknowledged by the replica (or found applied at a reconnect)
  uint64_t snapshots = 0;         // full-state snapshots queued (first session, outbox overflow, replica lost state)
  uint64_t service_reports_coalesced = 0;  // publications of service reports that joined a queued delta
  uint64_t sessions_opened = 0;   // sessions the replica accepted (hello answered): the first and every reconnect
  size_t outbox_messages = 0;     // unacknowledged now
  bool connected = false;
};

class ReportStream {
 public:
  // `full_state` returns every link's and fabric plane's current health and
  // the latest service reports (seq unset), for snapshots.
  using FullState = std::function<v1::Update()>;

  ReportStream(ReportStreamOptions options, std::shared_ptr<grpc::ChannelCredentials> credentials,
               FullState full_state);
  ~ReportStream();

  void Start();
  void Stop();

  // Queues a delta with these links' and planes' health and these service
  // reports; returns its seq, or 0 when a coming snapshot carries this state
  // instead. Service reports alone may join a queued delta (its seq).
  uint64_t Publish(const std::vector<v1::LinkReport>& links,
                   const std::vector<v1::FabricPlaneHealth>& planes = {},
                   const std::vector<v1::ServiceLatencyReport>& service_reports = {});

  uint64_t last_acked_seq() const;
  bool connected() const;
  ReportStreamStats stats() const;

 private:
  void Run();
  // One connected session; returns when the stream breaks or Stop() is called.
  // True when the replica answered hello (the backoff resets).
  bool Session();
  void EnqueueSnapshotLocked(uint64_t first_seq);  // requires mu_
  // Merges `reports` into the newest queued delta when no stream has been
  // handed it yet; false when there is none such. Requires mu_.
  bool CoalesceLocked(const std::vector<v1::ServiceLatencyReport>& reports);
  // Drops acknowledged messages (seq <= `seq`) from the outbox. Requires mu_.
  void PopAckedLocked(uint64_t seq);

  const ReportStreamOptions options_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const FullState full_state_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Unacknowledged, ascending seq; shared with the writer, which sends a
  // message without holding the lock (and without copying it).
  std::deque<std::shared_ptr<const v1::AgentMessage>> outbox_;
  uint64_t next_seq_ = 1;
  uint64_t last_acked_seq_ = 0;
  bool needs_snapshot_ = true;  // the outbox no longer covers what the replica lacks
  bool connected_ = false;
  bool stopping_ = false;
  // The highest seq handed to a stream since the outbox last started over;
  // writing it again is a resend.
  uint64_t highest_written_seq_ = 0;
  ReportStreamStats stats_;  // counters only; outbox and connected are read live
  grpc::ClientContext* live_context_ = nullptr;
  std::thread thread_;
};

}  // namespace geodesic::site_agent
