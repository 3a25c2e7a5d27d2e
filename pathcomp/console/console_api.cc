#include "pathcomp/console/console_api.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "pathcomp/model/model_queries.h"
#include "site_plan/site_plan_reader.h"
#include "text/json_quote.h"

namespace geodesic::pathcomp {
namespace {

using daemon::HttpRequest;
using daemon::HttpResponse;

// A wire message as protobuf's JSON mapping prints it, with the .proto field
// names and every field (zeros and empty lists too, so clients need no
// defaults). 64-bit integers are strings, enums their names.
std::string Json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(message, &out, options).ok()) return "null";
  return out;
}


// As protobuf prints a uint64: a string, so JavaScript loses no digits.
std::string U64(uint64_t value) { return absl::StrCat("\"", value, "\""); }

HttpResponse JsonAnswer(std::string body, int status = 200) {
  return {.status = status, .content_type = "application/json", .body = std::move(body) + "\n"};
}

HttpResponse JsonError(int status, std::string_view message) {
  return JsonAnswer(absl::StrCat("{\"error\":", text::JsonQuote(message), "}"), status);
}

HttpResponse NoPlan() { return JsonError(503, "no plan computed yet"); }

// The value of query parameter `name`, which must name a facility of the model.
absl::StatusOr<std::string> FacilityParameter(const HttpRequest& request, const std::string& name,
                                              const std::set<std::string>& facilities) {
  auto found = request.query.find(name);
  if (found == request.query.end() || found->second.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("missing query parameter ", name, " (a facility id)"));
  }
  if (!facilities.contains(found->second)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown facility \"", found->second, "\" (", name, ")"));
  }
  return found->second;
}

// The route of `site` for `prefix` as its routers get it, or nullopt.
std::optional<v1::ForwardingRoute> RouteTo(const v1::SitePlan& site, const std::string& prefix) {
  const v1::Route* route = site_plan::FindRoute(site, prefix);
  if (route == nullptr) return std::nullopt;
  return site_plan::Primary(site, *route);
}

// How the traffic `src` sends to `prefix` splits over the links, when every
// site forwards it as its own routes say (next-hop weights are relative per
// site): link id -> share of what `src` sends, 0..1. The plan's forwarding
// is loop-free; a site on a loop would keep its share (none is counted past it).
std::map<std::string, double> ForwardingShares(const std::map<std::string, const v1::SitePlan*>& sites,
                                               const std::string& prefix, const std::string& src) {
  struct Hop {
    std::string link_id;
    std::string peer;
    double fraction;  // of what reaches the site
  };
  std::map<std::string, std::vector<Hop>> hops;  // the sites the traffic reaches
  std::map<std::string, int> unvisited_in;       // hops into a site not yet followed
  std::vector<std::string> frontier = {src};
  hops[src];
  while (!frontier.empty()) {
    const std::string facility = frontier.back();
    frontier.pop_back();
    auto site = sites.find(facility);
    const std::optional<v1::ForwardingRoute> route =
        site == sites.end() ? std::nullopt : RouteTo(*site->second, prefix);
    if (!route) continue;  // the destination (or a site without a route)
    double total = 0;
    for (const auto& next_hop : route->next_hops()) total += next_hop.weight();
    for (const auto& next_hop : route->next_hops()) {
      const double fraction = total > 0 ? next_hop.weight() / total : 1.0 / route->next_hops_size();
      hops[facility].push_back({next_hop.link_id(), next_hop.peer_facility_id(), fraction});
      ++unvisited_in[next_hop.peer_facility_id()];
      if (hops.emplace(next_hop.peer_facility_id(), std::vector<Hop>{}).second) {
        frontier.push_back(next_hop.peer_facility_id());
      }
    }
  }
  // Topological order (Kahn): a site passes traffic on once all of it arrived.
  std::map<std::string, double> arrived = {{src, 1.0}};
  std::map<std::string, double> shares;
  std::vector<std::string> ready = {src};
  while (!ready.empty()) {
    const std::string facility = ready.back();
    ready.pop_back();
    for (const Hop& hop : hops[facility]) {
      const double share = arrived[facility] * hop.fraction;
      shares[hop.link_id] += share;
      arrived[hop.peer] += share;
      if (--unvisited_in[hop.peer] == 0) ready.push_back(hop.peer);
    }
  }
  return shares;
}

}  // namespace

ConsoleApi::ConsoleApi(Model& model, const Planner& planner, EventBus& events)
    : model_(model), planner_(planner), history_(events) {}

HttpResponse ConsoleApi::Topology(const HttpRequest&) const {
  const uint64_t revision = model_.Revision();
  std::string body = absl::StrCat("{\"model_revision\":", U64(revision), ",\"facilities\":[");
  bool first = true;
  for (const v1::Facility& facility : model_.Facilities()) {
    absl::StrAppend(&body, first ? "" : ",", Json(facility));
    first = false;
  }
  body += "],\"links\":[";
  first = true;
  const v1::ListLinksResponse links = ListLinks(model_, {});
  for (const v1::Link& link : links.links()) {
    absl::StrAppend(&body, first ? "" : ",", Json(link));
    first = false;
  }
  return JsonAnswer(body + "]}");
}

HttpResponse ConsoleApi::Plan(const HttpRequest&) const {
  const Planner::Convergence convergence = planner_.ConvergenceState();
  std::string body = absl::StrCat("{\"replan_pending\":", convergence.replan_pending ? "true" : "false",
                                  ",\"model_revision\":", U64(convergence.model_revision),
                                  ",\"plan_model_revision\":", U64(convergence.plan_model_revision), ",\"plan\":");
  if (!convergence.plan) return JsonAnswer(body + "null}");
  // Everything but the sites' routes, the chains and the audit (their own
  // endpoints): a large network's plan is megabytes.
  const v1::Plan& plan = *convergence.plan;
  v1::Plan summary;
  summary.set_generation(plan.generation());
  summary.set_epoch(plan.epoch());
  summary.set_replica_id(plan.replica_id());
  summary.set_computed_at_unix_ms(plan.computed_at_unix_ms());
  summary.set_reason(plan.reason());
  *summary.mutable_unreachable() = plan.unreachable();
  *summary.mutable_moved_workload_ids() = plan.moved_workload_ids();
  *summary.mutable_elephants() = plan.elephants();
  summary.set_model_revision(plan.model_revision());
  // Without the emptied lists, which would read as "no chains" rather than
  // "see /api/v1/chains".
  google::protobuf::Struct object;
  if (!google::protobuf::util::JsonStringToMessage(Json(summary), &object).ok()) return JsonAnswer(body + "null}");
  for (const char* field : {"sites", "chains", "single_facility_dependencies"}) object.mutable_fields()->erase(field);
  return JsonAnswer(absl::StrCat(body, Json(object), "}"));
}

HttpResponse ConsoleApi::Route(const HttpRequest& request) const {
  std::set<std::string> facilities;
  for (const v1::Facility& facility : model_.Facilities()) facilities.insert(facility.id());
  auto src = FacilityParameter(request, "src", facilities);
  if (!src.ok()) return JsonError(400, std::string(src.status().message()));
  auto dst = FacilityParameter(request, "dst", facilities);
  if (!dst.ok()) return JsonError(400, std::string(dst.status().message()));
  if (*src == *dst) return JsonError(400, absl::StrCat("src and dst are the same facility (", *src, ")"));
  const std::shared_ptr<const v1::Plan> plan = planner_.CurrentPlan();
  if (!plan) return NoPlan();
  std::map<std::string, const v1::SitePlan*> sites;
  for (const auto& site : plan->sites()) sites[site.facility_id()] = &site;
  std::string body = absl::StrCat("{\"generation\":", U64(plan->generation()), ",\"src\":", text::JsonQuote(*src),
                                  ",\"dst\":", text::JsonQuote(*dst), ",\"routes\":[");
  bool first = true;
  if (auto origin = sites.find(*src); origin != sites.end()) {
    for (const v1::Route& route : origin->second->routes()) {
      if (site_plan::DestinationId(*origin->second, route) != *dst) continue;
      absl::StrAppend(&body, first ? "" : ",", "{\"route\":", Json(site_plan::Primary(*origin->second, route)),
                      ",\"backups\":", site_plan::BackupCount(route), ",\"links\":[");
      first = false;
      bool first_link = true;
      for (const auto& [link_id, share] : ForwardingShares(sites, route.prefix(), *src)) {
        absl::StrAppend(&body, first_link ? "" : ",", "{\"link_id\":", text::JsonQuote(link_id), ",\"share\":",
                        absl::StrFormat("%.6g", share), "}");
        first_link = false;
      }
      body += "]}";
    }
  }
  return JsonAnswer(body + "]}");
}

HttpResponse ConsoleApi::Chains(const HttpRequest&) const {
  const std::shared_ptr<const v1::Plan> plan = planner_.CurrentPlan();
  if (!plan) return NoPlan();
  std::string body = absl::StrCat("{\"generation\":", U64(plan->generation()), ",\"chains\":[");
  bool first = true;
  for (const v1::ChainPlan& chain : plan->chains()) {
    // The hop that costs the most: its network round trip and its service time.
    int slowest = -1;
    uint64_t slowest_us = 0;
    const v1::ChainAssignment& primary = chain.primary();
    for (int i = 0; primary.placed() && i < primary.hops_size(); ++i) {
      const uint64_t hop_us = primary.hops(i).network_rtt_us() + primary.hops(i).service_time_us();
      if (slowest < 0 || hop_us > slowest_us) slowest = i, slowest_us = hop_us;
    }
    absl::StrAppend(&body, first ? "" : ",", "{\"chain\":", Json(chain), ",\"slowest_hop\":", slowest,
                    ",\"slowest_hop_us\":", U64(slowest_us), "}");
    first = false;
  }
  return JsonAnswer(body + "]}");
}

HttpResponse ConsoleApi::Audit(const HttpRequest&) const {
  const std::shared_ptr<const v1::Plan> plan = planner_.CurrentPlan();
  if (!plan) return NoPlan();
  std::string body = absl::StrCat("{\"generation\":", U64(plan->generation()), ",\"single_facility_dependencies\":[");
  bool first = true;
  for (const v1::FacilityDependency& dependency : plan->single_facility_dependencies()) {
    absl::StrAppend(&body, first ? "" : ",", Json(dependency));
    first = false;
  }
  return JsonAnswer(body + "]}");
}

HttpResponse ConsoleApi::Events(const HttpRequest& request) {
  uint64_t after = 0;
  if (auto found = request.query.find("after"); found != request.query.end()) {
    if (!absl::SimpleAtoi(found->second, &after)) {
      return JsonError(400, absl::StrCat("after: \"", found->second, "\" is not an event number"));
    }
  }
  const EventHistory::Page page = history_.After(after);
  std::string body = absl::StrCat("{\"latest_seq\":", U64(page.latest_seq), ",\"missed\":", U64(page.missed),
                                  ",\"events\":[");
  bool first = true;
  for (const EventHistory::Entry& entry : page.events) {
    absl::StrAppend(&body, first ? "" : ",", "{\"seq\":", U64(entry.seq), ",\"event\":", Json(entry.event), "}");
    first = false;
  }
  return JsonAnswer(body + "]}");
}

}  // namespace geodesic::pathcomp
