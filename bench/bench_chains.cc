// Agent-chain placement at scale: 10,000 chains of 3 to 8 calls over Cogentco
// (197 facilities, 490 links), services with 1 to 4 replicas at seeded random
// facilities. Against a reference measured in the same run:
//
//   chains_primary_10k   ChainPlacer::Place for every chain (latency-sum
//                        optimal placement, exact DP over replicas);
//                        reference: one all-pairs shortest-path pass
//                        (a Dijkstra from every facility), the floor any
//                        latency-aware placement pays.
//   chains_plan_10k      ChainPlacer::PlanAll: primaries, a backup for every
//                        facility, link and SRLG each primary touches, and the
//                        single-facility audit of chains and elephant flows;
//                        same reference.
//   chains_replan_link_failure_10k
//                        ChainPlacer::Replan after a link chains use goes down
//                        (the median of the used links by how many primaries
//                        use it), from the previous plan (moved in, as a
//                        planner keeping it would); same reference.
//
// PlanAll and Replan place backups on `--threads=N` threads (default: the
// machine's cores, as pathcomp builds plans); the reference runs on one.
// Before timing, the plans are checked once against the straightforward
// PlanAllReference (and the re-plan against a fresh PlanAll); a mismatch fails
// the bench. Medians of a few runs. One line per result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_report.h"
#include "daemon/allocator.h"
#include "pathcomp/solver/chain_placer.h"
#include "pathcomp/solver/plan_builder.h"
#include "pathcomp/solver/shortest_paths.h"
#include "pathcomp/solver/snapshot.h"
#include "topology/repetita.h"

namespace geodesic::bench {
namespace {

constexpr int kChains = 10'000;
constexpr int kServices = 24;
constexpr int kRuns = 3;

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

pathcomp::ModelView CogentcoWithChains() {
  const std::string data = RepetitaDir(GEODESIC_DEFAULT_SOURCE_DIR);
  auto topology = topology::LoadRepetita(data + "/Cogentco.graph", data + "/Cogentco.0000.demands");
  if (!topology.ok()) {
    fprintf(stderr, "bench_chains: %s\n", topology.status().ToString().c_str());
    exit(1);
  }
  pathcomp::ModelView view;
  view.facilities = topology->facilities;
  view.nodes = topology->nodes;
  view.links = topology->links;
  for (auto& link : view.links) link.mutable_health()->set_state(v1::OPER_STATE_UP);
  view.workloads = topology->workloads;  // the elephant flows, for the audit
  std::mt19937 random(7);
  const int facilities = static_cast<int>(view.facilities.size());
  for (int s = 0; s < kServices; ++s) {
    v1::Service& service = view.services.emplace_back();
    service.set_id(absl::StrCat("svc-", s));
    const int replicas = 1 + static_cast<int>(random() % 4);
    for (int r = 0; r < replicas; ++r) {
      service.add_replica_facility_ids(view.facilities[random() % facilities].id());
    }
    service.set_service_time_us(1000 + random() % 50'000);
  }
  for (int c = 0; c < kChains; ++c) {
    v1::Workload& workload = view.workloads.emplace_back();
    workload.set_id(absl::StrCat("chain-", c));
    auto& chain = *workload.mutable_chain();
    chain.set_origin_facility_id(view.facilities[random() % facilities].id());
    const int calls = 3 + static_cast<int>(random() % 6);
    for (int i = 0; i < calls; ++i) chain.add_service_ids(absl::StrCat("svc-", random() % kServices));
    chain.set_latency_budget_us(400'000);
  }
  return view;
}

// `--profile-plan=N`: only N PlanAll runs, each timed, for a profiler
// (perf record) to see PlanAll alone, without the oracle check.
// Also the process's CPU time (all its threads), which a loaded machine
// disturbs less (time spent waiting for a core is not in it).
double CpuMs() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

// The process's page faults so far: pages touched for the first time, or
// again after the allocator gave them back. Each costs about 11 us on the
// 2-core VM (a 4 KiB page; a 2 MiB one about 0.15 ms once the host backs
// it), so a run that faults thousands is slower for it: a process's first
// PlanAll faults ~6,500 pages on one thread and ~24,000 on two, its third
// and later ones a few dozen to a few hundred.
long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

int ProfilePlan(const pathcomp::Snapshot& snapshot, int runs, int threads) {
  std::vector<double> wall, cpu;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = CpuMs();
    const long faults_start = MinorFaults();
    const pathcomp::ChainPlan plan = pathcomp::ChainPlacer(snapshot, threads).PlanAll();
    cpu.push_back(CpuMs() - cpu_start);
    wall.push_back(Ms(std::chrono::steady_clock::now() - start));
    fprintf(stderr, "bench_chains: PlanAll %.1f ms, %.1f ms CPU, %ld page faults (%zu backups)\n", wall.back(),
            cpu.back(), MinorFaults() - faults_start, plan.total_backups());
  }
  fprintf(stderr, "bench_chains: PlanAll median %.1f ms, %.1f ms CPU\n", Median(wall), Median(cpu));
  return 0;
}

// The value of `--name=N` in `arg`, when it is that flag with a whole
// number in [low, high]; -1 when `arg` is not that flag; -2 when it is, with a bad value.
long FlagValue(const std::string& arg, const std::string& name, long low, long high) {
  const std::string flag = "--" + name + "=";
  if (arg.rfind(flag, 0) != 0) return -1;
  char* end = nullptr;
  const long value = strtol(arg.c_str() + flag.size(), &end, 10);
  if (end == arg.c_str() + flag.size() || *end != '\0' || value < low || value > high) return -2;
  return value;
}

int Main(int argc, char** argv) {
  int profile_runs = 0;
  int threads = pathcomp::DefaultBuildThreads();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (const long runs = FlagValue(arg, "profile-plan", 1, 1000); runs > 0) {
      profile_runs = static_cast<int>(runs);
    } else if (const long count = FlagValue(arg, "threads", 1, 64); count > 0) {
      threads = static_cast<int>(count);
    } else {
      fprintf(stderr,
              "bench_chains: bad argument '%s' (usage: bench_chains [--profile-plan=N] [--threads=T], N in 1..1000, "
              "T in 1..64)\n",
              arg.c_str());
      return 2;
    }
  }
  fprintf(stderr, "bench_chains: PlanAll and Replan on %d thread(s)\n", threads);
  const pathcomp::Snapshot snapshot = pathcomp::Snapshot::Build(CogentcoWithChains());
  if (snapshot.chains().size() != kChains) {
    fprintf(stderr, "bench_chains: %zu chains in the snapshot\n", snapshot.chains().size());
    return 1;
  }
  if (profile_runs > 0) return ProfilePlan(snapshot, profile_runs, threads);
  // Exactness first, outside the timings.
  pathcomp::ChainPlan checked = pathcomp::ChainPlacer(snapshot, threads).PlanAll();
  auto start = std::chrono::steady_clock::now();
  if (!(checked == pathcomp::ChainPlacer(snapshot).PlanAllReference())) {
    fprintf(stderr, "bench_chains: PlanAll differs from PlanAllReference\n");
    return 1;
  }
  const double reference_ms = Ms(std::chrono::steady_clock::now() - start);
  // A link chains use, the median by how many primaries use it (a typical
  // failure; the most used one re-places most chains), and the snapshot with it down.
  std::vector<int> users(snapshot.link_count(), 0);
  for (const auto& placement : checked.primary) {
    for (int link : placement.Links()) ++users[link];
  }
  std::vector<int> used;
  for (int link = 0; link < snapshot.link_count(); ++link) {
    if (users[link] > 0) used.push_back(link);
  }
  if (used.empty()) {
    fprintf(stderr, "bench_chains: no chain uses a link\n");
    return 1;
  }
  std::sort(used.begin(), used.end(), [&](int a, int b) { return users[a] != users[b] ? users[a] < users[b] : a < b; });
  const int failed = used[used.size() / 2];
  v1::LinkHealth down;
  down.set_state(v1::OPER_STATE_DOWN);
  auto after = snapshot.WithLinkHealth({{snapshot.link_id(failed), down}});
  if (!after.ok()) {
    fprintf(stderr, "bench_chains: %s\n", after.status().ToString().c_str());
    return 1;
  }
  if (!(pathcomp::ChainPlacer(*after, threads).Replan(checked, snapshot) == pathcomp::ChainPlacer(*after).PlanAll())) {
    fprintf(stderr, "bench_chains: Replan differs from PlanAll\n");
    return 1;
  }
  fprintf(stderr, "bench_chains: PlanAll equals PlanAllReference (%.0f ms); Replan after %s down (used by %d primaries) equals PlanAll\n",
          reference_ms, snapshot.link_id(failed).c_str(), users[failed]);

  std::vector<double> all_pairs, primary, plan, replan, plan_cpu, replan_cpu;
  size_t placed = 0, backups = 0, dependencies = 0, changed_hops = 0;
  for (int run = 0; run < kRuns; ++run) {
    start = std::chrono::steady_clock::now();
    uint64_t checksum = 0;
    for (int f = 0; f < snapshot.facility_count(); ++f) {
      checksum += pathcomp::ShortestPaths::Run(snapshot, f, {}).distance_us[0];
    }
    all_pairs.push_back(Ms(std::chrono::steady_clock::now() - start));
    if (checksum == 42) printf("\n");  // keeps the work observable

    start = std::chrono::steady_clock::now();
    pathcomp::ChainPlacer placer(snapshot);
    placed = 0;
    for (const auto& chain : snapshot.chains()) placed += placer.Place(chain).placed;
    primary.push_back(Ms(std::chrono::steady_clock::now() - start));

    start = std::chrono::steady_clock::now();
    double cpu_start = CpuMs();
    pathcomp::ChainPlan result = pathcomp::ChainPlacer(snapshot, threads).PlanAll();
    plan_cpu.push_back(CpuMs() - cpu_start);
    plan.push_back(Ms(std::chrono::steady_clock::now() - start));
    backups = result.total_backups();
    dependencies = result.dependencies.size();
    changed_hops = result.changed.size();

    // What the planner keeps, moved (a copy would not keep the room the
    // plan's storage keeps for re-plans).
    pathcomp::ChainPlan previous = std::move(result);
    start = std::chrono::steady_clock::now();
    cpu_start = CpuMs();
    const pathcomp::ChainPlan replanned =
        pathcomp::ChainPlacer(*after, threads).Replan(std::move(previous), snapshot);
    replan_cpu.push_back(CpuMs() - cpu_start);
    replan.push_back(Ms(std::chrono::steady_clock::now() - start));
    if (replanned.primary.size() != snapshot.chains().size()) return 1;
  }
  fprintf(stderr, "bench_chains: %zu of %d chains placed, %zu backups (%zu changed hops), %zu single-facility dependencies\n",
          placed, kChains, backups, changed_hops, dependencies);
  // On a shared machine wall time also counts waiting for a core.
  fprintf(stderr, "bench_chains: CPU medians (all threads): PlanAll %.1f ms, Replan %.1f ms\n", Median(plan_cpu),
          Median(replan_cpu));
  PrintResult("chains_primary_10k", Median(primary), "all_pairs_dijkstra", Median(all_pairs), "ms", 1);
  PrintResult("chains_plan_10k", Median(plan), "all_pairs_dijkstra", Median(all_pairs), "ms", 1);
  PrintResult("chains_replan_link_failure_10k", Median(replan), "all_pairs_dijkstra", Median(all_pairs), "ms", 1);
  return 0;
}

}  // namespace
}  // namespace geodesic::bench

int main(int argc, char** argv) {
  geodesic::daemon::KeepFreedMemoryForReuse();  // as pathcomp's main does (plans are built there)
  return geodesic::bench::Main(argc, argv);
}
