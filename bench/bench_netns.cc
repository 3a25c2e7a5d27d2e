// Fiber cuts with real packets: sim/drills/backbone-netns-fiber-cuts.yaml (five
// fibers of the example backbone cut one after the other, each spliced
// before the next) in the netns lab, twice in one run: with routerd's local
// repair, and with it disabled (routerd waits for pathcomp's new plan). Per
// cut: the longest run of packets lost by a stream crossing it (ms, to the
// resolution of a flow's packet interval). Prints the median over the cuts
// against the 50 ms target and against re-planning only:
//   BENCH netns_fiber_cut_outage: ours=<ms> target=50ms ratio=...
//   BENCH netns_fiber_cut_outage_vs_replan: ours=<ms> replan_only=<ms> ratio=...
//   BENCH netns_fiber_cut_packets_lost: ours=<pkt> replan_only=<pkt> ratio=...
// (the median over the cuts of the packets all streams lost). The longest
// loss is of the worst of an elephant's flows: a flow the kernel hashes
// back towards the repairing router loops until the new plan (see
// pathcomp/solver/path_solver.h: the backup sends the least back it can).
// Needs root, iproute2, nftables and FRR (exits 0 with a note on stderr
// without them, so `make bench` goes on elsewhere).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "bench/scratch_dir.h"
#include "sim/drill/drill_spec.h"
#include "sim/drill/netns_drill.h"
#include "sim/netns/netns_backbone.h"
#include "sim/netns/netns_router.h"

namespace geodesic::bench {
namespace {

constexpr double kTargetMs = 50;

struct CutLosses {
  std::vector<double> longest_ms;  // per cut: the longest loss of a stream
  std::vector<double> packets;     // per cut: the packets every stream lost
};

// What each cut ("fail ..." events) of one run cost the streams.
absl::StatusOr<CutLosses> MeasureCuts(const sim::DrillSpec& spec, const std::string& source_dir,
                                              const std::string& work_dir, bool local_repair) {
  sim::NetnsDrillOptions options;
  options.source_dir = source_dir;
  options.binary_dir = GEODESIC_DEFAULT_BINARY_DIR;
  options.work_dir = work_dir;
  options.local_repair = local_repair;
  absl::StatusOr<v1::DrillReport> report = sim::RunNetnsDrill(spec, options);
  if (!report.ok()) return report.status();
  CutLosses losses;
  for (const v1::DrillEventOutcome& event : report->events()) {
    if (event.event().rfind("fail ", 0) != 0) continue;
    losses.longest_ms.push_back(event.packets().max_loss_ms());
    losses.packets.push_back(static_cast<double>(event.packets().packets_lost()));
    std::fprintf(stderr,
                 "bench_netns: %s %s: %u of %u streams lost %llu packets, longest %.1f ms (%s), FIB %llu..%llu ms\n",
                 local_repair ? "local repair" : "re-plan only", event.event().c_str(), event.packets().streams_hit(),
                 event.packets().streams(), static_cast<unsigned long long>(event.packets().packets_lost()),
                 event.packets().max_loss_ms(),
                 event.packets().worst_stream().empty() ? "-" : event.packets().worst_stream().c_str(),
                 static_cast<unsigned long long>(event.packets().fib_first_change_ms()),
                 static_cast<unsigned long long>(event.packets().fib_last_change_ms()));
  }
  return losses;
}

int Run() {
  if (auto available = sim::NetnsBackbone::Available(); !available.ok()) {
    std::fprintf(stderr, "bench_netns: skipped: %s\n", std::string(available.message()).c_str());
    return 0;
  }
  if (auto available = sim::NetnsRouterAvailable(); !available.ok()) {
    std::fprintf(stderr, "bench_netns: skipped: %s\n", std::string(available.message()).c_str());
    return 0;
  }
  const char* source_env = std::getenv("GEODESIC_SOURCE_DIR");
  const std::string source_dir = source_env != nullptr ? source_env : GEODESIC_DEFAULT_SOURCE_DIR;
  absl::StatusOr<sim::DrillSpec> spec = sim::LoadDrill(source_dir + "/sim/drills/backbone-netns-fiber-cuts.yaml");
  if (!spec.ok()) {
    std::fprintf(stderr, "bench_netns: %s\n", spec.status().ToString().c_str());
    return 1;
  }
  ScratchDir dir("bench_netns");
  absl::StatusOr<CutLosses> repaired = MeasureCuts(*spec, source_dir, dir.path() + "/local-repair", true);
  if (!repaired.ok()) {
    std::fprintf(stderr, "bench_netns: %s\n", repaired.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<CutLosses> replanned = MeasureCuts(*spec, source_dir, dir.path() + "/replan-only", false);
  if (!replanned.ok()) {
    std::fprintf(stderr, "bench_netns: %s\n", replanned.status().ToString().c_str());
    return 1;
  }
  const double ours = Median(repaired->longest_ms);
  PrintResult("netns_fiber_cut_outage", ours, "target", kTargetMs, "ms", 1);
  PrintResult("netns_fiber_cut_outage_vs_replan", ours, "replan_only", Median(replanned->longest_ms), "ms", 1);
  PrintResult("netns_fiber_cut_packets_lost", Median(repaired->packets), "replan_only", Median(replanned->packets),
              "pkt");
  return 0;
}

}  // namespace
}  // namespace geodesic::bench

int main() { return geodesic::bench::Run(); }
