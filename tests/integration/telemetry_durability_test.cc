// What survives a SIGKILL of pathcomp (DESIGN §3, README "Telemetry
// durability"): agents stream link state changes (up/down flips) and
// measurements (RTT) to a real pathcomp process, which is killed at random
// points, several rounds (seeded; the seed is printed, GEODESIC_TEST_SEED
// repeats a run). After each kill the test reads pathcomp's store and checks
// it against what the agents had acknowledged:
//  - every acknowledged state change is there;
//  - every link's stored measurement is at least as new as the last one
//    acknowledged more than measurement_flush_ms (+ two writes' time, given
//    as kWriteAllowance) before the kill;
//  - every stored value is one an agent sent, with the state it sent it with;
// then restarts pathcomp and checks that the agents' resume (a fresh snapshot
// where the store is behind their acks) brings the model to their latest.
//
// The agents are the site agent's own report streams (site_agent::
// ReportStream) in this process, so the test knows what was acknowledged
// and when. Every RTT a test agent sends is new (one counter for all), so a
// stored RTT says which report it came from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "site_agent/report_stream.h"
#include "state/rocks_store.h"
#include "tests/support/lab_testing.h"

namespace geodesic {
namespace {

using sim::LocalLab;
using sim::WaitUntil;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int kMeasurementFlushMs = 50;
// Two flushes' writes (reports acknowledged during one go into the next) and
// the scheduling of a loaded 2-core machine.
constexpr milliseconds kWriteAllowance{250};
constexpr int kRounds = 5;

struct Measured {
  v1::OperState state = v1::OPER_STATE_UP;
  uint64_t rtt_us = 0;
};

// One facility's agent: its links' current health, what it published and
// what pathcomp acknowledged, and when.
class TestAgent {
 public:
  TestAgent(const std::string& facility_id, std::vector<std::string> link_ids, const LocalLab& lab,
            std::atomic<uint64_t>& rtt_counter)
      : facility_id_(facility_id), link_ids_(std::move(link_ids)), rtt_counter_(rtt_counter) {
    for (const std::string& id : link_ids_) SetLocked(id, v1::OPER_STATE_UP);
    site_agent::ReportStreamOptions options;
    options.address = lab.pathcomp_address();
    options.hello.set_facility_id(facility_id);
    options.hello.set_agent_id("agent");
    options.hello.set_incarnation(4242);  // one incarnation throughout: every restart is a resume
    options.min_backoff = milliseconds(20);
    options.max_backoff = milliseconds(200);
    options.on_ack = [this](uint64_t seq) { Acked(seq); };
    stream_ = std::make_unique<site_agent::ReportStream>(
        options, tls::MakeChannelCredentials(lab.agent_tls(facility_id), tls::Identity::Kind::kPathcomp),
        [this] { return FullState(); });
    stream_->Start();
  }
  ~TestAgent() { stream_->Stop(); }

  // One report: every link's RTT moves, or (a state change) one link flips
  // between up and down (with a new RTT of its own).
  void Step(std::mt19937_64& random, bool state_change) {
    std::vector<v1::LinkReport> links;
    {
      std::lock_guard lock(state_mu_);
      if (state_change) {
        const std::string& id = link_ids_[random() % link_ids_.size()];
        SetLocked(id, current_[id].state == v1::OPER_STATE_UP ? v1::OPER_STATE_DOWN : v1::OPER_STATE_UP);
        links.push_back(ReportLocked(id));
      } else {
        for (const std::string& id : link_ids_) {
          SetLocked(id, current_[id].state);
          links.push_back(ReportLocked(id));
        }
      }
    }
    std::lock_guard lock(record_mu_);
    const uint64_t seq = stream_->Publish(links);
    // 0: a coming snapshot carries it (never counted as acknowledged here).
    if (seq != 0) in_flight_[seq] = {std::move(links), state_change};
  }

  std::map<std::string, Measured> Current() const {
    std::lock_guard lock(state_mu_);
    return current_;
  }
  // What a stored (state, rtt) of `link_id` must be: one this agent sent.
  std::optional<v1::OperState> SentWith(const std::string& link_id, uint64_t rtt_us) const {
    std::lock_guard lock(state_mu_);
    auto it = sent_.find({link_id, rtt_us});
    return it == sent_.end() ? std::nullopt : std::optional(it->second);
  }
  // The newest RTT of `link_id` acknowledged at or before `by` (0: none).
  uint64_t AckedBy(const std::string& link_id, Clock::time_point by) const {
    std::lock_guard lock(record_mu_);
    uint64_t newest = 0;
    auto it = acked_.find(link_id);
    if (it == acked_.end()) return 0;
    for (const auto& [at, rtt] : it->second) {
      if (at <= by) newest = std::max(newest, rtt);
    }
    return newest;
  }
  // The RTT of the last acknowledged state change of `link_id` (0: none).
  uint64_t LastAckedStateChange(const std::string& link_id) const {
    std::lock_guard lock(record_mu_);
    auto it = acked_state_changes_.find(link_id);
    return it == acked_state_changes_.end() ? 0 : it->second;
  }
  uint64_t last_acked_seq() const { return stream_->last_acked_seq(); }
  uint64_t snapshots() const { return stream_->stats().snapshots; }
  const std::string& facility_id() const { return facility_id_; }
  const std::vector<std::string>& link_ids() const { return link_ids_; }

 private:
  struct Published {
    std::vector<v1::LinkReport> links;
    bool state_change = false;
  };

  void SetLocked(const std::string& id, v1::OperState state) {
    Measured& measured = current_[id];
    measured.state = state;
    measured.rtt_us = ++rtt_counter_;
    sent_[{id, measured.rtt_us}] = state;
  }
  v1::LinkReport ReportLocked(const std::string& id) const {
    v1::LinkReport report;
    report.set_link_id(id);
    report.mutable_health()->set_state(current_.at(id).state);
    report.mutable_health()->set_rtt_us(current_.at(id).rtt_us);
    return report;
  }
  // Called by the stream (under its own lock) for a snapshot.
  v1::Update FullState() const {
    std::lock_guard lock(state_mu_);
    v1::Update update;
    for (const std::string& id : link_ids_) *update.add_links() = ReportLocked(id);
    return update;
  }
  void Acked(uint64_t seq) {
    const auto now = Clock::now();
    std::lock_guard lock(record_mu_);
    // After a resume from behind its acks the stream numbers a snapshot from
    // the store's seq again, so an entry may be acknowledged by a later
    // message of the same number: that message (the snapshot) carried this
    // state or a newer one, so counting it as acknowledged is never too much.
    for (auto it = in_flight_.begin(); it != in_flight_.end() && it->first <= seq;) {
      for (const v1::LinkReport& link : it->second.links) {
        acked_[link.link_id()].emplace_back(now, link.health().rtt_us());
        if (it->second.state_change) acked_state_changes_[link.link_id()] = link.health().rtt_us();
      }
      it = in_flight_.erase(it);
    }
  }

  const std::string facility_id_;
  const std::vector<std::string> link_ids_;
  std::atomic<uint64_t>& rtt_counter_;
  // Lock order: record_mu_, then the stream's; the stream's, then state_mu_.
  mutable std::mutex state_mu_;
  std::map<std::string, Measured> current_;
  std::map<std::pair<std::string, uint64_t>, v1::OperState> sent_;  // (link, rtt) -> state
  mutable std::mutex record_mu_;
  std::map<uint64_t, Published> in_flight_;
  std::map<std::string, std::vector<std::pair<Clock::time_point, uint64_t>>> acked_;
  std::map<std::string, uint64_t> acked_state_changes_;
  std::unique_ptr<site_agent::ReportStream> stream_;
};

class TelemetryDurabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::LabOptions options = testing::LabOptionsFor(work_.path());
    options.pathcomp_extra_config = absl::StrCat("telemetry: {measurement_flush_ms: ", kMeasurementFlushMs, "}\n");
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) {
      std::vector<std::string> links;
      for (const auto& link : lab_->topology().links) {
        if (link.src_facility_id() == facility.id()) links.push_back(link.id());
      }
      if (!links.empty()) {
        agents_.push_back(std::make_unique<TestAgent>(facility.id(), std::move(links), *lab_, rtt_counter_));
      }
    }
  }

  void TearDown() override {
    agents_.clear();
    lab_.reset();
    if (HasFailure()) work_.keep();
  }

  std::map<std::string, v1::LinkHealth> ModelHealth() {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(2));
    v1::ListLinksResponse response;
    std::map<std::string, v1::LinkHealth> health;
    if (!stub->ListLinks(&context, {}, &response).ok()) return health;
    for (const auto& link : response.links()) health[link.id()] = link.health();
    return health;
  }

  bool ModelMatchesAgents() {
    const auto model = ModelHealth();
    for (const auto& agent : agents_) {
      for (const auto& [id, measured] : agent->Current()) {
        auto it = model.find(id);
        if (it == model.end() || it->second.state() != measured.state || it->second.rtt_us() != measured.rtt_us) {
          return false;
        }
      }
    }
    return true;
  }

  testing::TempDir work_{"telemetry-durability"};
  std::unique_ptr<LocalLab> lab_;
  std::atomic<uint64_t> rtt_counter_{1000};
  std::vector<std::unique_ptr<TestAgent>> agents_;
};

TEST_F(TelemetryDurabilityTest, AcknowledgedStateSurvivesASigkillAndMeasurementsAreAtMostOneFlushOld) {
  uint64_t seed = std::random_device()();
  if (const char* fixed = std::getenv("GEODESIC_TEST_SEED"); fixed != nullptr) seed = std::strtoull(fixed, nullptr, 10);
  std::printf("seed %llu (GEODESIC_TEST_SEED=%llu repeats this run)\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  const std::string state_dir = lab_->work_dir() + "/state/pathcomp";
  int resumed_behind_acks = 0;

  for (int round = 1; round <= kRounds; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round, " of seed ", seed));
    ASSERT_EQ(WaitUntil("every agent's snapshot acknowledged", seconds(30),
                        [&] {
                          return std::all_of(agents_.begin(), agents_.end(),
                                             [](const auto& agent) { return agent->last_acked_seq() >= 2; });
                        }),
              absl::OkStatus());
    // Reports until a random point, then the kill, while they go on.
    std::atomic<bool> driving{true};
    std::mt19937_64 driver_random(random());
    std::thread driver([&] {
      while (driving) {
        // Half the agents flip a link now and then; the others only measure,
        // so what the store holds of theirs is the flusher's work alone (a
        // state change also writes its session's measurements before it).
        for (size_t i = 0; i < agents_.size(); ++i) {
          agents_[i]->Step(driver_random, i % 2 == 0 && driver_random() % 10 == 0);
        }
        std::this_thread::sleep_for(milliseconds(5));  // the pace of the agents' reports is the test's input
      }
    });
    struct Join {
      std::atomic<bool>& flag;
      std::thread& thread;
      ~Join() {
        flag = false;
        if (thread.joinable()) thread.join();
      }
    } join{driving, driver};
    std::this_thread::sleep_for(milliseconds(600 + random() % 1400));  // the random point of the kill
    lab_->Kill("pathcomp", SIGKILL);
    const Clock::time_point killed = Clock::now();  // every ack came before this
    driving = false;
    driver.join();

    // What the store holds, against what was acknowledged.
    std::map<std::string, uint64_t> stored_seqs;  // facility -> session's last applied
    {
      auto store = state::OpenRocksStore(state_dir);
      ASSERT_TRUE(store.ok()) << store.status();
      auto health = (*store)->ListRaw(state::Kind::kLinkHealth);
      ASSERT_TRUE(health.ok()) << health.status();
      std::map<std::string, v1::LinkHealth> stored;
      for (const auto& [id, bytes] : *health) ASSERT_TRUE(stored[id].ParseFromString(bytes)) << id;
      auto sessions = (*store)->ListRaw(state::Kind::kAgentSession);
      ASSERT_TRUE(sessions.ok()) << sessions.status();
      for (const auto& [id, bytes] : *sessions) {
        v1::AgentSession session;
        ASSERT_TRUE(session.ParseFromString(bytes)) << id;
        stored_seqs[session.facility_id()] = session.last_applied_seq();
      }
      const Clock::time_point flushed_by = killed - milliseconds(kMeasurementFlushMs) - kWriteAllowance;
      int links_checked = 0;
      for (const auto& agent : agents_) {
        for (const std::string& id : agent->link_ids()) {
          ASSERT_TRUE(stored.contains(id)) << id << ": no health stored although its snapshot was acknowledged";
          const v1::LinkHealth& health = stored.at(id);
          const auto sent_with = agent->SentWith(id, health.rtt_us());
          ASSERT_TRUE(sent_with.has_value()) << id << ": stored rtt " << health.rtt_us() << " was never sent";
          EXPECT_EQ(health.state(), *sent_with) << id << ": stored with another state than it was sent with";
          EXPECT_GE(health.rtt_us(), agent->LastAckedStateChange(id))
              << id << ": an acknowledged state change is not in the store";
          EXPECT_GE(health.rtt_us(), agent->AckedBy(id, flushed_by))
              << id << ": the stored measurement is older than the last one acknowledged "
              << kMeasurementFlushMs << " ms + " << kWriteAllowance.count() << " ms before the kill";
          ++links_checked;
        }
      }
      ASSERT_GT(links_checked, 0);
    }

    // The resume: where the store is behind an agent's acks, the agent
    // starts over with a snapshot from what is stored; either way the model
    // ends with every agent's latest.
    std::map<std::string, std::pair<uint64_t, uint64_t>> behind;  // facility -> (snapshots then, acked)
    for (const auto& agent : agents_) {
      const uint64_t stored = stored_seqs[agent->facility_id()];
      if (stored < agent->last_acked_seq()) behind[agent->facility_id()] = {agent->snapshots(), agent->last_acked_seq()};
    }
    resumed_behind_acks += static_cast<int>(behind.size());
    ASSERT_TRUE(lab_->Restart("pathcomp").ok());
    ASSERT_EQ(WaitUntil("the model to hold every agent's latest state and measurement", seconds(60),
                        [&] { return ModelMatchesAgents(); }, milliseconds(100)),
              absl::OkStatus());
    for (const auto& agent : agents_) {
      auto it = behind.find(agent->facility_id());
      if (it == behind.end()) continue;
      EXPECT_GT(agent->snapshots(), it->second.first)
          << agent->facility_id() << ": pathcomp resumed behind the agent's acks (stored seq "
          << stored_seqs[agent->facility_id()] << ", acked " << it->second.second << ") and no snapshot followed";
    }
  }
  std::printf("%d rounds; %d agent resumes found pathcomp's store behind their acks\n", kRounds,
              resumed_behind_acks);
}

}  // namespace
}  // namespace geodesic
