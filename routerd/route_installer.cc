#include "routerd/route_installer.h"

#include "absl/strings/str_join.h"
#include "daemon/log.h"

namespace geodesic::routerd {
namespace {

class LoggingRouteInstaller final : public RouteInstaller {
 public:
  absl::Status Apply(const RibDiff& diff) override {
    for (const auto& route : diff.added) {
      daemon::LogInfo("would announce", {{"prefix", route.prefix()},
                                         {"to", route.destination_facility_id()},
                                         {"via", DescribeNextHops(route)},
                                         {"path", absl::StrJoin(route.path_facility_ids(), ">")},
                                         {"latency_us", std::to_string(route.path_latency_us())}});
    }
    for (const auto& change : diff.changed) {
      daemon::LogInfo("would re-announce",
                      {{"prefix", change.after.prefix()},
                       {"to", change.after.destination_facility_id()},
                       {"via", DescribeNextHops(change.after)},
                       {"was", DescribeNextHops(change.before)},
                       {"path", absl::StrJoin(change.after.path_facility_ids(), ">")},
                       {"latency_us", std::to_string(change.after.path_latency_us())}});
    }
    for (const auto& route : diff.removed) {
      daemon::LogInfo("would withdraw", {{"prefix", route.prefix()},
                                         {"was", DescribeNextHops(route)}});
    }
    return absl::OkStatus();
  }
};

}  // namespace

RouteInstallerPtr NewLoggingRouteInstaller() { return std::make_unique<LoggingRouteInstaller>(); }

}  // namespace geodesic::routerd
