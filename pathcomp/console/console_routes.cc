#include "pathcomp/console/console_routes.h"

#include <memory>
#include <string>

#include "pathcomp/console/console_api.h"
#include "pathcomp/console/console_assets.h"

namespace geodesic::pathcomp {

void RegisterConsoleRoutes(daemon::DaemonListeners& listeners, const PathcompServer::State& state) {
  // Without an admin listener nobody would read the events the API holds.
  if (listeners.admin_url().empty()) return;
  for (const EmbeddedAsset& asset : ConsoleAssets()) {
    listeners.AddRoute(std::string(asset.path), [asset](const daemon::HttpRequest&) {
      return daemon::HttpResponse{
          .status = 200, .content_type = std::string(asset.content_type), .body = std::string(asset.body)};
    });
  }
  // Shared by the routes (they may run on two threads at once; ConsoleApi is thread-safe).
  auto api = std::make_shared<ConsoleApi>(state.model, state.planner, state.events);
  const auto route = [&](const std::string& path, auto method) {
    listeners.AddRoute(path, [api, method](const daemon::HttpRequest& request) { return ((*api).*method)(request); });
  };
  route("/api/v1/topology", &ConsoleApi::Topology);
  route("/api/v1/plan", &ConsoleApi::Plan);
  route("/api/v1/route", &ConsoleApi::Route);
  route("/api/v1/chains", &ConsoleApi::Chains);
  route("/api/v1/audit", &ConsoleApi::Audit);
  route("/api/v1/events", &ConsoleApi::Events);
}

}  // namespace geodesic::pathcomp
