#include "site_agent/report_stream.h"

#include <algorithm>
#include <map>
#include <random>
#include <utility>

#include "daemon/log.h"
#include "google/protobuf/arena.h"

namespace geodesic::site_agent {
namespace {

uint64_t SeqOf(const std::shared_ptr<const v1::AgentMessage>& entry) {
  const v1::AgentMessage& message = *entry;
  switch (message.kind_case()) {
    case v1::AgentMessage::kSnapshot: return message.snapshot().seq();
    case v1::AgentMessage::kDelta: return message.delta().seq();
    case v1::AgentMessage::kSync: return message.sync().seq();
    default: return 0;
  }
}

// An empty message whose parts will live in one arena, freed with it: an
// outbox turns over thousands of deltas a second, each with a report per
// link, and allocating and freeing those one by one was a third of an
// agent's CPU. The first block is sized for `parts` reports.
std::pair<std::shared_ptr<google::protobuf::Arena>, v1::AgentMessage*> NewArenaMessage(size_t parts) {
  constexpr size_t kBytesPerPart = 256;  // a link report with its health, id and bookkeeping
  google::protobuf::ArenaOptions options;
  options.start_block_size = 1024 + parts * kBytesPerPart;
  options.max_block_size = options.start_block_size;
  auto arena = std::make_shared<google::protobuf::Arena>(options);
  return {arena, google::protobuf::Arena::CreateMessage<v1::AgentMessage>(arena.get())};
}

}  // namespace

ReportStream::ReportStream(ReportStreamOptions options,
                           std::shared_ptr<grpc::ChannelCredentials> credentials,
                           FullState full_state)
    : options_(std::move(options)),
      credentials_(std::move(credentials)),
      full_state_(std::move(full_state)) {}

ReportStream::~ReportStream() { Stop(); }

void ReportStream::Start() { thread_ = std::thread([this] { Run(); }); }

void ReportStream::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (live_context_ != nullptr) live_context_->TryCancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t ReportStream::last_acked_seq() const {
  std::lock_guard lock(mu_);
  return last_acked_seq_;
}

bool ReportStream::connected() const {
  std::lock_guard lock(mu_);
  return connected_;
}

ReportStreamStats ReportStream::stats() const {
  std::lock_guard lock(mu_);
  ReportStreamStats stats = stats_;
  stats.outbox_messages = outbox_.size();
  stats.connected = connected_;
  return stats;
}

void ReportStream::PopAckedLocked(uint64_t seq) {
  while (!outbox_.empty() && SeqOf(outbox_.front()) <= seq) {
    outbox_.pop_front();
    ++stats_.messages_acked;
  }
}

void ReportStream::EnqueueSnapshotLocked(uint64_t first_seq) {
  outbox_.clear();
  next_seq_ = first_seq;
  highest_written_seq_ = first_seq - 1;  // what follows is new, even where a seq repeats
  ++stats_.snapshots;
  const v1::Update state = full_state_();
  const auto& links = state.links();
  const auto& reports = state.service_reports();
  int index = 0;
  int report_index = 0;
  do {  // at least one batch, even for no links; the planes ride in the first, service reports after the links
    v1::AgentMessage message;
    v1::Update& update = *message.mutable_snapshot();
    update.set_seq(next_seq_++);
    if (index == 0) *update.mutable_planes() = state.planes();
    size_t n = 0;
    for (; n < options_.snapshot_batch_links && index < links.size(); ++n) *update.add_links() = links[index++];
    for (; n < options_.snapshot_batch_links && report_index < reports.size(); ++n) {
      *update.add_service_reports() = reports[report_index++];
    }
    outbox_.push_back(std::make_shared<const v1::AgentMessage>(std::move(message)));
  } while (index < links.size() || report_index < reports.size());
  v1::AgentMessage sync;
  sync.mutable_sync()->set_seq(next_seq_++);
  outbox_.push_back(std::make_shared<const v1::AgentMessage>(std::move(sync)));
  needs_snapshot_ = false;
}

bool ReportStream::CoalesceLocked(const std::vector<v1::ServiceLatencyReport>& reports) {
  if (outbox_.empty() || !outbox_.back()->has_delta() || SeqOf(outbox_.back()) <= highest_written_seq_) return false;
  // Not handed to any stream: it may still change (a copy replaces it).
  v1::AgentMessage merged = *outbox_.back();
  std::map<std::pair<std::string, uint32_t>, int> at;  // (workload, hop) -> index in the delta
  auto& queued = *merged.mutable_delta()->mutable_service_reports();
  for (int i = 0; i < queued.size(); ++i) at[{queued[i].workload_id(), queued[i].hop()}] = i;
  for (const v1::ServiceLatencyReport& report : reports) {
    auto [it, added] = at.try_emplace({report.workload_id(), report.hop()}, queued.size());
    if (added) {
      *queued.Add() = report;
    } else {
      queued[it->second] = report;
    }
  }
  outbox_.back() = std::make_shared<const v1::AgentMessage>(std::move(merged));
  ++stats_.service_reports_coalesced;
  return true;
}

uint64_t ReportStream::Publish(const std::vector<v1::LinkReport>& links,
                               const std::vector<v1::FabricPlaneHealth>& planes,
                               const std::vector<v1::ServiceLatencyReport>& service_reports) {
  if (links.empty() && planes.empty() && service_reports.empty()) return 0;
  uint64_t seq = 0;
  {
    std::lock_guard lock(mu_);
    if (needs_snapshot_) return 0;  // the coming snapshot will carry this state
    if (links.empty() && planes.empty() && CoalesceLocked(service_reports)) return SeqOf(outbox_.back());
    if (outbox_.size() >= options_.outbox_limit) {
      // Too far behind to replay: collapse into a snapshot at the next session.
      daemon::LogWarn("outbox full, collapsing into a snapshot",
                      {{"replica", options_.address},
                       {"outbox", std::to_string(outbox_.size())}});
      outbox_.clear();
      needs_snapshot_ = true;
      if (live_context_ != nullptr) live_context_->TryCancel();
    } else {
      auto [arena, message] = NewArenaMessage(links.size() + planes.size() + service_reports.size());
      seq = next_seq_++;
      v1::Update& delta = *message->mutable_delta();
      delta.set_seq(seq);
      delta.mutable_links()->Reserve(static_cast<int>(links.size()));
      for (const auto& link : links) *delta.add_links() = link;
      for (const auto& plane : planes) *delta.add_planes() = plane;
      for (const auto& report : service_reports) *delta.add_service_reports() = report;
      // Shares the arena's ownership: the message goes when the arena does.
      outbox_.push_back(std::shared_ptr<const v1::AgentMessage>(std::move(arena), message));
    }
  }
  cv_.notify_all();
  return seq;
}

void ReportStream::Run() {
  std::mt19937_64 random(options_.hello.incarnation() ^ std::hash<std::string>()(options_.address));
  auto backoff = options_.min_backoff;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    if (Session()) backoff = options_.min_backoff;
    // Full jitter between half and all of the backoff.
    std::uniform_int_distribution<int64_t> jitter(backoff.count() / 2, backoff.count());
    const auto wait = std::chrono::milliseconds(jitter(random));
    backoff = std::min(options_.max_backoff, backoff * 2);
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, wait, [this] { return stopping_; })) return;
  }
}

bool ReportStream::Session() {
  auto channel = grpc::CreateChannel(options_.address, credentials_);
  auto stub = v1::Telemetry::NewStub(channel);
  grpc::ClientContext context;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    live_context_ = &context;
  }
  auto stream = stub->Report(&context);
  bool hello_answered = false;
  auto finish = [&](const char* why) {
    {
      std::lock_guard lock(mu_);
      live_context_ = nullptr;
      connected_ = false;
    }
    context.TryCancel();
    const grpc::Status status = stream->Finish();
    daemon::LogWarn("report stream ended", {{"replica", options_.address},
                                            {"why", why},
                                            {"status", status.error_message()}});
    return hello_answered;
  };

  v1::AgentMessage hello;
  *hello.mutable_hello() = options_.hello;
  v1::ControllerMessage reply;
  if (!stream->Write(hello) || !stream->Read(&reply) || !reply.has_hello_ack()) {
    return finish("no hello ack");
  }
  hello_answered = true;
  const uint64_t applied = reply.hello_ack().last_applied_seq();
  {
    std::lock_guard lock(mu_);
    connected_ = true;
    // Drop what the replica already has; resend the rest, or start over with a
    // snapshot when the outbox cannot continue right after `applied`.
    PopAckedLocked(applied);
    last_acked_seq_ = applied;
    ++stats_.sessions_opened;
    const bool continues = !outbox_.empty() ? SeqOf(outbox_.front()) == applied + 1
                                            : next_seq_ == applied + 1;
    if (reply.hello_ack().snapshot_required() || needs_snapshot_ || !continues) {
      EnqueueSnapshotLocked(applied + 1);
    }
  }
  daemon::LogInfo("report stream connected",
                  {{"replica", options_.address},
                   {"replica_id", reply.hello_ack().replica_id()},
                   {"resume_after_seq", std::to_string(applied)}});

  // Acks arrive on their own thread; this one writes.
  std::thread reader([&] {
    v1::ControllerMessage message;
    while (stream->Read(&message)) {
      if (!message.has_ack()) continue;
      const uint64_t seq = message.ack().seq();
      {
        std::lock_guard lock(mu_);
        PopAckedLocked(seq);
        last_acked_seq_ = std::max(last_acked_seq_, seq);
      }
      if (options_.on_ack) options_.on_ack(seq);
    }
    {
      std::lock_guard lock(mu_);
      connected_ = false;
    }
    cv_.notify_all();
  });

  uint64_t written = applied;
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] {
      return stopping_ || !connected_ || needs_snapshot_ ||
             (!outbox_.empty() && SeqOf(outbox_.back()) > written);
    });
    if (stopping_ || !connected_ || needs_snapshot_) break;
    // Find the first unwritten message (the outbox may have shrunk from acks).
    auto it = std::find_if(outbox_.begin(), outbox_.end(), [&](const auto& entry) { return SeqOf(entry) > written; });
    const std::shared_ptr<const v1::AgentMessage> message = *it;
    const uint64_t seq = SeqOf(message);
    // Handed to an earlier session's stream already (which may have delivered
    // it without the ack coming back): a resend.
    const bool resend = seq <= highest_written_seq_;
    highest_written_seq_ = std::max(highest_written_seq_, seq);
    lock.unlock();
    const bool ok = stream->Write(*message);
    lock.lock();
    if (!ok) break;
    ++stats_.messages_sent;
    if (resend) ++stats_.messages_resent;
    written = seq;
  }
  lock.unlock();
  context.TryCancel();
  reader.join();
  return finish("stream closed");
}

}  // namespace geodesic::site_agent
