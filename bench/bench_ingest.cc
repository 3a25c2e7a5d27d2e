// Telemetry ingest: link updates one pathcomp applies to its RocksDB model
// from 64 site agents streaming over mTLS, against the raw store write rate
// measured in the same run.
//
//   ingest_link_updates_per_s      a real pathcomp (PathcompServer, its store
//                                  opened as in production: state changes
//                                  synced before their ack, measurements
//                                  written coalesced every
//                                  measurement_flush_ms, default 100) and 64
//                                  real agent streams (site_agent::
//                                  ReportStream), each agent's facility with
//                                  kLinksPerAgent links (two circuits to each
//                                  of 48 facilities), every agent sending
//                                  deltas that move every link's RTT with up
//                                  to kWindow unacknowledged; counted from the
//                                  acknowledgements.
//                                  Reference: the same updates committed to a
//                                  fresh store by one thread, kLinksPerAgent
//                                  per ChangeSet with the session record, as
//                                  the model committed every report before
//                                  measurements were perishable: synced.
//   ingest_link_updates_vs_raw_unsynced
//                                  the same against those commits unsynced
//                                  (what a store write per report costs
//                                  without the fsync).
//   ingest_link_updates_vs_target  the same against the 1,000,000/s.
//   ingest_p99_measurement_to_model
//                                  every agent reporting all its links every
//                                  100 ms, each delta's measured_at stamped at
//                                  its Publish(): pathcomp's own histogram
//                                  geodesic_pathcomp_telemetry_measurement_
//                                  age_seconds over that phase (measured_at to
//                                  the model applying it; the p99 interpolated
//                                  within its bucket, as histogram_quantile
//                                  does; clocks in whole ms). Reference: the
//                                  p99 of one raw synced commit in the
//                                  reference run; and (..._vs_target) the
//                                  issue's 10 ms.
//   ingest_p99_measurement_to_ack  the same deltas from Publish() to the
//                                  agent receiving their acknowledgement
//                                  (what an agent waits before it may forget
//                                  a delta: the model's part and gRPC's way
//                                  back). Reference: the 10 ms.
//
// The agents run in this process and share the 2 cores with pathcomp.
// No result is asserted. One line per result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/bench_report.h"
#include "daemon/allocator.h"
#include "daemon/clock.h"
#include "bench/scratch_dir.h"
#include "metrics/metrics_registry.h"
#include "pathcomp/service/pathcomp_server.h"
#include "sim/process.h"
#include "site_agent/report_stream.h"
#include "state/change_set.h"
#include "state/kind.h"
#include "state/rocks_store.h"
#include "tls/credentials.h"

namespace geodesic::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kAgents = 64;
constexpr int kLinksPerAgent = 96;  // two circuits to each of 48 facilities
constexpr int kWindow = 8;  // unacknowledged deltas per agent
constexpr auto kDuration = std::chrono::seconds(5);
constexpr std::chrono::milliseconds kReportPeriod{100};
constexpr double kTargetUpdatesPerSecond = 1'000'000;
constexpr double kTargetP99Ms = 10;

std::string Facility(int i) { return absl::StrFormat("f%02d", i); }
// Agent i's links: kParallel circuits to each of the next
// kLinksPerAgent / kParallel facilities.
constexpr int kParallel = kLinksPerAgent / 32;
int Neighbour(int agent, int k) { return (agent + 1 + k / kParallel) % kAgents; }
std::string LinkId(int agent, int k) {
  return absl::StrCat(Facility(agent), "-", Facility(Neighbour(agent, k)), "-", k % kParallel);
}

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "bench_ingest: %s: %s\n", what, std::string(status.message()).c_str());
    std::exit(1);
  }
}

std::string TopologyYaml() {
  std::string yaml = "facilities:\n";
  for (int i = 0; i < kAgents; ++i) {
    absl::StrAppend(&yaml, "  - {id: ", Facility(i), ", position: {lat: ", -60 + i * 2, ", lon: ", -170 + i * 5,
                    "}, prefixes: [10.", i, ".0.0/16]}\n");
  }
  yaml += "nodes:\n";
  for (int i = 0; i < kAgents; ++i) absl::StrAppend(&yaml, "  - {id: ", Facility(i), "-r1, facility: ", Facility(i), "}\n");
  yaml += "links:\n";
  for (int i = 0; i < kAgents; ++i) {
    for (int k = 0; k < kLinksPerAgent; ++k) {
      absl::StrAppend(&yaml, "  - {id: ", LinkId(i, k), ", from: ", Facility(i), "-r1, to: ", Facility(Neighbour(i, k)),
                      "-r1, capacity_gbps: 400}\n");
    }
  }
  return yaml;
}

v1::LinkReport Report(int agent, int k, uint64_t rtt_us) {
  v1::LinkReport report;
  report.set_link_id(LinkId(agent, k));
  report.mutable_health()->set_state(v1::OPER_STATE_UP);
  report.mutable_health()->set_rtt_us(rtt_us);
  report.mutable_health()->set_jitter_us(rtt_us / 50);
  report.mutable_health()->set_measured_at_unix_ms(1'800'000'000'000);
  return report;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  const size_t index = std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
  std::nth_element(values.begin(), values.begin() + index, values.end());
  return values[index];
}

// pathcomp's measurement age histogram as scraped: cumulative counts by
// upper bound (seconds; +Inf last).
using AgeBuckets = std::vector<std::pair<double, double>>;
AgeBuckets ScrapeAgeBuckets(const metrics::Registry& registry) {
  AgeBuckets buckets;
  const std::string text = registry.Scrape();
  const std::string prefix = "geodesic_pathcomp_telemetry_measurement_age_seconds_bucket{";
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
    const size_t le = text.find("le=\"", at);
    const size_t end = text.find('\n', at);
    if (le == std::string::npos || le > end) continue;
    const std::string bound = text.substr(le + 4, text.find('"', le + 4) - le - 4);
    const double upper = bound == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(bound);
    buckets.emplace_back(upper, std::stod(text.substr(text.rfind(' ', end) + 1, end)));
  }
  if (buckets.empty()) Check(absl::InternalError("no measurement age histogram in the scrape"), "metrics");
  return buckets;
}

// The `q` quantile of what was observed between two scrapes, linear within
// its bucket (Prometheus' histogram_quantile); the last finite bound when it
// falls in +Inf.
double QuantileBetween(const AgeBuckets& before, const AgeBuckets& after, double q) {
  const double total = after.back().second - before.back().second;
  if (total <= 0 || before.size() != after.size()) return 0;
  double lower = 0, below = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    const double count = after[i].second - before[i].second;
    if (count >= q * total) {
      if (std::isinf(after[i].first)) return lower;
      return lower + (after[i].first - lower) * (q * total - below) / std::max(1.0, count - below);
    }
    lower = after[i].first;
    below = count;
  }
  return lower;
}

// One agent: a real report stream and a publisher keeping kWindow deltas in flight.
class Agent {
 public:
  Agent(int index, const std::string& address, const std::string& pki) : index_(index) {
    site_agent::ReportStreamOptions options;
    options.address = address;
    options.hello.set_facility_id(Facility(index));
    options.hello.set_agent_id("agent");
    options.hello.set_incarnation(1000 + index);
    options.on_ack = [this](uint64_t seq) { Acked(seq); };
    const tls::TlsFiles files{pki + "/ca.crt", pki + "/site-" + Facility(index) + "-agent.crt",
                              pki + "/site-" + Facility(index) + "-agent.key"};
    stream_ = std::make_unique<site_agent::ReportStream>(
        options, tls::MakeChannelCredentials(files, tls::Identity::Kind::kPathcomp), [index] {
          v1::Update state;
          for (int k = 0; k < kLinksPerAgent; ++k) *state.add_links() = Report(index, k, 1000);
          return state;
        });
    stream_->Start();
  }

  // Publishes until `deadline` (a delta every `period`, or as fast as the
  // window allows when 0), then waits (bounded) for the last acks.
  void Drive(Clock::time_point deadline, std::chrono::milliseconds period) {
    uint64_t rtt = 1000;
    // An agent keeps its links' reports and updates their measurements (the
    // ids are its configuration, not made anew per report).
    std::vector<v1::LinkReport> delta;
    for (int k = 0; k < kLinksPerAgent; ++k) delta.push_back(Report(index_, k, rtt));
    // Agents' report clocks are not aligned: each starts at its own offset.
    auto next = Clock::now() + period * index_ / kAgents;
    while (Clock::now() < deadline) {
      if (period.count() > 0) {
        std::this_thread::sleep_until(next);
        next += period;
      }
      ++rtt;
      const int64_t measured_at_unix_ms = daemon::UnixNowMs();
      for (int k = 0; k < kLinksPerAgent; ++k) {
        v1::LinkHealth& health = *delta[k].mutable_health();
        health.set_rtt_us(rtt + k);
        health.set_jitter_us((rtt + k) / 50);
        health.set_measured_at_unix_ms(measured_at_unix_ms);
      }
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, deadline, [this] { return in_flight_.size() < kWindow; });
      if (Clock::now() >= deadline) break;
      lock.unlock();
      const auto published = Clock::now();
      const uint64_t seq = stream_->Publish(delta);
      lock.lock();
      if (seq != 0) in_flight_.emplace(seq, published);
    }
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [this] { return in_flight_.empty(); });
  }

  bool Synced() const { return stream_->last_acked_seq() >= 2; }  // the snapshot and its sync marker
  void Stop() { stream_->Stop(); }
  // Forgets what was measured so far (between phases).
  void Reset() {
    std::lock_guard lock(mu_);
    latencies_ms_.clear();
    links_acked_ = 0;
  }
  uint64_t links_acked() const { return links_acked_; }
  Clock::time_point last_ack() const { return last_ack_; }
  const std::vector<double>& latencies_ms() const { return latencies_ms_; }

 private:
  void Acked(uint64_t seq) {
    const auto now = Clock::now();
    {
      std::lock_guard lock(mu_);
      for (auto it = in_flight_.begin(); it != in_flight_.end() && it->first <= seq;) {
        latencies_ms_.push_back(std::chrono::duration<double, std::milli>(now - it->second).count());
        links_acked_ += kLinksPerAgent;
        last_ack_ = now;
        it = in_flight_.erase(it);
      }
    }
    cv_.notify_all();
  }

  const int index_;
  std::unique_ptr<site_agent::ReportStream> stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Clock::time_point> in_flight_;  // seq -> published
  std::vector<double> latencies_ms_;
  uint64_t links_acked_ = 0;
  Clock::time_point last_ack_;
};

struct Phase {
  double updates_per_s = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  uint64_t links = 0;
};

struct Reference {
  double updates_per_s = 0;
  double commit_p99_ms = 0;
};

// The same updates straight into a store, one commit per report with its
// session record, synced (as Model::ApplyReport committed every report
// before measurements were perishable) or not.
Reference RawStore(uint64_t updates, bool synced) {
  ScratchDir dir("geodesic_bench_ingest_raw");
  state::RocksStoreOptions options;
  options.sync_writes = true;  // as pathcomp opens its store
  auto store = state::OpenRocksStore(dir.db(), options);
  Check(store.status(), "open the reference store");
  std::vector<double> commit_ms;
  uint64_t written = 0;
  const auto start = Clock::now();
  for (uint64_t round = 0; written < updates; ++round) {
    const int agent = static_cast<int>(round % kAgents);
    state::ChangeSet changes(absl::StrCat("telemetry from spiffe://geodesic/site/", Facility(agent), "/agent seq ", round));
    for (int k = 0; k < kLinksPerAgent; ++k) {
      changes.Put(state::Kind::kLinkHealth, LinkId(agent, k), Report(agent, k, 1000 + round).health());
    }
    v1::AgentSession session;
    session.set_facility_id(Facility(agent));
    session.set_agent_id("agent");
    session.set_incarnation(1000 + agent);
    session.set_last_applied_seq(round);
    changes.Put(state::Kind::kAgentSession, Facility(agent) + "/agent", session);
    const auto before = Clock::now();
    Check((synced ? (*store)->Commit(changes) : (*store)->CommitUnsynced(changes)).status(), "reference commit");
    commit_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - before).count());
    written += kLinksPerAgent;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return {written / seconds, Percentile(commit_ms, 0.99)};
}

void Run() {
  const char* source_env = std::getenv("GEODESIC_SOURCE_DIR");
  const std::string source = source_env != nullptr ? source_env : GEODESIC_DEFAULT_SOURCE_DIR;
  ScratchDir dir("geodesic_bench_ingest");
  const std::string root = dir.db();
  std::filesystem::create_directories(root);
  std::ofstream(root + "/topology.yaml") << TopologyYaml();
  std::vector<std::string> facilities;
  for (int i = 0; i < kAgents; ++i) facilities.push_back(Facility(i));
  auto pki = sim::RunCommand({source + "/deploy/pki/make-pki.sh", "--out", root + "/pki", "--facilities",
                              absl::StrJoin(facilities, ","), "--replicas", "pc1"});
  Check(pki.status(), "make-pki.sh");
  if (pki->exit_code != 0) Check(absl::InternalError(pki->output), "make-pki.sh");

  pathcomp::PathcompConfig config;
  config.replica_id = "pc1";
  config.listen_address = "127.0.0.1:0";
  config.state_dir = root + "/state";
  config.topology_path = root + "/topology.yaml";
  config.tls = {root + "/pki/ca.crt", root + "/pki/pathcomp-pc1.crt", root + "/pki/pathcomp-pc1.key"};
  metrics::Registry registry("pathcomp", {{"replica", config.replica_id}});
  auto server = pathcomp::PathcompServer::Start(config, registry);
  Check(server.status(), "start pathcomp");

  std::vector<std::unique_ptr<Agent>> agents;
  for (int i = 0; i < kAgents; ++i) agents.push_back(std::make_unique<Agent>(i, (*server)->address(), root + "/pki"));
  const auto sync_deadline = Clock::now() + std::chrono::seconds(60);
  while (!std::all_of(agents.begin(), agents.end(), [](const auto& agent) { return agent->Synced(); })) {
    if (Clock::now() > sync_deadline) Check(absl::DeadlineExceededError("agents not synced in 60 s"), "snapshots");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  // The snapshots turned every link from unknown to up, which re-plans (a
  // solve of this network takes seconds here, and the last one may publish
  // nothing new); the measurement starts once pathcomp is idle: less than 5%
  // of a core used in half a second, with the agents quiet.
  {
    auto cpu_seconds = [] {
      timespec now{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
      return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
    };
    const auto settle_deadline = Clock::now() + std::chrono::seconds(120);
    while (Clock::now() < settle_deadline) {
      const double before = cpu_seconds();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (cpu_seconds() - before < 0.025) break;
    }
  }

  // Phase 1, throughput: every agent as fast as its window allows.
  auto run = [&](std::chrono::milliseconds period) {
    for (auto& agent : agents) agent->Reset();
    const auto start = Clock::now();
    const auto deadline = start + kDuration;
    std::vector<std::thread> drivers;
    for (auto& agent : agents) drivers.emplace_back([&agent, deadline, period] { agent->Drive(deadline, period); });
    for (auto& driver : drivers) driver.join();
    uint64_t links = 0;
    Clock::time_point end = start;
    std::vector<double> latencies;
    for (const auto& agent : agents) {
      links += agent->links_acked();
      end = std::max(end, agent->last_ack());
      latencies.insert(latencies.end(), agent->latencies_ms().begin(), agent->latencies_ms().end());
    }
    return Phase{.updates_per_s = links / std::chrono::duration<double>(end - start).count(),
                 .p50_ms = Percentile(latencies, 0.5),
                 .p90_ms = Percentile(latencies, 0.9),
                 .p99_ms = Percentile(latencies, 0.99),
                 .max_ms = Percentile(latencies, 1.0),
                 .links = links};
  };
  // To profile this phase alone: perf record -D -1 --control fifo:CTL,ACK
  // with GEODESIC_BENCH_PERF_CONTROL=CTL (perf starts and stops sampling here).
  auto perf_control = [](const char* command) {
    if (const char* fifo = std::getenv("GEODESIC_BENCH_PERF_CONTROL")) std::ofstream(fifo) << command << "\n";
  };
  perf_control("enable");
  const Phase throughput = run(std::chrono::milliseconds(0));
  perf_control("disable");
  const double ours = throughput.updates_per_s;
  // Phase 2, latency: every agent reports every kReportPeriod, as a busy
  // deployment would (at saturation the latency is only the queue).
  const AgeBuckets age_before = ScrapeAgeBuckets(registry);
  const Phase latency = run(kReportPeriod);
  const AgeBuckets age_after = ScrapeAgeBuckets(registry);
  const double to_model_p99_ms = 1000 * QuantileBetween(age_before, age_after, 0.99);
  // Where the tail lies, for the reader (stderr: not a result).
  std::fprintf(stderr, "bench_ingest: measurement -> ack at a report every %lld ms: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
               static_cast<long long>(kReportPeriod.count()), latency.p50_ms, latency.p90_ms, latency.p99_ms, latency.max_ms);
  for (auto& agent : agents) agent->Stop();
  (*server)->Shutdown();

  const Reference reference = RawStore(std::min<uint64_t>(throughput.links, 2'000'000), /*synced=*/true);
  const Reference unsynced = RawStore(std::min<uint64_t>(throughput.links, 5'000'000), /*synced=*/false);
  PrintResult("ingest_link_updates_per_s", ours, "raw_store", reference.updates_per_s, "/s");
  PrintResult("ingest_link_updates_vs_raw_unsynced", ours, "raw_store_unsynced", unsynced.updates_per_s, "/s");
  PrintResult("ingest_link_updates_vs_target", ours, "target", kTargetUpdatesPerSecond, "/s");
  PrintResult("ingest_p99_measurement_to_model", to_model_p99_ms, "raw_store_commit_p99", reference.commit_p99_ms, "ms", 2);
  PrintResult("ingest_p99_measurement_to_model_vs_target", to_model_p99_ms, "target", kTargetP99Ms, "ms", 2);
  PrintResult("ingest_p99_measurement_to_ack", latency.p99_ms, "target", kTargetP99Ms, "ms", 2);
}

}  // namespace
}  // namespace geodesic::bench

int main() {
  geodesic::daemon::KeepFreedMemoryForReuse();  // as pathcomp's main does (both phases run in this process)
  geodesic::bench::Run();
  return 0;
}
