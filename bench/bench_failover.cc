// Failover of replicated pathcomp, with real processes on loopback: three
// replicas electing through a three-member etcd cluster, an agent and a
// routerd per facility of the example backbone. Each trial SIGKILLs the
// leader and times how long until iad's routerd has installed the first plan
// of the new leader (a higher epoch), then restarts the killed replica as a
// follower. Reference: the lease TTL, which bounds how long etcd keeps a dead
// leader's key. Prints min, median and max of kTrials:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "bench/scratch_dir.h"
#include "geodesic/v1/plan.pb.h"
#include "sim/local_lab.h"
#include "sim/wait_until.h"

namespace geodesic::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTrials = 5;
constexpr int kLeaseTtlS = 2;

uint64_t InstalledEpoch(const sim::LocalLab& lab) {
  auto plan = lab.InstalledPlan("iad");
  return plan ? plan->epoch() : 0;
}

int Run() {
  if (auto status = sim::EtcdAvailable(); !status.ok()) {
    std::fprintf(stderr, "bench_failover: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  const char* source_env = std::getenv("GEODESIC_SOURCE_DIR");
  ScratchDir dir("bench_failover");
  sim::LabOptions options;
  options.source_dir = source_env != nullptr ? source_env : GEODESIC_DEFAULT_SOURCE_DIR;
  options.binary_dir = GEODESIC_DEFAULT_BINARY_DIR;
  options.work_dir = dir.path() + "/lab";
  options.topology_path = options.source_dir + "/deploy/examples/backbone.yaml";
  options.replicas = 3;
  options.lease_ttl_s = kLeaseTtlS;
  options.probe_interval_ms = 0;  // configured link health: only the leader changes
  auto lab = sim::LocalLab::Create(options);
  if (!lab.ok() || !(*lab)->StartAll().ok()) {
    std::fprintf(stderr, "bench_failover: the lab did not start\n");
    return 1;
  }
  std::vector<double> failover_ms;
  for (int trial = 0; trial < kTrials; ++trial) {
    uint64_t epoch = 0;
    int leader = -1;
    if (!sim::WaitUntil("a leader's plan installed at iad", std::chrono::seconds(60), [&] {
           return (leader = (*lab)->LeaderReplica(&epoch)) >= 0 && InstalledEpoch(**lab) == epoch;
         }).ok()) {
      std::fprintf(stderr, "bench_failover: no leader's plan installed at iad\n");
      return 1;
    }
    const auto killed = Clock::now();
    (*lab)->Kill((*lab)->ReplicaName(leader), SIGKILL);
    if (!sim::WaitUntil("a new leader's plan installed at iad", std::chrono::seconds(30),
                        [&] { return InstalledEpoch(**lab) > epoch; }).ok()) {
      std::fprintf(stderr, "bench_failover: no new leader's plan within 30 s\n");
      return 1;
    }
    failover_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - killed).count());
    if (!(*lab)->Restart((*lab)->ReplicaName(leader)).ok()) {
      std::fprintf(stderr, "bench_failover: the killed replica did not restart\n");
      return 1;
    }
  }
  std::sort(failover_ms.begin(), failover_ms.end());
  const double ttl_ms = kLeaseTtlS * 1000.0;
  PrintResult("failover_leader_loss_min", failover_ms.front(), "lease_ttl", ttl_ms, "ms", 0);
  PrintResult("failover_leader_loss_median", Median(failover_ms), "lease_ttl", ttl_ms, "ms", 0);
  PrintResult("failover_leader_loss_max", failover_ms.back(), "lease_ttl", ttl_ms, "ms", 0);
  return 0;
}

}  // namespace
}  // namespace geodesic::bench

int main() { return geodesic::bench::Run(); }
