// A one-hour drill on Cogentco (REPETITA, 197 facilities, its own traffic
// matrix, 500 generated agent chains): a fiber cut every two minutes, each
// spliced a minute later, all planned by pathcomp's own code on the
// simulated clock. Wall time against the simulated hour.
//
//   BENCH drill_cogentco_1h: ours=<wall ms> simulated=3600000ms ratio=<wall/simulated>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "bench/bench_report.h"
#include "sim/drill/simulator.h"
#include "sim/drill/drill_generator.h"
#include "topology/import.h"

namespace {

std::string SourceDir() {
  const char* dir = std::getenv("GEODESIC_SOURCE_DIR");
  return dir ? dir : GEODESIC_DEFAULT_SOURCE_DIR;
}

}  // namespace

int main() {
  using namespace geodesic;
  const std::string graph = SourceDir() + "/../shared/data/repetita/Cogentco.graph";
  auto topology = topology::ImportTopology(graph);
  if (!topology.ok()) {
    std::fprintf(stderr, "bench_drill: %s\n", std::string(topology.status().message()).c_str());
    return 1;
  }
  sim::DrillSpec spec;
  spec.name = "cogentco-1h";
  spec.seed = 1;
  spec.topology = *std::move(topology);
  sim::AddChains({.count = 500, .services = 20, .replicas = 3, .min_hops = 3, .max_hops = 8,
                  .service_time_us = 1500, .budget_us = 200'000},
                 spec.seed, spec.topology);
  spec.duration_ms = 3'600'000;
  std::mt19937_64 rng(spec.seed);
  for (uint64_t at = 60'000; at + 60'000 <= spec.duration_ms; at += 120'000) {
    const std::string& link = spec.topology.links[rng() % spec.topology.links.size()].id();
    spec.timeline.push_back({.at_ms = at, .action = sim::TimelineEvent::Action::kFail, .kind = "link", .id = link});
    spec.timeline.push_back(
        {.at_ms = at + 60'000, .action = sim::TimelineEvent::Action::kRestore, .kind = "link", .id = link});
  }
  const auto start = std::chrono::steady_clock::now();
  const v1::DrillReport report = sim::RunDrill(spec);
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "bench_drill: %zu events, %u plans, max chain outage %llu ms, min carried %.3f\n",
               spec.timeline.size(), report.plans(), static_cast<unsigned long long>(report.max_chain_outage_ms()),
               report.min_carried_ratio());
  bench::PrintResult("drill_cogentco_1h", wall_ms, "simulated", static_cast<double>(spec.duration_ms), "ms");
  return 0;
}
