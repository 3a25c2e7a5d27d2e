// tectl get KIND [ID]: tables of the model's entities, or their JSON/YAML.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/elephant_text.h"
#include "cli/entity_text.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "cli/straggler_text.h"
#include "entity/oper_state_name.h"
#include "fabric/usable_capacity.h"
#include "site_plan/site_plan_reader.h"
#include "text/table.h"

namespace geodesic::cli {
namespace {

template <typename Entity>
struct Columns {
  std::vector<std::string> header;
  std::function<std::vector<std::string>(const Entity&)> row;
  // Appended with -o wide; none by default.
  std::vector<std::string> wide_header = {};
  std::function<std::vector<std::string>(const Entity&)> wide_row = nullptr;
};

template <typename Entity>
void PrintTable(const Columns<Entity>& columns, const std::vector<const Entity*>& entities, bool wide) {
  std::vector<std::string> header = columns.header;
  if (wide) header.insert(header.end(), columns.wide_header.begin(), columns.wide_header.end());
  text::Table table(std::move(header));
  for (const Entity* entity : entities) {
    std::vector<std::string> row = columns.row(*entity);
    if (wide && columns.wide_row) {
      std::vector<std::string> more = columns.wide_row(*entity);
      row.insert(row.end(), more.begin(), more.end());
    }
    table.Add(std::move(row));
  }
  std::cout << table.Render();
}

bool Structured(OutputFormat format) {
  return format == OutputFormat::kJson || format == OutputFormat::kYaml;
}

// Prints the entities of `response` (the ones `keep` keeps, if given), or the
// one options.id names. `key` is an entity's id.
template <typename Response, typename Entity>
int Show(const Options& options, const ModelSource& source, absl::StatusOr<Response> response,
         google::protobuf::RepeatedPtrField<Entity>* (Response::*items)(),
         const std::function<std::string(const Entity&)>& key, const std::function<bool(const Entity&)>& keep,
         const Columns<Entity>& columns) {
  if (!response.ok()) return PrintError(response.status());
  google::protobuf::RepeatedPtrField<Entity>& list = *((*response).*items)();
  if (keep) {
    google::protobuf::RepeatedPtrField<Entity> kept;
    for (Entity& entity : list) {
      if (keep(entity)) *kept.Add() = std::move(entity);
    }
    list.Swap(&kept);
  }
  const bool wide = options.output == OutputFormat::kWide;
  if (!options.id.empty()) {
    for (const Entity& entity : list) {
      if (key(entity) != options.id) continue;
      if (Structured(options.output)) {
        PrintStructured(entity, options.output);
      } else {
        PrintTable(columns, {&entity}, wide);
      }
      return 0;
    }
    return PrintError(absl::NotFoundError(absl::StrCat(std::string(EntityKindName(options.kind)), " \"",
                                                       options.id, "\" not found in ", source.where())));
  }
  if (Structured(options.output)) {
    PrintStructured(*response, options.output);
    return 0;
  }
  if (list.empty()) {
    std::fprintf(stderr, "No %s found%s.\n", std::string(EntityKindPlural(options.kind)).c_str(),
                 options.facility.empty() ? "" : absl::StrCat(" for facility ", options.facility).c_str());
    return 0;
  }
  std::vector<const Entity*> entities;
  for (const Entity& entity : list) entities.push_back(&entity);
  PrintTable(columns, entities, wide);
  return 0;
}

std::string OrDash(const std::string& text) { return text.empty() ? "-" : text; }

int GetFacilities(const Options& options, ModelSource& source) {
  Columns<v1::Facility> columns{.header = {"ID", "NAME", "REGION", "LAT", "LON", "PREFIXES"},
                                .row = [](const v1::Facility& f) -> std::vector<std::string> {
                                  return {f.id(),
                                          OrDash(f.display_name()),
                                          OrDash(f.region()),
                                          FormatNumber(f.position().latitude_deg()),
                                          FormatNumber(f.position().longitude_deg()),
                                          OrDash(absl::StrJoin(f.prefixes(), ","))};
                                }};
  std::function<bool(const v1::Facility&)> keep;
  if (!options.facility.empty()) keep = [&](const v1::Facility& f) { return f.id() == options.facility; };
  return Show<v1::ListFacilitiesResponse, v1::Facility>(
      options, source, source.ListFacilities(), &v1::ListFacilitiesResponse::mutable_facilities,
      [](const v1::Facility& f) { return f.id(); }, keep, columns);
}

std::string NodeRoleName(v1::NodeRole role) {
  switch (role) {
    case v1::NODE_ROLE_BACKBONE_ROUTER: return "backbone";
    case v1::NODE_ROLE_FABRIC_SWITCH: return "fabric";
    default: return "-";
  }
}

int GetNodes(const Options& options, ModelSource& source) {
  Columns<v1::Node> columns{.header = {"ID", "FACILITY", "ROLE"},
                            .row = [](const v1::Node& n) -> std::vector<std::string> {
                              return {n.id(), n.facility_id(), NodeRoleName(n.role())};
                            }};
  v1::ListNodesRequest request;
  request.set_facility_id(options.facility);
  return Show<v1::ListNodesResponse, v1::Node>(
      options, source, source.ListNodes(request), &v1::ListNodesResponse::mutable_nodes,
      [](const v1::Node& n) { return n.id(); }, {}, columns);
}

int GetLinks(const Options& options, ModelSource& source) {
  Columns<v1::Link> columns{
      .header = {"ID", "FROM", "TO", "GBPS", "LATENCY_US", "STATE", "RTT_US", "ADMIN", "SRLGS"},
      .row = [](const v1::Link& l) -> std::vector<std::string> {
        return {l.id(),
                l.src_facility_id(),
                l.dst_facility_id(),
                FormatNumber(l.capacity_gbps()),
                absl::StrCat(l.latency_us()),
                entity::OperStateName(l.health().state()),
                l.health().rtt_us() == 0 ? "-" : absl::StrCat(l.health().rtt_us()),
                AdminStateName(l.admin_state()),
                OrDash(absl::StrJoin(l.srlgs(), ","))};
      },
      .wide_header = {"SRC_NODE", "DST_NODE", "METRIC", "LOSS", "UTIL", "JITTER_US", "MEASURED"},
      .wide_row = [](const v1::Link& l) -> std::vector<std::string> {
        return {l.src_node_id(),
                l.dst_node_id(),
                absl::StrCat(l.igp_metric()),
                FormatNumber(l.health().loss_ratio()),
                FormatNumber(l.health().utilization_ratio()),
                absl::StrCat(l.health().jitter_us()),
                FormatUnixMs(l.health().measured_at_unix_ms())};
      }};
  v1::ListLinksRequest request;
  request.set_facility_id(options.facility);
  auto links = source.ListLinks(request);
  if (links.ok() && !options.state.empty()) {  // --state: measured state, or "drained"
    auto* list = links->mutable_links();
    list->erase(std::remove_if(list->begin(), list->end(),
                               [&](const v1::Link& l) {
                                 return options.state == "drained"
                                            ? l.admin_state() != v1::ADMIN_STATE_DRAINED
                                            : std::string(entity::OperStateName(l.health().state())) != options.state;
                               }),
                list->end());
  }
  return Show<v1::ListLinksResponse, v1::Link>(
      options, source, std::move(links), &v1::ListLinksResponse::mutable_links,
      [](const v1::Link& l) { return l.id(); }, {}, columns);
}

int GetFabrics(const Options& options, ModelSource& source) {
  Columns<v1::Fabric> columns{
      .header = {"FACILITY", "PLANES", "RAILS", "GPUS", "NIC_GBPS", "LAYERS", "UPLINK_GBPS"},
      .row = [](const v1::Fabric& f) -> std::vector<std::string> {
        std::vector<std::string> layers;
        for (const auto& layer : f.layers()) layers.push_back(layer.name());
        return {f.facility_id(),
                absl::StrCat(f.planes()),
                absl::StrCat(f.rails()),
                absl::StrCat(f.gpus()),
                FormatNumber(f.nic_speed_gbps()),
                OrDash(absl::StrJoin(layers, ",")),
                FormatNumber(f.backbone_uplink_gbps())};
      },
      .wide_header = {"PLANES_USABLE", "USABLE_GBPS", "CAPACITY_GBPS"},
      .wide_row = [](const v1::Fabric& f) -> std::vector<std::string> {
        const fabric::UsableCapacity usable = fabric::ComputeUsableCapacity(f);
        int planes_usable = 0;
        for (const auto& plane : usable.planes) planes_usable += plane.usable_gbps > 0;
        return {absl::StrCat(planes_usable, "/", f.planes(), usable.health_reported ? "" : " (no report)"),
                FormatNumber(usable.usable_gbps), FormatNumber(usable.total_gbps)};
      }};
  v1::ListFabricsRequest request;
  request.set_facility_id(options.facility);
  return Show<v1::ListFabricsResponse, v1::Fabric>(
      options, source, source.ListFabrics(request), &v1::ListFabricsResponse::mutable_fabrics,
      [](const v1::Fabric& f) { return f.facility_id(); }, {}, columns);
}

int GetServices(const Options& options, ModelSource& source) {
  Columns<v1::Service> columns{.header = {"ID", "REPLICAS", "SERVICE_TIME_US"},
                               .row = [](const v1::Service& s) -> std::vector<std::string> {
                                 return {s.id(), OrDash(absl::StrJoin(s.replica_facility_ids(), ",")),
                                         absl::StrCat(s.service_time_us())};
                               }};
  std::function<bool(const v1::Service&)> keep;
  if (!options.facility.empty()) {
    keep = [&](const v1::Service& s) {
      for (const auto& replica : s.replica_facility_ids()) {
        if (replica == options.facility) return true;
      }
      return false;
    };
  }
  return Show<v1::ListServicesResponse, v1::Service>(
      options, source, source.ListServices(), &v1::ListServicesResponse::mutable_services,
      [](const v1::Service& s) { return s.id(); }, keep, columns);
}

int GetWorkloads(const Options& options, ModelSource& source) {
  Columns<v1::Workload> columns{
      .header = {"ID", "KIND", "SRC/ORIGIN", "DST/SERVICES", "GBPS/BUDGET", "PRIORITY", "TENANT"},
      .row = [](const v1::Workload& w) -> std::vector<std::string> {
        if (w.has_elephant()) {
          const auto& e = w.elephant();
          return {w.id(),
                  "elephant",
                  e.src_facility_id(),
                  e.dst_prefix(),
                  FormatNumber(e.demand_gbps()),
                  absl::StrCat(e.priority()),
                  OrDash(w.tenant())};
        }
        if (w.has_chain()) {
          const auto& c = w.chain();
          return {w.id(),
                  "chain",
                  c.origin_facility_id(),
                  OrDash(absl::StrJoin(c.service_ids(), ">")),
                  absl::StrCat(c.latency_budget_us(), "us"),
                  "-",
                  OrDash(w.tenant())};
        }
        return {w.id(), "?", "-", "-", "-", "-", OrDash(w.tenant())};
      }};
  std::function<bool(const v1::Workload&)> keep;
  if (!options.facility.empty()) {
    keep = [&](const v1::Workload& w) {
      return (w.has_elephant() && w.elephant().src_facility_id() == options.facility) ||
             (w.has_chain() && w.chain().origin_facility_id() == options.facility);
    };
  }
  return Show<v1::ListWorkloadsResponse, v1::Workload>(
      options, source, source.ListWorkloads(), &v1::ListWorkloadsResponse::mutable_workloads,
      [](const v1::Workload& w) { return w.id(); }, keep, columns);
}

int GetIntents(const Options& options, ModelSource& source) {
  Columns<v1::Intent> columns{
      .header = {"ID", "ACTION", "TARGET", "BY", "REASON"},
      .row = [](const v1::Intent& i) -> std::vector<std::string> {
        return {i.id(), IntentAction(i), IntentTarget(i), OrDash(i.created_by()), OrDash(i.reason())};
      },
      .wide_header = {"CREATED"},
      .wide_row = [](const v1::Intent& i) -> std::vector<std::string> {
        return {FormatUnixMs(i.created_at_unix_ms())};
      }};
  return Show<v1::ListIntentsResponse, v1::Intent>(
      options, source, source.ListIntents(), &v1::ListIntentsResponse::mutable_intents,
      [](const v1::Intent& i) { return i.id(); }, {}, columns);
}

int GetPlan(const Options& options, ModelSource& source) {
  v1::GetPlanRequest request;
  request.set_facility_id(options.facility);
  auto response = source.GetPlan(request);
  if (!response.ok()) return PrintError(response.status());
  if (Structured(options.output)) {
    PrintStructured(*response, options.output);
    return 0;
  }
  const bool wide = options.output == OutputFormat::kWide;
  const v1::Plan& plan = response->plan();
  std::cout << "generation " << plan.generation() << "  epoch " << plan.epoch() << "  computed "
            << FormatUnixMs(plan.computed_at_unix_ms()) << "  by " << OrDash(plan.replica_id())
            << "\nreason: " << plan.reason() << "\n";
  if (source.live()) {
    std::cout << "re-plan pending: " << (response->replan_pending() ? "yes" : "no") << "  model revision "
              << response->model_revision() << "  plan from revision " << response->plan_model_revision() << "\n";
  }
  constexpr int kListedPairs = 6;
  if (wide || (plan.unreachable_size() > 0 && plan.unreachable_size() <= kListedPairs)) {
    std::cout << "unreachable: " << OrDash(absl::StrJoin(plan.unreachable(), ", ")) << "\n";
  } else if (plan.unreachable_size() > kListedPairs) {
    std::vector<std::string> first(plan.unreachable().begin(), plan.unreachable().begin() + kListedPairs);
    std::cout << "unreachable: " << plan.unreachable_size() << " pairs: " << absl::StrJoin(first, ", ")
              << ", ... (-o wide lists all)\n";
  }
  if (const std::string elephants = ElephantAllocationText(plan.elephants()); !elephants.empty()) {
    std::cout << "\n" << elephants;
  }
  std::vector<std::string> header = {"SITE", "PREFIX", "TO", "VIA", "PATH", "LATENCY_US", "BACKUPS"};
  text::Table routes(header);
  size_t routes_count = 0;
  for (const auto& site : plan.sites()) {
    for (const auto& compact : site.routes()) {
      ++routes_count;
      const v1::ForwardingRoute route = site_plan::Primary(site, compact);
      std::vector<std::string> via;
      for (const auto& hop : route.next_hops()) {
        via.push_back(wide ? absl::StrCat(hop.link_id(), "(w", hop.weight(), ")") : hop.link_id());
      }
      routes.Add({site.facility_id(), route.prefix(), route.destination_facility_id(),
                  OrDash(absl::StrJoin(via, ",")), OrDash(absl::StrJoin(route.path_facility_ids(), ">")),
                  absl::StrCat(route.path_latency_us()), absl::StrCat(site_plan::BackupCount(compact))});
    }
  }
  std::cout << "\n" << (routes_count == 0 ? "no routes\n" : routes.Render());
  if (response->sites().empty()) {
    std::cout << "\nno site has reported installing a plan to " << source.where() << "\n";
    return 0;
  }
  text::Table sites({"SITE", "INSTALLED_GENERATION", "EPOCH", "OK", "AT_ROUTERS", "AT", "ERROR"});
  for (const auto& s : response->sites()) {
    sites.Add({s.facility_id(), absl::StrCat(s.generation()), absl::StrCat(s.epoch()),
               s.installed() ? "yes" : "no", s.sent_to_routers() ? "yes" : "no", FormatUnixMs(s.at_unix_ms()),
               OrDash(s.error())});
  }
  std::cout << "\n" << sites.Render();
  return 0;
}

}  // namespace

int RunGet(const Options& options, ModelSource& source) {
  switch (options.kind) {
    case EntityKind::kFacility: return GetFacilities(options, source);
    case EntityKind::kNode: return GetNodes(options, source);
    case EntityKind::kLink: return GetLinks(options, source);
    case EntityKind::kFabric: return GetFabrics(options, source);
    case EntityKind::kService: return GetServices(options, source);
    case EntityKind::kWorkload: return GetWorkloads(options, source);
    case EntityKind::kIntent: return GetIntents(options, source);
    case EntityKind::kPlan: return GetPlan(options, source);
  }
  return 1;
}

int RunGetStragglers(const Options& options, v1::Operator::StubInterface& stub) {
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(60));
  v1::ListStragglersRequest request;
  request.set_limit(options.limit);
  v1::ListStragglersResponse response;
  if (const grpc::Status status = stub.ListStragglers(&context, request, &response); !status.ok()) {
    return PrintError(FromGrpc(status));
  }
  if (Structured(options.output)) {
    PrintStructured(response, options.output);
    return 0;
  }
  if (response.stragglers().empty()) {
    std::cout << "no hop of any chain is over its plan (plan generation " << response.plan_generation() << ")\n";
    return 0;
  }
  text::Table table({"WORKLOAD", "HOP", "SERVICE", "REPLICA", "COMPONENT", "OVER_PLAN_MS", "OVER_PLAN", "MEASURED_BY",
                     "CHAIN_STRAGGLER"});
  for (const v1::Straggler& straggler : response.stragglers()) {
    const bool network = straggler.component() == v1::LATENCY_COMPONENT_NETWORK;
    table.Add({straggler.workload_id(), absl::StrCat(straggler.hop() + 1), straggler.service_id(),
               straggler.replica_facility_id(), network ? "network" : "service",
               absl::StrFormat("%+.3f", straggler.deviation_us() / 1000.0),
               straggler.deviation_ratio() == 0 ? "-" : absl::StrFormat("%+.0f%%", 100 * straggler.deviation_ratio()),
               network ? NetworkSourceText(straggler.network_source()) : "service report",
               straggler.chain_straggler() ? "yes" : "no"});
  }
  std::cout << table.Render() << "worst first; plan generation " << response.plan_generation() << "\n";
  return 0;
}

namespace {

bool IsStragglers(const std::string& word) { return word == "stragglers" || word == "straggler"; }

absl::Status ParseGetStragglers(const CommandArgs& args, Options& options) {
  if (args.operands.size() != 1) return Usage("get stragglers takes no id");
  if (args.flag("--facility") != nullptr || args.flag("--state") != nullptr) {
    return Usage("--facility and --state do not apply to stragglers");
  }
  options.subcommand = "stragglers";
  options.limit = 0;  // the server's default
  if (const std::string* limit = args.flag("--limit")) {
    auto n = ParseNumber(*limit, 1, 1000);
    if (!n) return Usage(absl::StrCat("--limit must be a whole number from 1 to 1000, not ", Quoted(*limit)));
    options.limit = static_cast<uint32_t>(*n);
  }
  return absl::OkStatus();
}

absl::Status ParseGet(const CommandArgs& args, Options& options) {
  if (!args.operands.empty() && IsStragglers(args.operands[0])) return ParseGetStragglers(args, options);
  if (args.flag("--limit") != nullptr) return Usage("--limit is for get stragglers");
  if (auto status = ParseKindAndId(args.name, args.operands, options); !status.ok()) return status;
  if (!options.id.empty()) {
    const std::string what(options.kind == EntityKind::kPlan ? "site" : EntityKindName(options.kind));
    if (auto status = CheckId(what, options.id); !status.ok()) return status;
  }
  if (const std::string* facility = args.flag("--facility")) {
    if (auto status = CheckId("facility", *facility); !status.ok()) return status;
    if (options.kind == EntityKind::kIntent) return Usage("--facility does not apply to intents");
    if (!options.id.empty()) {
      return Usage(absl::StrCat("give ", options.kind == EntityKind::kPlan ? "the site" : "an id",
                                " or --facility, not both"));
    }
    options.facility = *facility;
  }
  if (options.kind == EntityKind::kPlan && !options.id.empty()) {
    options.facility = std::exchange(options.id, "");  // a plan's "id" is a site
  }
  if (const std::string* state = args.flag("--state")) {
    if (options.kind != EntityKind::kLink) return Usage("--state is for get links");
    static const std::set<std::string> kStates = {"up", "degraded", "down", "unknown", "drained"};
    if (!kStates.count(*state)) {
      return Usage(absl::StrCat("--state must be up, degraded, down, unknown or drained, not ", Quoted(*state)));
    }
    options.state = *state;
  }
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& GetCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "get",
      .command = Command::kGet,
      .flags = {"--facility", "--state", "--limit"},
      .outputs = {OutputFormat::kTable, OutputFormat::kWide, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "get KIND [ID] [--facility F] [--state S] [-o table|wide|json|yaml]\n"
               "    KIND: facilities nodes links fabrics services workloads intents plan (singular\n"
               "    or plural; a fabric's ID is its facility, plan's is a site). --state (links):\n"
               "    up, degraded, down, unknown or drained\n"
               "get stragglers [--limit N] [-o table|json|yaml]  (wide: as table)\n"
               "    the chain hops furthest over their plan (measured network or service latency),\n"
               "    worst first (default 20, at most 1000); needs a running pathcomp\n",
      .parse = ParseGet,
      .access = [](const Options& parsed) {
        return parsed.subcommand == "stragglers" ? ModelAccess::kServer : ModelAccess::kServerOrStore;
      },
  };
  return *spec;
}

}  // namespace geodesic::cli
