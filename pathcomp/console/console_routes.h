#pragma once
// pathcomp's read-only web console on its admin listener (the `metrics:`
// listener, beside /metrics, /healthz and /readyz; HTTPS with the project's
// PKI when configured, else loopback-only unless told otherwise):
//
//   GET /             the page: the backbone map, routes, MLU, chains, events, audit
//   GET /console.js   its script; GET /console.css its style sheet
//   GET /api/v1/...   the JSON API it polls (console_api.h, docs/console-api.md)
//
// The page loads nothing from elsewhere (no CDN, no map tiles).
#include "daemon/admin_server.h"
#include "pathcomp/service/pathcomp_server.h"

namespace geodesic::pathcomp {

// Adds the console's routes to `listeners`' admin listener (nothing without
// one). The routes read `state`: stop the listeners before the server goes.
void RegisterConsoleRoutes(daemon::DaemonListeners& listeners, const PathcompServer::State& state);

}  // namespace geodesic::pathcomp
