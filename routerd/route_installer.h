#pragma once
// Where routerd puts routes. Today: a log of what would be installed; the BGP
// speaker towards the site's routers implements the same interface.
#include <memory>

#include "absl/status/status.h"
#include "routerd/rib_diff.h"

namespace geodesic::routerd {

class RouteInstaller {
 public:
  virtual ~RouteInstaller() = default;
  // Applies a diff; on error nothing is assumed installed.
  [[nodiscard]] virtual absl::Status Apply(const RibDiff& diff) = 0;
};
using RouteInstallerPtr = std::unique_ptr<RouteInstaller>;

// Logs each announcement, change and withdrawal as a structured line.
RouteInstallerPtr NewLoggingRouteInstaller();

}  // namespace geodesic::routerd
