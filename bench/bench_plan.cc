// Whole plans on large backbones: BuildPlan (pathcomp's plan: chains, the
// elephant allocation, weighted next hops, routes with every backup, the
// audit) against the elephant solve of the same instance, in time and in
// peak memory, and the plan's serialized size per route.
//
// Instances (each with 1,000 agent chains, sim::AddChains: 24 services with
// 3 replicas, 3 to 6 calls, seed 7):
//   cogentco  REPETITA Cogentco (197 facilities, 37,805 elephant flows)
//   wan754    topology::GenerateSyntheticWan, 754 facilities, 56,736 gravity
//             flows, seed 1
//   wan200    the same generator at 200 facilities and 10,000 flows, and
//   wan100    at 100 facilities and 3,000 flows (neither is run unless named;
//             wan100 is small enough for heaptrack)
//
// Results, per instance <net>:
//   plan_build_<net>     BuildPlan wall time; reference: ElephantAllocator::
//                        Allocate alone on the same snapshot and chain plan,
//                        pricing on as many threads (elephant_solve).
//   plan_peak_mb_<net>   the peak resident memory of a process that builds
//                        the snapshot and the plan; reference: of one that
//                        builds the snapshot, places the chains and solves
//                        the elephants (elephant_solve_peak). Each in a
//                        forked child of its own, read with wait4's
//                        ru_maxrss.
//   plan_next_<net>      BuildPlan of the plan after it, as pathcomp's planner
//                        makes it (AfterFirstPlan: the first held and given
//                        as the previous, the chains re-planned, the
//                        elephants re-solved from the first's state), nothing
//                        changed in between; reference: the first plan's
//                        build (plan_build).
//   plan_traffic_moved_<net>
//                        the same after every elephant flow's demand changed
//                        by x0.8-1.2, one flow in 50 ended and as many new
//                        ones started (MoveTrafficMatrix); same reference.
//   plan_busiest_link_down_<net>
//                        the same after the link the first plan loads most
//                        with elephant flows went down; same reference.
//   plan_next_peak_mb_<net>
//                        the peak of the process that holds the first plan
//                        and builds the next: pathcomp's with a plan of that
//                        network; reference: plan_peak.
//   plan_bytes_per_route_<net>
//                        the serialized plan's bytes per route; reference:
//                        the bytes of the routes' primary next hops alone,
//                        with their ids (v1::NextHop, as routerd resolves them).
// A child that runs out of its memory limit (RLIMIT_AS,
// $GEODESIC_BENCH_PLAN_LIMIT_GB, default 6) or time (600 s) is reported on
// stderr with what it reached, and its results are not printed.
//
// GEODESIC_BENCH_PLAN_IN_PROCESS=1 builds each plan in this process, prints
// no results, only its stderr line: for heaptrack, which follows no fork.
// Plans are built on as many threads as pathcomp's planner uses by default
// (DefaultBuildThreads: the cores, at most 8; with 2, routes on two threads
// and the chains' wire form on a third beside the rest);
// GEODESIC_BENCH_PLAN_THREADS=N (1 to 64) sets it. The stderr lines say which.
// Usage: bench_plan [cogentco|wan754|wan200|wan100]...   (default: cogentco wan754)
// Cogentco is read from $GEODESIC_SOURCE_DIR/../shared/data/repetita. One
// run each (a large instance takes seconds). One line per result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
// The plan child also prints its phases on stderr (wall ms, CPU ms and the
// peak resident memory when each ended): snapshot, chains (with more than one thread the
// primaries alone: the backups, audit and wire form are made beside the elephants), elephants,
// wcmp, routes+backups, protection, chain_wire (what was still waited for the chains), moved
// (BuildPlan's, plan_build is their sum), serialize.
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_report.h"
#include "daemon/allocator.h"
#include "geodesic/v1/model.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/chain_placer.h"
#include "pathcomp/solver/elephant_allocator.h"
#include "pathcomp/solver/plan_builder.h"
#include "pathcomp/solver/snapshot.h"
#include "sim/drill/drill_generator.h"
#include "site_plan/site_plan_reader.h"
#include "topology/repetita.h"
#include "topology/synthetic_wan.h"

namespace geodesic::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kChainHeadroom = 0.1;  // pathcomp's default chain_headroom
constexpr unsigned kChildTimeoutS = 600;

[[noreturn]] void Die(const std::string& what) {
  fprintf(stderr, "bench_plan: %s\n", what.c_str());
  exit(1);
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void AddBenchChains(topology::Topology& topology) {
  sim::GeneratedChains chains;
  chains.count = 1000;
  chains.services = 24;
  chains.replicas = 3;
  chains.min_hops = 3;
  chains.max_hops = 6;
  chains.service_time_us = 2000;
  chains.budget_us = 300'000;
  sim::AddChains(chains, 7, topology);
}

topology::Topology Cogentco() {
  const std::string data = RepetitaDir(GEODESIC_DEFAULT_SOURCE_DIR);
  auto topology = topology::LoadRepetita(data + "/Cogentco.graph", data + "/Cogentco.0000.demands");
  if (!topology.ok()) Die(topology.status().ToString());
  AddBenchChains(*topology);
  return *std::move(topology);
}

topology::Topology Wan(uint32_t facilities, uint32_t flows) {
  topology::SyntheticWanOptions options;
  options.seed = 1;
  options.facilities = facilities;
  options.elephant_flows = flows;
  auto topology = topology::GenerateSyntheticWan(options);
  if (!topology.ok()) Die(topology.status().ToString());
  AddBenchChains(*topology);
  return *std::move(topology);
}

struct Instance {
  std::string name;
  std::function<topology::Topology()> make;
};

// Every link up at its inventory latency, as a simulator drill starts.
pathcomp::Snapshot SnapshotOf(topology::Topology topology) {
  pathcomp::ModelView view;
  view.facilities = std::move(topology.facilities);
  view.nodes = std::move(topology.nodes);
  view.links = std::move(topology.links);
  for (auto& link : view.links) {
    link.mutable_health()->set_state(v1::OPER_STATE_UP);
    link.mutable_health()->set_rtt_us(2 * link.latency_us());
  }
  view.services = std::move(topology.services);
  view.workloads = std::move(topology.workloads);
  view.fabrics = std::move(topology.fabrics);
  return pathcomp::Snapshot::Build(view);
}

// The phases of a plan child, as its stderr line shows them: building the
// snapshot, BuildPlan's (PlanPhase order), then serializing each site's plan.
constexpr const char* kPhaseNames[] = {"snapshot",   "chains",     "elephants", "wcmp",     "routes+backups",
                                       "protection", "chain_wire", "moved",     "serialize"};
constexpr int kPhases = sizeof kPhaseNames / sizeof kPhaseNames[0];

// This process's CPU time (every thread's), in ms: on a shared machine a
// phase's CPU time moves less with the load than its wall time.
double CpuMs() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

double PeakMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB
}

// What a child reports through its pipe.
struct Measured {
  double ms = 0;
  double phase_ms[kPhases] = {};
  double phase_cpu_ms[kPhases] = {};
  double phase_peak_mb[kPhases] = {};  // the process's peak resident memory when the phase ended
  uint64_t plan_bytes = 0;
  uint64_t routes = 0;
  uint64_t primary_bytes = 0;  // the routes' next hops alone, serialized
  uint64_t digest = 0;  // of the serialized plan: equal plans, equal digests (in one binary)
  char note[200] = {};
};

struct ChildOutcome {
  bool ok = false;
  Measured measured;
  double peak_mb = 0;
  double cpu_s = 0;  // the child's user + system time, all of it
  std::string failure;
};

// Runs `work` in a forked child under the memory and time limits.
ChildOutcome InChild(const std::function<Measured()>& work, double limit_gb) {
  int fds[2];
  if (pipe(fds) != 0) Die("pipe failed");
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) Die("fork failed");
  if (pid == 0) {
    close(fds[0]);
    const rlim_t limit = static_cast<rlim_t>(limit_gb * 1024 * 1024 * 1024);
    const rlimit address_space{limit, limit};
    setrlimit(RLIMIT_AS, &address_space);
    alarm(kChildTimeoutS);
    Measured measured;
    try {
      measured = work();
    } catch (const std::bad_alloc&) {
      _exit(3);
    }
    const bool written = write(fds[1], &measured, sizeof measured) == static_cast<ssize_t>(sizeof measured);
    _exit(written ? 0 : 4);
  }
  close(fds[1]);
  ChildOutcome outcome;
  const ssize_t got = read(fds[0], &outcome.measured, sizeof outcome.measured);
  close(fds[0]);
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) Die("wait4 failed");
  outcome.peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
  outcome.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == static_cast<ssize_t>(sizeof outcome.measured)) {
    outcome.ok = true;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    outcome.failure = absl::StrCat("out of memory (std::bad_alloc under the ", limit_gb, " GB limit)");
  } else if (WIFSIGNALED(status)) {
    outcome.failure = absl::StrCat("killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)),
                                   WTERMSIG(status) == SIGALRM ? absl::StrCat(": over ", kChildTimeoutS, " s") : "",
                                   ")");
  } else {
    outcome.failure = absl::StrCat("exited with status ", WEXITSTATUS(status));
  }
  return outcome;
}

Measured ElephantSolve(const Instance& instance, int threads) {
  const pathcomp::Snapshot snapshot = SnapshotOf(instance.make());
  const pathcomp::ChainPlan chains = pathcomp::ChainPlacer(snapshot).PlanAll();
  pathcomp::ElephantAllocator allocator(kChainHeadroom);
  const auto start = Clock::now();
  auto elephants = allocator.Allocate(snapshot, chains.primary, nullptr, threads);
  Measured measured;
  measured.ms = Ms(Clock::now() - start);
  if (!elephants.ok()) Die(absl::StrCat(instance.name, ": elephant allocation failed: ", elephants.status().ToString()));
  snprintf(measured.note, sizeof measured.note, "%zu demands, max utilization %.3f", snapshot.demands().size(),
           elephants->summary.max_utilization());
  return measured;
}

Measured Plan(const Instance& instance, int threads) {
  Measured measured;
  auto phase_start = Clock::now();
  double phase_cpu_start = CpuMs();
  int phase = 0;
  auto phase_ended = [&] {
    const auto now = Clock::now();
    const double cpu_now = CpuMs();
    measured.phase_ms[phase] = Ms(now - phase_start);
    measured.phase_cpu_ms[phase] = cpu_now - phase_cpu_start;
    measured.phase_peak_mb[phase] = PeakMb();
    phase_start = now;
    phase_cpu_start = cpu_now;
    ++phase;
  };
  const pathcomp::Snapshot snapshot = SnapshotOf(instance.make());
  phase_ended();
  pathcomp::ElephantAllocator allocator(kChainHeadroom);
  pathcomp::PlanStamp stamp;
  stamp.generation = 1;
  stamp.reason = "bench_plan";
  const auto start = Clock::now();
  phase_start = start;
  phase_cpu_start = CpuMs();
  pathcomp::BuiltPlan built = pathcomp::BuildPlan(snapshot, stamp, allocator, nullptr, nullptr,
                                                  [&](pathcomp::PlanPhase) { phase_ended(); }, threads);
  measured.ms = Ms(Clock::now() - start);
  if (phase != kPhases - 1) Die(absl::StrCat("BuildPlan reported ", phase - 1, " phases, the bench knows ", kPhases - 2));
  // Serialized site by site, as each routerd gets its own (one buffer: the
  // peak stays the build's).
  phase_start = Clock::now();
  phase_cpu_start = CpuMs();
  std::string wire;
  for (const auto& site : built.plan.sites()) {
    site.SerializeToString(&wire);
    measured.digest = measured.digest * 1099511628211u ^ std::hash<std::string>()(wire);
  }
  phase_ended();
  measured.plan_bytes = built.plan.ByteSizeLong();
  uint64_t path_bytes = 0, entry_bytes = 0;  // the sites' path tables; their route entries
  for (const auto& site : built.plan.sites()) {
    measured.routes += static_cast<uint64_t>(site.routes_size());
    v1::SitePlan paths_only;  // the path table's four fields
    *paths_only.mutable_path_node_parents() = site.path_node_parents();
    *paths_only.mutable_path_node_facilities() = site.path_node_facilities();
    *paths_only.mutable_path_nodes() = site.path_nodes();
    *paths_only.mutable_path_latencies_us() = site.path_latencies_us();
    path_bytes += paths_only.ByteSizeLong();
    for (const auto& route : site.routes()) entry_bytes += route.ByteSizeLong() + 2;
    for (const auto& route : site.routes()) {
      v1::ForwardingRoute primary;
      for (v1::NextHop& hop : site_plan::NextHops(site, site_plan::PrimaryGroup(site, route))) {
        *primary.add_next_hops() = std::move(hop);
      }
      measured.primary_bytes += primary.ByteSizeLong();
    }
  }
  uint64_t chain_bytes = 0;
  for (const auto& chain : built.plan.chains()) chain_bytes += chain.ByteSizeLong();
  snprintf(measured.note, sizeof measured.note,
           "routes %.1f MB (entries %.1f MB, paths %.1f MB), chains %.1f MB; %zu problems%s%s",
           static_cast<double>(measured.plan_bytes - chain_bytes) / 1e6, static_cast<double>(entry_bytes) / 1e6,
           static_cast<double>(path_bytes) / 1e6, static_cast<double>(chain_bytes) / 1e6,
           built.problems.size(), built.problems.empty() ? "" : ", the first: ",
           built.problems.empty() ? "" : built.problems.front().substr(0, 100).c_str());
  // The rest of the plan, chain by chain (one buffer: the digest adds
  // nothing to the peak), then what is left without sites and chains.
  for (const auto& chain : built.plan.chains()) {
    chain.SerializeToString(&wire);
    measured.digest = measured.digest * 1099511628211u ^ std::hash<std::string>()(wire);
  }
  // Hashed above; let go (clear_sites() keeps the cleared messages allocated).
  google::protobuf::RepeatedPtrField<v1::SitePlan>().Swap(built.plan.mutable_sites());
  google::protobuf::RepeatedPtrField<v1::ChainPlan>().Swap(built.plan.mutable_chains());
  measured.digest = measured.digest * 1099511628211u ^ std::hash<std::string>()(built.plan.SerializeAsString());
  return measured;
}

// The traffic matrix a while later (seeded): every elephant flow's demand
// times a factor in [0.8, 1.2], one flow in 50 ended and as many new ones
// between facilities drawn from the others (pairs with or without flows).
void MoveTrafficMatrix(topology::Topology& topology) {
  std::mt19937_64 random(23);
  std::uniform_real_distribution<double> factor(0.8, 1.2);
  std::map<std::string, std::string> owner;  // prefix -> facility
  for (const auto& facility : topology.facilities) {
    for (const auto& prefix : facility.prefixes()) owner[prefix] = facility.id();
  }
  std::vector<v1::Workload> kept, flows;
  for (v1::Workload& workload : topology.workloads) {
    if (!workload.has_elephant()) {
      kept.push_back(std::move(workload));
      continue;
    }
    flows.push_back(workload);
    if (random() % 50 == 0) continue;
    workload.mutable_elephant()->set_demand_gbps(workload.elephant().demand_gbps() * factor(random));
    kept.push_back(std::move(workload));
  }
  const size_t ended = topology.workloads.size() - kept.size();
  for (size_t i = 0; i < ended && !flows.empty(); ++i) {
    v1::Workload added = flows[random() % flows.size()];
    const v1::ElephantFlow& to = flows[random() % flows.size()].elephant();
    if (owner[to.dst_prefix()] == added.elephant().src_facility_id()) continue;
    added.set_id(absl::StrCat(added.id(), "-moved-", i));
    added.mutable_elephant()->set_dst_prefix(to.dst_prefix());
    kept.push_back(std::move(added));
  }
  topology.workloads = std::move(kept);
}

// What changed between a first plan and the next (AfterFirstPlan).
enum class Change {
  kNothing,        // the plan is built again: the least a re-plan holds
  kTrafficMoved,   // MoveTrafficMatrix
  kBusiestLinkDown,  // the link the first plan loads most with elephant flows goes down
};

// The plan after the first, as pathcomp's planner makes it: the first plan
// held (the planner serves it until the next replaces it) and given as the
// previous one, the chains re-planned from the first's (its chain cache),
// the elephant allocation re-solved from the first's state, after `change`.
// Its peak is pathcomp's with a plan of this network, its time a re-plan's.
Measured AfterFirstPlan(const Instance& instance, int threads, Change change) {
  topology::Topology topology = instance.make();
  // Kept only to move its traffic: a copy held through the plans is in the peak.
  const pathcomp::Snapshot snapshot =
      change == Change::kTrafficMoved ? SnapshotOf(topology) : SnapshotOf(std::move(topology));
  pathcomp::ElephantAllocator allocator(kChainHeadroom);
  pathcomp::ChainPlanCache chains;
  pathcomp::PlanStamp stamp;
  stamp.generation = 1;
  stamp.reason = "bench_plan";
  const v1::Plan first = pathcomp::BuildPlan(snapshot, stamp, allocator, nullptr, &chains, {}, threads).plan;
  std::optional<pathcomp::Snapshot> changed;
  std::string what = "nothing changed";
  if (change == Change::kTrafficMoved) {
    MoveTrafficMatrix(topology);
    changed = SnapshotOf(std::move(topology));
    what = "the traffic matrix moved";
  } else if (change == Change::kBusiestLinkDown) {
    const auto& links = first.elephants().links();
    const auto busiest = std::max_element(links.begin(), links.end(), [](const v1::LinkLoad& a, const v1::LinkLoad& b) {
      return a.load_gbps() < b.load_gbps();
    });
    if (busiest == links.end()) Die(absl::StrCat(instance.name, ": the first plan loads no link"));
    v1::LinkHealth down;
    down.set_state(v1::OPER_STATE_DOWN);
    absl::StatusOr<pathcomp::Snapshot> failed = snapshot.WithLinkHealth({{busiest->link_id(), down}});
    if (!failed.ok()) Die(failed.status().ToString());
    changed = *std::move(failed);
    what = absl::StrCat(busiest->link_id(), " down");
  }
  const pathcomp::Snapshot& next_snapshot = changed ? *changed : snapshot;
  stamp.generation = 2;
  const auto start = Clock::now();
  auto phase_start = start;
  double elephants_ms = 0;
  const pathcomp::BuiltPlan next =
      pathcomp::BuildPlan(next_snapshot, stamp, allocator, &first, &chains,
                          [&](pathcomp::PlanPhase ended) {
                            const auto now = Clock::now();
                            if (ended == pathcomp::PlanPhase::kElephants) elephants_ms = Ms(now - phase_start);
                            phase_start = now;
                          },
                          threads);
  Measured measured;
  measured.ms = Ms(Clock::now() - start);
  snprintf(measured.note, sizeof measured.note,
           "%s: %zu demands, elephants %.0f ms (%s), %zu moved, max utilization %.6f, proven lower bound %.6f",
           what.c_str(), next_snapshot.demands().size(), elephants_ms, next.plan.elephants().warm() ? "warm" : "cold",
           static_cast<size_t>(next.plan.moved_workload_ids_size()), next.plan.elephants().max_utilization(),
           next.plan.elephants().max_utilization_lower_bound());
  return measured;
}

std::string Phases(const Measured& measured) {
  std::string text;
  for (int i = 0; i < kPhases; ++i) {
    absl::StrAppend(&text, i == 0 ? "" : ", ", kPhaseNames[i], " ", static_cast<int64_t>(measured.phase_ms[i] + 0.5),
                    " ms (cpu ", static_cast<int64_t>(measured.phase_cpu_ms[i] + 0.5), ", peak ",
                    static_cast<int64_t>(measured.phase_peak_mb[i] + 0.5), " MB)");
  }
  return text;
}

void Run(const Instance& instance, double limit_gb, bool in_process, int threads) {
  if (in_process) {  // for heaptrack, which follows no fork
    const Measured plan = Plan(instance, threads);
    fprintf(stderr, "bench_plan: %s: plan %.0f ms in process on %d thread(s), %llu routes, %.1f MB serialized (%s)\n",
            instance.name.c_str(), plan.ms, threads, static_cast<unsigned long long>(plan.routes),
            static_cast<double>(plan.plan_bytes) / 1e6, plan.note);
    fprintf(stderr, "bench_plan: %s: phases: %s; plan digest %016llx\n", instance.name.c_str(), Phases(plan).c_str(),
            static_cast<unsigned long long>(plan.digest));
    return;
  }
  const ChildOutcome reference = InChild([&] { return ElephantSolve(instance, threads); }, limit_gb);
  if (!reference.ok) Die(absl::StrCat(instance.name, ": the elephant solve failed: ", reference.failure));
  fprintf(stderr, "bench_plan: %s: elephant solve %.0f ms, peak %.0f MB, child CPU %.1f s (%s)\n",
          instance.name.c_str(), reference.measured.ms, reference.peak_mb, reference.cpu_s, reference.measured.note);
  const ChildOutcome plan = InChild([&] { return Plan(instance, threads); }, limit_gb);
  if (!plan.ok) {
    fprintf(stderr, "bench_plan: %s: the plan was not built: %s, peak %.0f MB, child CPU %.1f s; no results printed\n",
            instance.name.c_str(), plan.failure.c_str(), plan.peak_mb, plan.cpu_s);
    return;
  }
  fprintf(stderr,
          "bench_plan: %s: plan %.0f ms on %d thread(s), peak %.0f MB, child CPU %.1f s, %llu routes, %.1f MB "
          "serialized (%s)\n",
          instance.name.c_str(), plan.measured.ms, threads, plan.peak_mb, plan.cpu_s,
          static_cast<unsigned long long>(plan.measured.routes), static_cast<double>(plan.measured.plan_bytes) / 1e6,
          plan.measured.note);
  fprintf(stderr, "bench_plan: %s: phases: %s; plan digest %016llx\n", instance.name.c_str(),
          Phases(plan.measured).c_str(), static_cast<unsigned long long>(plan.measured.digest));
  PrintResult("plan_build_" + instance.name, plan.measured.ms, "elephant_solve", reference.measured.ms, "ms", 0);
  PrintResult("plan_peak_mb_" + instance.name, plan.peak_mb, "elephant_solve_peak", reference.peak_mb, "MB", 0);
  const struct {
    Change change;
    const char* name;  // of the result: <name>_<net>
  } replans[] = {{Change::kNothing, "plan_next"},
                 {Change::kTrafficMoved, "plan_traffic_moved"},
                 {Change::kBusiestLinkDown, "plan_busiest_link_down"}};
  for (const auto& replan : replans) {
    const ChildOutcome next = InChild([&] { return AfterFirstPlan(instance, threads, replan.change); }, limit_gb);
    if (!next.ok) {
      fprintf(stderr, "bench_plan: %s: %s was not built: %s, peak %.0f MB, child CPU %.1f s\n", instance.name.c_str(),
              replan.name, next.failure.c_str(), next.peak_mb, next.cpu_s);
      continue;
    }
    fprintf(stderr, "bench_plan: %s: %s %.0f ms with the first held, peak %.0f MB, child CPU %.1f s (%s)\n",
            instance.name.c_str(), replan.name, next.measured.ms, next.peak_mb, next.cpu_s, next.measured.note);
    PrintResult(absl::StrCat(replan.name, "_", instance.name), next.measured.ms, "plan_build", plan.measured.ms, "ms",
                0);
    if (replan.change == Change::kNothing) {
      PrintResult("plan_next_peak_mb_" + instance.name, next.peak_mb, "plan_peak", plan.peak_mb, "MB", 0);
    }
  }
  const double routes = static_cast<double>(std::max<uint64_t>(1, plan.measured.routes));
  PrintResult("plan_bytes_per_route_" + instance.name, static_cast<double>(plan.measured.plan_bytes) / routes,
              "primary_next_hops", static_cast<double>(plan.measured.primary_bytes) / routes, "B", 0);
}

int Main(int argc, char** argv) {
  const std::vector<Instance> known = {
      {"cogentco", Cogentco},
      {"wan754", [] { return Wan(754, 56'736); }},
      {"wan200", [] { return Wan(200, 10'000); }},
      {"wan100", [] { return Wan(100, 3'000); }},
  };
  std::vector<std::string> names(argv + 1, argv + argc);
  if (names.empty()) names = {"cogentco", "wan754"};
  double limit_gb = 6;
  if (const char* text = getenv("GEODESIC_BENCH_PLAN_LIMIT_GB"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    limit_gb = strtod(text, &end);
    if (*end != '\0' || !(limit_gb >= 0.5 && limit_gb <= 1024)) {
      Die(absl::StrCat("GEODESIC_BENCH_PLAN_LIMIT_GB=", text, ": expected a number of GB in [0.5, 1024]"));
    }
  }
  int threads = pathcomp::DefaultBuildThreads();  // as pathcomp builds its plans
  if (const char* text = getenv("GEODESIC_BENCH_PLAN_THREADS"); text != nullptr && *text != '\0') {
    if (!absl::SimpleAtoi(text, &threads) || threads < 1 || threads > 64) {
      Die(absl::StrCat("GEODESIC_BENCH_PLAN_THREADS=", text, ": expected 1 to 64"));
    }
  }
  const char* in_process_text = getenv("GEODESIC_BENCH_PLAN_IN_PROCESS");
  const bool in_process = in_process_text != nullptr && std::string(in_process_text) == "1";
  for (const std::string& name : names) {
    const Instance* instance = nullptr;
    for (const Instance& candidate : known) {
      if (candidate.name == name) instance = &candidate;
    }
    if (instance == nullptr) Die(absl::StrCat("unknown instance \"", name, "\" (cogentco, wan754, wan200, wan100)"));
    Run(*instance, limit_gb, in_process, threads);
  }
  return 0;
}

}  // namespace
}  // namespace geodesic::bench

int main(int argc, char** argv) {
  geodesic::daemon::KeepFreedMemoryForReuse();  // as pathcomp's main does (plans are built there)
  return geodesic::bench::Main(argc, argv);
}
