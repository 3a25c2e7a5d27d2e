#pragma once
// Where routerd puts routes. Today: a log of what would be installed; the BGP
// speaker towards the site's routers implements the same interface.
#include <chrono>
#include <memory>

#include "absl/status/status.h"
#include "routerd/rib_diff.h"

namespace geodesic::routerd {

class RouteInstaller {
 public:
  virtual ~RouteInstaller() = default;
  // Applies a diff; on error nothing is assumed installed.
  [[nodiscard]] virtual absl::Status Apply(const RibDiff& diff) = 0;
  // Waits until every router has been sent every route applied so far, or
  // `deadline`; returns whether they have. An installer whose Apply puts the
  // routes in place itself has nothing to wait for.
  [[nodiscard]] virtual bool WaitSentToRouters(std::chrono::steady_clock::time_point /*deadline*/) { return true; }
  // PlanInstaller::Open has applied what it restored (or found nothing to
  // restore): an installer that holds back from the routers until it has
  // its first routes (a BGP speaker coming back with graceful restart) may
  // go ahead.
  virtual void InitialRoutesLoaded() {}
};
using RouteInstallerPtr = std::unique_ptr<RouteInstaller>;

// Logs each announcement, change and withdrawal as a structured line.
RouteInstallerPtr NewLoggingRouteInstaller();

}  // namespace geodesic::routerd
