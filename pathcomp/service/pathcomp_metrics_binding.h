#pragma once
// Binds pathcomp's scraped metric families (pathcomp_metrics.h) to a running
// controller: its model, its planner, the agents' streams and its election.
// Every family reads them when /metrics is scraped, on the admin listener's
// threads; nothing is copied ahead of a scrape.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "pathcomp/model/model.h"
#include "pathcomp/service/pathcomp_metrics.h"
#include "pathcomp/service/planner.h"
#include "pathcomp/service/telemetry_service.h"

namespace geodesic::pathcomp {

// What the scraped families read. Each must be thread-safe.
struct PathcompMetricSources {
  Model& model;
  const Planner& planner;
  const TelemetryService& telemetry;
  // The epoch of this replica's plans while they go to routerd: standalone,
  // always (this start's epoch); replicated, while it leads. nullopt while it
  // follows (the per-site install families then have no samples).
  std::function<std::optional<uint64_t>()> delivering_epoch;
  // Replicated: whether etcd answers this replica (its lease is alive).
  // Empty standalone: etcd_reachable has no sample.
  std::function<bool()> etcd_reachable;
};

// Binds every family of `families` to `sources` while it lives; what
// `sources` refers to must outlive it.
class PathcompMetricsBinding {
 public:
  PathcompMetricsBinding(const PathcompScrapedFamilies& families, PathcompMetricSources sources);
  // Unbinds every family (no samples until bound again); returns once no
  // scrape reads the sources any more.
  ~PathcompMetricsBinding();
  PathcompMetricsBinding(const PathcompMetricsBinding&) = delete;
  PathcompMetricsBinding& operator=(const PathcompMetricsBinding&) = delete;

 private:
  struct Shared;
  const PathcompScrapedFamilies& families_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace geodesic::pathcomp
