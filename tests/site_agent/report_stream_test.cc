// ReportStream against an in-process fake Telemetry replica on a loopback
// port (insecure credentials): what it sends first, and how it resumes after
// the stream breaks, with nothing lost and nothing applied twice.
#include "site_agent/report_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "sim/wait_until.h"
#include "site_agent/agent_metrics.h"
#include "tests/support/metrics_testing.h"

namespace geodesic::site_agent {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;

uint64_t SeqOf(const v1::AgentMessage& message) {
  switch (message.kind_case()) {
    case v1::AgentMessage::kSnapshot: return message.snapshot().seq();
    case v1::AgentMessage::kDelta: return message.delta().seq();
    case v1::AgentMessage::kSync: return message.sync().seq();
    default: return 0;
  }
}

// A replica that applies messages in sequence and acknowledges each, as
// pathcomp's TelemetryService does; tests make it break a stream on a given
// seq, before or after applying it.
class FakeReplica final : public v1::Telemetry::Service {
 public:
  enum class Break { kBeforeApplying, kAfterApplying };

  grpc::Status Report(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::ControllerMessage, v1::AgentMessage>* stream) override {
    v1::AgentMessage message;
    if (!stream->Read(&message) || !message.has_hello()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "hello");
    v1::ControllerMessage reply;
    {
      std::lock_guard lock(mu_);
      ++sessions_;
      reply.mutable_hello_ack()->set_replica_id("fake");
      reply.mutable_hello_ack()->set_last_applied_seq(applied_);
      reply.mutable_hello_ack()->set_snapshot_required(applied_ == 0);
    }
    if (!stream->Write(reply)) return grpc::Status::OK;
    while (stream->Read(&message)) {
      const uint64_t seq = SeqOf(message);
      std::unique_lock lock(mu_);
      ++received_[seq];
      auto breaking = break_on_.find(seq);
      const bool break_here = breaking != break_on_.end();
      const Break how = break_here ? breaking->second : Break::kBeforeApplying;
      if (break_here) break_on_.erase(breaking);
      if (break_here && how == Break::kBeforeApplying) {
        cv_.notify_all();
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "broken before applying");
      }
      if (seq == applied_ + 1 || (message.has_snapshot() && seq == 1)) {
        if (message.has_snapshot() && seq == 1) applied_messages_.clear();
        applied_ = seq;
        applied_messages_.push_back(message);
      }
      cv_.notify_all();
      if (break_here) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "broken after applying, before the ack");
      lock.unlock();
      v1::ControllerMessage ack;
      ack.mutable_ack()->set_seq(seq);
      if (!stream->Write(ack)) return grpc::Status::OK;
    }
    return grpc::Status::OK;
  }

  void BreakOn(uint64_t seq, Break how) {
    std::lock_guard lock(mu_);
    break_on_[seq] = how;
  }
  // Forgets everything, as a replica that lost its state.
  void Forget() {
    std::lock_guard lock(mu_);
    applied_ = 0;
  }

  // Waits (at most 10 s) until the replica applied `seq`; false on timeout.
  bool WaitApplied(uint64_t seq) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return applied_ >= seq; });
  }

  std::vector<uint64_t> AppliedSeqs() {
    std::lock_guard lock(mu_);
    std::vector<uint64_t> seqs;
    for (const auto& message : applied_messages_) seqs.push_back(SeqOf(message));
    return seqs;
  }
  std::vector<v1::AgentMessage> Applied() {
    std::lock_guard lock(mu_);
    return applied_messages_;
  }
  int Received(uint64_t seq) {
    std::lock_guard lock(mu_);
    return received_[seq];
  }
  int sessions() {
    std::lock_guard lock(mu_);
    return sessions_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t applied_ = 0;
  std::vector<v1::AgentMessage> applied_messages_;
  std::map<uint64_t, int> received_;
  std::map<uint64_t, Break> break_on_;
  int sessions_ = 0;
};

v1::LinkReport Link(const std::string& id, v1::OperState state) {
  v1::LinkReport report;
  report.set_link_id(id);
  report.mutable_health()->set_state(state);
  return report;
}

v1::ServiceLatencyReport ServiceReport(const std::string& workload, uint32_t hop, uint64_t latency_us) {
  v1::ServiceLatencyReport report;
  report.set_workload_id(workload);
  report.set_hop(hop);
  report.set_service_id("retriever");
  report.set_service_latency_us(latency_us);
  report.set_calls(1);
  report.set_window_ms(1000);
  report.set_received_at_unix_ms(1);
  return report;
}

class ReportStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&replica_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    const int port = port_;
    ReportStreamOptions options;
    options.address = "127.0.0.1:" + std::to_string(port);
    options.hello.set_facility_id("iad");
    options.hello.set_agent_id("agent");
    options.hello.set_incarnation(42);
    options.min_backoff = 1ms;
    options.max_backoff = 20ms;
    stream_ = std::make_unique<ReportStream>(options, grpc::InsecureChannelCredentials(), [this] {
      std::lock_guard lock(state_mu_);
      return state_;
    });
    *state_.add_links() = Link("iad-ord", v1::OPER_STATE_UP);
    *state_.add_links() = Link("iad-sea", v1::OPER_STATE_UP);
  }
  void TearDown() override {
    metrics_.Unbind();
    stream_->Stop();
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + 1s);
  }

  // The replica goes away (the stream then has no session) and comes back
  // on the same port, remembering what it applied.
  void StopReplica() {
    server_->Shutdown(std::chrono::system_clock::now() + 1s);
    server_.reset();
  }
  void RestartReplica() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:" + std::to_string(port_), grpc::InsecureServerCredentials());
    builder.RegisterService(&replica_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }

  int port_ = 0;
  FakeReplica replica_;
  std::unique_ptr<grpc::Server> server_;
  std::mutex state_mu_;
  v1::Update state_;
  std::unique_ptr<ReportStream> stream_;
  // The agent's report families, bound to this stream as the agent binds them.
  metrics::Registry registry_{"site_agent", {}};
  AgentMetrics metrics_{registry_};

  void BindMetrics() {
    metrics_.BindReplicas([this] { return std::vector<ReplicaSample>{{.replica = "r1", .stats = stream_->stats()}}; });
  }
  // One of the stream's series as /metrics shows it (nullopt: absent).
  std::optional<double> Scraped(const std::string& name) {
    return testing::SeriesValue(registry_.Scrape(), "geodesic_site_agent_" + name, {{"replica", "r1"}});
  }
  // Waits (at most 10 s) until the stream has the replica's ack for `seq`.
  bool WaitAcked(uint64_t seq) {
    return sim::WaitUntil("the ack of seq " + std::to_string(seq), 10s,
                          [&] { return stream_->last_acked_seq() >= seq; }, 1ms)
        .ok();
  }
};

TEST_F(ReportStreamTest, StartsWithASnapshotAndASyncMarkerThenDeltas) {
  stream_->Start();
  ASSERT_TRUE(replica_.WaitApplied(2)) << "no snapshot and sync within 10 s";
  const uint64_t seq = stream_->Publish({Link("iad-ord", v1::OPER_STATE_DOWN)});
  EXPECT_EQ(seq, 3u);
  ASSERT_TRUE(replica_.WaitApplied(3));
  const auto applied = replica_.Applied();
  ASSERT_EQ(applied.size(), 3u);
  EXPECT_TRUE(applied[0].has_snapshot());
  EXPECT_EQ(applied[0].snapshot().links_size(), 2);
  EXPECT_TRUE(applied[1].has_sync());
  EXPECT_TRUE(applied[2].has_delta());
  EXPECT_EQ(applied[2].delta().links(0).health().state(), v1::OPER_STATE_DOWN);
}

TEST_F(ReportStreamTest, ResumesAfterTheLastAppliedSeqWithoutRepeatingIt) {
  stream_->Start();
  ASSERT_TRUE(replica_.WaitApplied(2));
  // seq 3 is applied but its ack is lost with the stream.
  replica_.BreakOn(3, FakeReplica::Break::kAfterApplying);
  EXPECT_EQ(stream_->Publish({Link("iad-ord", v1::OPER_STATE_DOWN)}), 3u);
  ASSERT_TRUE(replica_.WaitApplied(3));
  EXPECT_EQ(stream_->Publish({Link("iad-sea", v1::OPER_STATE_DOWN)}), 4u);
  ASSERT_TRUE(replica_.WaitApplied(4)) << "no resume within 10 s";
  EXPECT_THAT(replica_.AppliedSeqs(), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(replica_.Received(3), 1) << "seq 3 was applied already: not to be resent";
  EXPECT_GE(replica_.sessions(), 2);
}

TEST_F(ReportStreamTest, ResendsWhatTheReplicaReceivedButDidNotApply) {
  stream_->Start();
  ASSERT_TRUE(replica_.WaitApplied(2));
  replica_.BreakOn(3, FakeReplica::Break::kBeforeApplying);
  EXPECT_EQ(stream_->Publish({Link("iad-ord", v1::OPER_STATE_DOWN)}), 3u);
  ASSERT_TRUE(replica_.WaitApplied(3)) << "seq 3 not resent within 10 s";
  EXPECT_EQ(replica_.Received(3), 2);
  EXPECT_THAT(replica_.AppliedSeqs(), ElementsAre(1, 2, 3));
}

TEST_F(ReportStreamTest, AReplicaThatLostEverythingGetsAFreshSnapshotOfTheCurrentState) {
  stream_->Start();
  ASSERT_TRUE(replica_.WaitApplied(2));
  {
    std::lock_guard lock(state_mu_);
    state_.mutable_links(0)->mutable_health()->set_state(v1::OPER_STATE_DOWN);
  }
  replica_.Forget();
  // The next message breaks the stream; the replica then asks for a snapshot.
  replica_.BreakOn(3, FakeReplica::Break::kBeforeApplying);
  EXPECT_EQ(stream_->Publish({Link("iad-ord", v1::OPER_STATE_DOWN)}), 3u);
  ASSERT_TRUE(replica_.WaitApplied(2)) << "no fresh snapshot within 10 s";
  const auto applied = replica_.Applied();
  ASSERT_EQ(applied.size(), 2u);
  ASSERT_TRUE(applied[0].has_snapshot());
  EXPECT_EQ(applied[0].snapshot().seq(), 1u);
  EXPECT_EQ(applied[0].snapshot().links(0).health().state(), v1::OPER_STATE_DOWN);
  EXPECT_TRUE(applied[1].has_sync());
}

TEST_F(ReportStreamTest, MetricsCountWhatWasSentAndAcknowledged) {
  BindMetrics();
  EXPECT_EQ(Scraped("reports_sent_total"), 0.0);
  EXPECT_EQ(Scraped("pathcomp_connected"), 0.0);
  stream_->Start();
  ASSERT_TRUE(replica_.WaitApplied(2));
  EXPECT_EQ(stream_->Publish({Link("iad-ord", v1::OPER_STATE_DOWN)}), 3u);
  ASSERT_TRUE(WaitAcked(3)) << "seq 3 not acknowledged within 10 s";
  // Snapshot, sync marker, delta: written once each and acknowledged.
  EXPECT_EQ(Scraped("reports_sent_total"), 3.0);
  EXPECT_EQ(Scraped("reports_acked_total"), 3.0);
  EXPECT_EQ(Scraped("reports_resent_total"), 0.0);
  EXPECT_EQ(Scraped("report_outbox_messages"), 0.0);
  EXPECT_EQ(Scraped("report_snapshots_total"), 1.0);
  EXPECT_EQ(Scraped("report_sessions_total"), 1.0);
  EXPECT_EQ(Scraped("pathcomp_connected"), 1.0);
}

TEST_F(ReportStreamTest, MetricsCountAResendAndTheReconnect) {
  BindMetrics();
  stream_->Start();
  ASSERT_TRUE(replica_.WaitApplied(2));
  replica_.BreakOn(3, FakeReplica::Break::kBeforeApplying);
  EXPECT_EQ(stream_->Publish({Link("iad-ord", v1::OPER_STATE_DOWN)}), 3u);
  ASSERT_TRUE(WaitAcked(3)) << "seq 3 not resent and acknowledged within 10 s";
  EXPECT_EQ(Scraped("reports_resent_total"), 1.0);
  EXPECT_EQ(Scraped("reports_acked_total"), 3.0);
  EXPECT_EQ(Scraped("report_sessions_total"), 2.0);
  EXPECT_EQ(Scraped("report_snapshots_total"), 1.0) << "the replica kept its state: no new snapshot";
  EXPECT_EQ(Scraped("report_outbox_messages"), 0.0);
}

TEST_F(ReportStreamTest, ServiceReportsPublishedWhileDisconnectedJoinOneQueuedDelta) {
  stream_->Start();
  ASSERT_TRUE(replica_.WaitApplied(2));
  StopReplica();
  ASSERT_TRUE(sim::WaitUntil("the stream to notice", 10s, [&] { return !stream_->connected(); }, 1ms).ok());
  EXPECT_EQ(stream_->Publish({Link("iad-ord", v1::OPER_STATE_DOWN)}), 3u);
  EXPECT_EQ(stream_->Publish({}, {}, {ServiceReport("rag", 0, 100), ServiceReport("rag", 1, 200)}), 3u);
  EXPECT_EQ(stream_->Publish({}, {}, {ServiceReport("rag", 0, 300)}), 3u);  // latest per (workload, hop) wins
  EXPECT_EQ(stream_->Publish({}, {}, {ServiceReport("agent", 0, 400)}), 3u);
  EXPECT_EQ(stream_->stats().outbox_messages, 1u);
  EXPECT_EQ(stream_->stats().service_reports_coalesced, 3u);
  RestartReplica();
  ASSERT_TRUE(replica_.WaitApplied(3)) << "no resume within 10 s";
  const auto applied = replica_.Applied();
  ASSERT_EQ(applied.size(), 3u);
  const v1::Update& delta = applied[2].delta();
  EXPECT_EQ(delta.links_size(), 1);
  ASSERT_EQ(delta.service_reports_size(), 3);
  EXPECT_EQ(delta.service_reports(0).service_latency_us(), 300u);
  EXPECT_EQ(delta.service_reports(1).service_latency_us(), 200u);
  EXPECT_EQ(delta.service_reports(2).workload_id(), "agent");
  // Written once: later reports make a delta of their own.
  EXPECT_EQ(stream_->Publish({}, {}, {ServiceReport("rag", 0, 500)}), 4u);
  ASSERT_TRUE(replica_.WaitApplied(4));
}

TEST_F(ReportStreamTest, SnapshotsCarryTheLatestServiceReportsInBatches) {
  {
    std::lock_guard lock(state_mu_);
    for (uint32_t hop = 0; hop < 3; ++hop) *state_.add_service_reports() = ServiceReport("rag", hop, 100 + hop);
  }
  ReportStreamOptions options;
  options.address = "127.0.0.1:" + std::to_string(port_);
  options.hello.set_facility_id("iad");
  options.hello.set_agent_id("agent");
  options.hello.set_incarnation(43);
  options.snapshot_batch_links = 2;
  options.min_backoff = 1ms;
  options.max_backoff = 20ms;
  stream_->Stop();
  stream_ = std::make_unique<ReportStream>(options, grpc::InsecureChannelCredentials(), [this] {
    std::lock_guard lock(state_mu_);
    return state_;
  });
  stream_->Start();
  ASSERT_TRUE(replica_.WaitApplied(4)) << "no snapshot within 10 s";
  const auto applied = replica_.Applied();
  ASSERT_EQ(applied.size(), 4u);  // two links, two reports, one report, the sync marker
  EXPECT_EQ(applied[0].snapshot().links_size(), 2);
  EXPECT_EQ(applied[0].snapshot().service_reports_size(), 0);
  EXPECT_EQ(applied[1].snapshot().service_reports_size(), 2);
  EXPECT_EQ(applied[2].snapshot().service_reports_size(), 1);
  EXPECT_EQ(applied[2].snapshot().service_reports(0).hop(), 2u);
  EXPECT_TRUE(applied[3].has_sync());
}

}  // namespace
}  // namespace geodesic::site_agent
