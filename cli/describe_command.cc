// tectl describe KIND ID: every field of one entity (protobuf JSON naming,
// defaults included) under its kind, and under "derived" what follows from
// the rest of the model where that is cheap to tell.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/entity_text.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "entity/oper_state_name.h"
#include "fabric/fabric_audit.h"
#include "fabric/plane_capacity.h"
#include "fabric/usable_capacity.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic::cli {
namespace {

// Prints {<kind>: entity, derived: derived} and returns 0.
int Print(const Options& options, const google::protobuf::Message& entity, const YAML::Node& derived) {
  YAML::Node document(YAML::NodeType::Map);
  document[std::string(EntityKindName(options.kind))] = MessageNode(entity);
  if (derived.IsMap() && derived.size() > 0) document["derived"] = derived;
  PrintDocument(document, options.output);
  return 0;
}

int NotFound(const Options& options, const ModelSource& source) {
  return PrintError(absl::NotFoundError(absl::StrCat(std::string(EntityKindName(options.kind)), " \"",
                                                     options.id, "\" not found in ", source.where())));
}

template <typename Entity, typename Items, typename Key>
const Entity* Find(const Items& items, const std::string& id, Key key) {
  for (const Entity& item : items) {
    if (key(item) == id) return &item;
  }
  return nullptr;
}

YAML::Node FabricSummary(const v1::Fabric& fabric) {
  const fabric::UsableCapacity usable = fabric::ComputeUsableCapacity(fabric);
  YAML::Node node(YAML::NodeType::Map);
  node["shape"] = StringNode(absl::StrCat(fabric.planes(), " planes x ", fabric.rails(), " rails, ",
                                          fabric.gpus(), " GPUs, ", fabric.layers_size(), " layers"));
  node["capacity"] = StringNode(fabric::FormatBandwidth(usable.total_gbps));
  node["usable"] = StringNode(absl::StrCat(fabric::FormatBandwidth(usable.usable_gbps), " (",
                                           FormatNumber(usable.usable_fraction * 100), "%)"));
  node["backbone_exchange"] = StringNode(fabric::FormatBandwidth(usable.backbone_exchange_gbps));
  node["health_reported"] = BoolNode(usable.health_reported);
  YAML::Node planes(YAML::NodeType::Sequence);
  for (const auto& plane : usable.planes) {
    planes.push_back(StringNode(absl::StrCat("plane ", plane.plane, ": ", plane.reason, ", ",
                                             fabric::FormatBandwidth(plane.usable_gbps), " usable")));
  }
  node["planes"] = planes;
  // The design's weak points: oversubscribed layers, missing ports, backbone uplink.
  YAML::Node audit(YAML::NodeType::Sequence);
  for (const auto& finding : fabric::AuditOversubscription(fabric)) {
    audit.push_back(StringNode(finding.message));
  }
  node["audit"] = audit;
  return node;
}

int DescribeFacility(const Options& options, ModelSource& source) {
  auto facilities = source.ListFacilities();
  if (!facilities.ok()) return PrintError(facilities.status());
  const auto* facility =
      Find<v1::Facility>(facilities->facilities(), options.id, [](const v1::Facility& f) { return f.id(); });
  if (facility == nullptr) return NotFound(options, source);
  v1::ListNodesRequest nodes_request;
  nodes_request.set_facility_id(options.id);
  auto nodes = source.ListNodes(nodes_request);
  if (!nodes.ok()) return PrintError(nodes.status());
  auto links = source.ListLinks({});
  if (!links.ok()) return PrintError(links.status());
  v1::ListFabricsRequest fabrics_request;
  fabrics_request.set_facility_id(options.id);
  auto fabrics = source.ListFabrics(fabrics_request);
  if (!fabrics.ok()) return PrintError(fabrics.status());
  auto services = source.ListServices();
  if (!services.ok()) return PrintError(services.status());

  YAML::Node derived(YAML::NodeType::Map);
  std::vector<std::string> node_ids;
  for (const auto& node : nodes->nodes()) node_ids.push_back(node.id());
  derived["nodes"] = StringsNode(node_ids);
  int out = 0, in = 0, out_usable = 0;
  double out_gbps = 0;
  for (const auto& link : links->links()) {
    if (link.src_facility_id() == options.id) {
      ++out;
      out_gbps += link.capacity_gbps();
      const auto state = link.health().state();
      out_usable += link.admin_state() != v1::ADMIN_STATE_DRAINED &&
                    (state == v1::OPER_STATE_UP || state == v1::OPER_STATE_DEGRADED);
    }
    in += link.dst_facility_id() == options.id;
  }
  derived["links_out"] = NumberNode(out);
  derived["links_out_usable"] = NumberNode(out_usable);
  derived["links_in"] = NumberNode(in);
  derived["backbone_capacity_out"] = StringNode(fabric::FormatBandwidth(out_gbps));
  if (fabrics->fabrics().empty()) {
    derived["fabric"] = StringNode("none");
  } else {
    derived["fabric"] = FabricSummary(fabrics->fabrics(0));
  }
  std::vector<std::string> replicas;
  for (const auto& service : services->services()) {
    for (const auto& replica : service.replica_facility_ids()) {
      if (replica == options.id) replicas.push_back(service.id());
    }
  }
  derived["service_replicas"] = StringsNode(replicas);
  return Print(options, *facility, derived);
}

int DescribeNode(const Options& options, ModelSource& source) {
  auto nodes = source.ListNodes({});
  if (!nodes.ok()) return PrintError(nodes.status());
  const auto* node = Find<v1::Node>(nodes->nodes(), options.id, [](const v1::Node& n) { return n.id(); });
  if (node == nullptr) return NotFound(options, source);
  auto links = source.ListLinks({});
  if (!links.ok()) return PrintError(links.status());
  std::vector<std::string> out, in;
  for (const auto& link : links->links()) {
    if (link.src_node_id() == node->id()) out.push_back(link.id());
    if (link.dst_node_id() == node->id()) in.push_back(link.id());
  }
  YAML::Node derived(YAML::NodeType::Map);
  derived["links_out"] = StringsNode(out);
  derived["links_in"] = StringsNode(in);
  return Print(options, *node, derived);
}

// A link's gray-failure verdict and the evidence it rests on.
YAML::Node AssessmentNode(const v1::LinkAssessment& assessment) {
  YAML::Node node(YAML::NodeType::Map);
  node["verdict"] = StringNode(VerdictText(assessment.verdict()));
  node["confirmed"] = BoolNode(assessment.confirmed());
  if (assessment.since_unix_ms() > 0) node["since"] = StringNode(FormatUnixMs(assessment.since_unix_ms()));
  node["baseline"] = StringNode(
      assessment.baseline_minutes() == 0
          ? "none yet"
          : absl::StrCat(FormatNumber(assessment.baseline_rtt_us() / 1000.0), " ms (MAD ",
                         FormatNumber(assessment.baseline_mad_us() / 1000.0), " ms, ", assessment.baseline_minutes(),
                         " min)"));
  node["state_changes"] = NumberNode(assessment.state_changes());
  YAML::Node evidence(YAML::NodeType::Sequence);
  for (const v1::VerdictEvidence& item : assessment.evidence()) {
    evidence.push_back(StringNode(absl::StrCat(EvidenceSourceText(item.source()), " (", item.observer(), "): ",
                                               VerdictText(item.verdict()), ", ", item.detail())));
  }
  node["evidence"] = evidence;
  return node;
}

std::string LinkStateText(const v1::Link& link) {
  return absl::StrCat(entity::OperStateName(link.health().state()), ", ", AdminStateName(link.admin_state()));
}

int DescribeLink(const Options& options, ModelSource& source) {
  auto links = source.ListLinks({});
  if (!links.ok()) return PrintError(links.status());
  const auto* link = Find<v1::Link>(links->links(), options.id, [](const v1::Link& l) { return l.id(); });
  if (link == nullptr) return NotFound(options, source);
  YAML::Node derived(YAML::NodeType::Map);
  derived["state"] = StringNode(LinkStateText(*link));
  const v1::Link* reverse = nullptr;
  std::set<std::string> srlgs(link->srlgs().begin(), link->srlgs().end());
  std::vector<std::string> shared_risk;
  for (const auto& other : links->links()) {
    if (other.id() == link->id()) continue;
    if (reverse == nullptr && other.src_node_id() == link->dst_node_id() &&
        other.dst_node_id() == link->src_node_id()) {
      reverse = &other;
    }
    for (const auto& srlg : other.srlgs()) {
      if (srlgs.count(srlg)) {
        shared_risk.push_back(other.id());
        break;
      }
    }
  }
  derived["reverse_link"] = StringNode(reverse ? reverse->id() : "none");
  if (reverse) derived["reverse_state"] = StringNode(LinkStateText(*reverse));
  derived["shares_srlg_with"] = StringsNode(shared_risk);
  if (source.live()) {
    v1::ListLinkAssessmentsRequest request;
    request.set_link_id(link->id());
    auto assessments = source.ListLinkAssessments(request);
    if (!assessments.ok()) return PrintError(assessments.status());
    if (!assessments->assessments().empty()) derived["gray_failure"] = AssessmentNode(assessments->assessments(0));
  }
  return Print(options, *link, derived);
}

int DescribeFabric(const Options& options, ModelSource& source) {
  v1::ListFabricsRequest request;
  request.set_facility_id(options.id);
  auto fabrics = source.ListFabrics(request);
  if (!fabrics.ok()) return PrintError(fabrics.status());
  const auto* fabric =
      Find<v1::Fabric>(fabrics->fabrics(), options.id, [](const v1::Fabric& f) { return f.facility_id(); });
  if (fabric == nullptr) return NotFound(options, source);
  return Print(options, *fabric, FabricSummary(*fabric));
}

int DescribeService(const Options& options, ModelSource& source) {
  auto services = source.ListServices();
  if (!services.ok()) return PrintError(services.status());
  const auto* service =
      Find<v1::Service>(services->services(), options.id, [](const v1::Service& s) { return s.id(); });
  if (service == nullptr) return NotFound(options, source);
  auto workloads = source.ListWorkloads();
  if (!workloads.ok()) return PrintError(workloads.status());
  std::vector<std::string> callers;
  for (const auto& workload : workloads->workloads()) {
    if (!workload.has_chain()) continue;
    for (const auto& id : workload.chain().service_ids()) {
      if (id == service->id()) {
        callers.push_back(workload.id());
        break;
      }
    }
  }
  YAML::Node derived(YAML::NodeType::Map);
  derived["replicas"] = NumberNode(service->replica_facility_ids_size());
  derived["single_facility"] = BoolNode(service->replica_facility_ids_size() == 1);
  derived["called_by_chains"] = StringsNode(callers);
  return Print(options, *service, derived);
}

int DescribeWorkload(const Options& options, ModelSource& source) {
  auto workloads = source.ListWorkloads();
  if (!workloads.ok()) return PrintError(workloads.status());
  const auto* workload =
      Find<v1::Workload>(workloads->workloads(), options.id, [](const v1::Workload& w) { return w.id(); });
  if (workload == nullptr) return NotFound(options, source);
  YAML::Node derived(YAML::NodeType::Map);
  derived["kind"] = StringNode(WorkloadKindName(*workload));
  derived["tenant"] = StringNode(workload->tenant().empty() ? "none (the operators' own)" : workload->tenant());
  if (workload->has_elephant()) {
    auto facilities = source.ListFacilities();
    if (!facilities.ok()) return PrintError(facilities.status());
    std::string destination = "none (no facility announces the prefix)";
    for (const auto& facility : facilities->facilities()) {
      for (const auto& prefix : facility.prefixes()) {
        if (prefix == workload->elephant().dst_prefix()) destination = facility.id();
      }
    }
    derived["dst_facility"] = StringNode(destination);
  } else if (workload->has_chain()) {
    auto services = source.ListServices();
    if (!services.ok()) return PrintError(services.status());
    std::map<std::string, const v1::Service*> by_id;
    for (const auto& service : services->services()) by_id[service.id()] = &service;
    uint64_t service_time_us = 0;
    YAML::Node hops(YAML::NodeType::Sequence);
    for (const auto& id : workload->chain().service_ids()) {
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        hops.push_back(StringNode(absl::StrCat(id, ": unknown service")));
        continue;
      }
      service_time_us += it->second->service_time_us();
      hops.push_back(
          StringNode(absl::StrCat(id, ": replicas ", absl::StrJoin(it->second->replica_facility_ids(), ","),
                                  ", ", it->second->service_time_us(), " us")));
    }
    derived["hops"] = hops;
    derived["service_time_us_total"] = NumberNode(static_cast<double>(service_time_us));
    derived["budget_left_for_network_us"] = NumberNode(
        static_cast<double>(workload->chain().latency_budget_us()) - static_cast<double>(service_time_us));
  }
  return Print(options, *workload, derived);
}

int DescribeIntent(const Options& options, ModelSource& source) {
  auto intents = source.ListIntents();
  if (!intents.ok()) return PrintError(intents.status());
  const auto* intent =
      Find<v1::Intent>(intents->intents(), options.id, [](const v1::Intent& i) { return i.id(); });
  if (intent == nullptr) return NotFound(options, source);
  YAML::Node derived(YAML::NodeType::Map);
  derived["action"] = StringNode(IntentAction(*intent));
  derived["target"] = StringNode(IntentTarget(*intent));
  derived["created"] = StringNode(FormatUnixMs(intent->created_at_unix_ms()));
  return Print(options, *intent, derived);
}

int DescribePlan(const Options& options, ModelSource& source) {
  v1::GetPlanRequest request;
  request.set_facility_id(options.facility);
  auto response = source.GetPlan(request);
  if (!response.ok()) return PrintError(response.status());
  const v1::Plan& plan = response->plan();
  YAML::Node derived(YAML::NodeType::Map);
  size_t routes = 0, backups = 0;
  for (const auto& site : plan.sites()) {
    routes += site.routes_size();
    for (const auto& route : site.routes()) backups += site_plan::BackupCount(route);
  }
  derived["computed"] = StringNode(FormatUnixMs(plan.computed_at_unix_ms()));
  derived["sites"] = NumberNode(plan.sites_size());
  derived["routes"] = NumberNode(static_cast<double>(routes));
  derived["backups"] = NumberNode(static_cast<double>(backups));
  derived["unreachable_pairs"] = NumberNode(plan.unreachable_size());
  YAML::Node installs(YAML::NodeType::Sequence);
  for (const auto& site : response->sites()) {
    installs.push_back(
        StringNode(absl::StrCat(site.facility_id(), ": generation ", site.generation(),
                                site.installed() ? " installed" : " not installed",
                                site.error().empty() ? "" : absl::StrCat(" (", site.error(), ")"), " at ",
                                FormatUnixMs(site.at_unix_ms()))));
  }
  derived["installed"] = installs;
  return Print(options, plan, derived);
}

}  // namespace

int RunDescribe(const Options& options, ModelSource& source) {
  switch (options.kind) {
    case EntityKind::kFacility: return DescribeFacility(options, source);
    case EntityKind::kNode: return DescribeNode(options, source);
    case EntityKind::kLink: return DescribeLink(options, source);
    case EntityKind::kFabric: return DescribeFabric(options, source);
    case EntityKind::kService: return DescribeService(options, source);
    case EntityKind::kWorkload: return DescribeWorkload(options, source);
    case EntityKind::kIntent: return DescribeIntent(options, source);
    case EntityKind::kPlan: return DescribePlan(options, source);
  }
  return 1;
}

namespace {

absl::Status ParseDescribe(const CommandArgs& args, Options& options) {
  if (auto status = ParseKindAndId(args.name, args.operands, options); !status.ok()) return status;
  if (options.id.empty() && options.kind != EntityKind::kPlan) {
    return Usage(absl::StrCat("describe needs the id of the ", EntityKindName(options.kind)));
  }
  if (!options.id.empty()) {
    const std::string what(options.kind == EntityKind::kPlan ? "site" : EntityKindName(options.kind));
    if (auto status = CheckId(what, options.id); !status.ok()) return status;
  }
  if (options.kind == EntityKind::kPlan && !options.id.empty()) {
    options.facility = std::exchange(options.id, "");  // a plan's "id" is a site
  }
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& DescribeCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "describe",
      .command = Command::kDescribe,
      .outputs = {OutputFormat::kYaml, OutputFormat::kJson},
      .usage = "describe KIND ID [-o yaml|json]\n    every field of one entity, and what follows from it\n",
      .parse = ParseDescribe,
      .access = ServerOrStore,
  };
  return *spec;
}

}  // namespace geodesic::cli
