#pragma once
// The JSON API behind pathcomp's web console, read-only, version 1: what one
// replica's model, plan and event bus say, as docs/console-api.md documents
// it. The page is one client; field names are stable (protobuf's JSON of the
// wire messages, with the .proto field names, plus a few fields of its own).
//
//   GET /api/v1/topology               facilities (with positions) and links
//   GET /api/v1/plan                   the current plan's summary: generation, MLU, demand
//   GET /api/v1/route?src=F&dst=G      the plan's routes from F to G's prefixes, with link shares
//   GET /api/v1/chains                 agent chains hop by hop, with the slowest hop
//   GET /api/v1/audit                  the single-facility audit of the current plan
//   GET /api/v1/events?after=SEQ       the newest health, plan and intent events after SEQ
//
// Answers are application/json. A bad query parameter answers 400 and
// {"error": "..."} naming it; no plan yet answers 503 the same way.
// Thread-safe (as Model, Planner and EventHistory are); each answer is
// computed from one read of the plan.
#include "daemon/admin_server.h"
#include "pathcomp/console/event_history.h"
#include "pathcomp/model/model.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/planner.h"

namespace geodesic::pathcomp {

class ConsoleApi {
 public:
  // Reads `model` and `planner` and subscribes to `events`; all three must
  // outlive every call (not the construction: see EventHistory).
  ConsoleApi(Model& model, const Planner& planner, EventBus& events);

  daemon::HttpResponse Topology(const daemon::HttpRequest& request) const;
  daemon::HttpResponse Plan(const daemon::HttpRequest& request) const;
  daemon::HttpResponse Route(const daemon::HttpRequest& request) const;
  daemon::HttpResponse Chains(const daemon::HttpRequest& request) const;
  daemon::HttpResponse Audit(const daemon::HttpRequest& request) const;
  daemon::HttpResponse Events(const daemon::HttpRequest& request);

 private:
  Model& model_;
  const Planner& planner_;
  EventHistory history_;
};

}  // namespace geodesic::pathcomp
