// tectl plan history and tectl plan diff A B: the plans pathcomp kept, and
// what changed between two of them (routes, chain placements) and why each
// workload moved (the reasons of the plans in between).
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "site_plan/site_plan_reader.h"
#include "text/table.h"

namespace geodesic::cli {
namespace {

absl::StatusOr<v1::Plan> PlanAt(v1::Operator::StubInterface& stub, uint64_t generation) {
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(60));
  v1::GetPlanRequest request;
  request.set_generation(generation);
  v1::GetPlanResponse response;
  const grpc::Status status = stub.GetPlan(&context, request, &response);
  if (!status.ok()) return FromGrpc(status);
  return std::move(*response.mutable_plan());
}

absl::StatusOr<v1::ListPlansResponse> History(v1::Operator::StubInterface& stub, uint32_t limit) {
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(60));
  v1::ListPlansRequest request;
  request.set_limit(limit);
  v1::ListPlansResponse response;
  const grpc::Status status = stub.ListPlans(&context, request, &response);
  if (!status.ok()) return FromGrpc(status);
  return response;
}

// A route of a site's plan.
struct SiteRoute {
  const v1::SitePlan* site = nullptr;
  const v1::Route* route = nullptr;
};

std::string NextHops(const SiteRoute* at) {
  if (at == nullptr) return "-";
  std::vector<std::string> hops;
  for (const auto& hop : site_plan::NextHops(*at->site, site_plan::PrimaryGroup(*at->site, *at->route))) {
    hops.push_back(absl::StrCat(hop.link_id(), "*", hop.weight()));
  }
  return hops.empty() ? "(none)" : absl::StrJoin(hops, ",");
}

// Everything a route says, in ids: the primary and every backup with its failure.
std::string Resolved(const SiteRoute& at) {
  std::string text = site_plan::Primary(*at.site, *at.route).SerializeAsString();
  for (int b = 0; b < site_plan::BackupCount(*at.route); ++b) {
    text += site_plan::BackupFailure(*at.site, *at.route, b).SerializeAsString();
    text += site_plan::WithBackup(*at.site, *at.route, b).SerializeAsString();
  }
  return text;
}

// site -> prefix -> route
using Routes = std::map<std::pair<std::string, std::string>, SiteRoute>;
Routes RoutesOf(const v1::Plan& plan) {
  Routes routes;
  for (const auto& site : plan.sites()) {
    for (const auto& route : site.routes()) routes[{site.facility_id(), route.prefix()}] = {&site, &route};
  }
  return routes;
}

std::string Replicas(const v1::ChainAssignment& assignment) {
  if (!assignment.placed()) return "(not placed)";
  std::vector<std::string> replicas;
  for (const auto& hop : assignment.hops()) replicas.push_back(hop.replica_facility_id());
  return absl::StrJoin(replicas, ">");
}

}  // namespace

int RunPlan(const Options& options, v1::Operator::StubInterface& stub) {
  if (options.subcommand == "history") {
    auto history = History(stub, options.limit);
    if (!history.ok()) return PrintError(history.status());
    if (options.output != OutputFormat::kTable) {
      PrintStructured(*history, options.output);
      return 0;
    }
    if (history->plans().empty()) {
      std::cerr << "No plan yet.\n";
      return 0;
    }
    text::Table table({"GENERATION", "EPOCH", "TIME", "ROUTES", "MLU", "STRETCH", "FAILURE_SAFE", "MOVED",
                       "OVER_BUDGET", "DEPENDENCIES", "REASON"});
    for (const auto& plan : history->plans()) {
      // The elephants' latency stretch, mean/p95 (plans from before it was kept show none).
      const std::string stretch =
          plan.mean_stretch() > 0
              ? absl::StrCat(absl::StrFormat("%.3f", plan.mean_stretch()), "/", absl::StrFormat("%.3f", plan.p95_stretch()))
              : "-";
      // Protected classes kept failure-safe, of those protected ("1/2"); "-" without any.
      const std::string failure_safe =
          plan.protected_classes() == 0
              ? "-"
              : absl::StrCat(plan.failure_safe_classes(), "/", plan.protected_classes());
      table.Add({absl::StrCat(plan.generation()), absl::StrCat(plan.epoch()), FormatUnixMs(plan.computed_at_unix_ms()),
                 absl::StrCat(plan.routes()), FormatNumber(plan.max_utilization()), stretch, failure_safe,
                 absl::StrCat(plan.moved_workload_ids_size()), absl::StrCat(plan.chains_over_budget()),
                 absl::StrCat(plan.single_facility_dependencies()), plan.reason()});
    }
    std::cout << table.Render();
    return 0;
  }

  // diff A B
  auto a = PlanAt(stub, options.generation_a);
  if (!a.ok()) return PrintError(a.status());
  auto b = PlanAt(stub, options.generation_b);
  if (!b.ok()) return PrintError(b.status());
  auto history = History(stub, 0);
  if (!history.ok()) return PrintError(history.status());

  YAML::Node routes(YAML::NodeType::Sequence);
  text::Table route_table({"SITE", "PREFIX", "FROM", "TO"});
  const Routes before = RoutesOf(*a), after = RoutesOf(*b);
  auto compare = [&](const std::pair<std::string, std::string>& key) {
    auto x = before.find(key);
    auto y = after.find(key);
    const SiteRoute* from = x == before.end() ? nullptr : &x->second;
    const SiteRoute* to = y == after.end() ? nullptr : &y->second;
    if (from != nullptr && to != nullptr && Resolved(*from) == Resolved(*to)) return;
    route_table.Add({key.first, key.second, NextHops(from), NextHops(to)});
    YAML::Node change;
    change["site"] = StringNode(key.first);
    change["prefix"] = StringNode(key.second);
    change["from"] = StringNode(NextHops(from));
    change["to"] = StringNode(NextHops(to));
    routes.push_back(change);
  };
  for (const auto& [key, route] : before) compare(key);
  for (const auto& [key, route] : after) {
    if (!before.count(key)) compare(key);
  }

  // Chains placed differently, and every workload that moved in between, with why.
  YAML::Node chains(YAML::NodeType::Sequence);
  text::Table chain_table({"CHAIN", "FROM", "TO"});
  std::map<std::string, const v1::ChainPlan*> chains_before;
  for (const auto& chain : a->chains()) chains_before[chain.workload_id()] = &chain;
  for (const auto& chain : b->chains()) {
    auto it = chains_before.find(chain.workload_id());
    const std::string from = it == chains_before.end() ? "(absent)" : Replicas(it->second->primary());
    const std::string to = Replicas(chain.primary());
    if (from == to) continue;
    chain_table.Add({chain.workload_id(), from, to});
    YAML::Node change;
    change["chain"] = StringNode(chain.workload_id());
    change["from"] = StringNode(from);
    change["to"] = StringNode(to);
    chains.push_back(change);
  }
  const uint64_t low = std::min(options.generation_a, options.generation_b);
  const uint64_t high = std::max(options.generation_a, options.generation_b);
  YAML::Node moved(YAML::NodeType::Sequence);
  text::Table moved_table({"WORKLOAD", "GENERATION", "WHY"});
  for (auto it = history->plans().rbegin(); it != history->plans().rend(); ++it) {  // oldest first
    if (it->generation() <= low || it->generation() > high) continue;
    for (const std::string& id : it->moved_workload_ids()) {
      moved_table.Add({id, absl::StrCat(it->generation()), it->reason()});
      YAML::Node entry;
      entry["workload_id"] = StringNode(id);
      entry["generation"] = NumberNode(static_cast<double>(it->generation()));
      entry["why"] = StringNode(it->reason());
      moved.push_back(entry);
    }
  }
  if (options.output != OutputFormat::kTable) {
    YAML::Node document;
    document["from_generation"] = NumberNode(static_cast<double>(options.generation_a));
    document["to_generation"] = NumberNode(static_cast<double>(options.generation_b));
    document["routes_changed"] = routes;
    document["chains_moved"] = chains;
    document["workloads_moved"] = moved;
    PrintDocument(document, options.output);
    return 0;
  }
  std::cout << "plan " << options.generation_a << " -> " << options.generation_b << ": " << routes.size()
            << " routes changed, " << chains.size() << " chains placed differently, " << moved.size()
            << " workload moves in between\n";
  if (routes.size() > 0) std::cout << "\n" << route_table.Render();
  if (chains.size() > 0) std::cout << "\n" << chain_table.Render();
  if (moved.size() > 0) std::cout << "\n" << moved_table.Render();
  return 0;
}

namespace {

absl::Status ParsePlan(const CommandArgs& args, Options& options) {
  const std::vector<std::string>& operands = args.operands;
  if (operands.empty() || (operands[0] != "history" && operands[0] != "diff")) {
    return Usage("plan takes history or diff A B");
  }
  options.subcommand = operands[0];
  if (options.subcommand == "history") {
    if (operands.size() != 1) return Usage("plan history takes no operands");
    if (const std::string* limit = args.flag("--limit")) {
      auto n = ParseNumber(*limit, 1, 100);
      if (!n) return Usage(absl::StrCat("--limit must be a whole number from 1 to 100, not ", Quoted(*limit)));
      options.limit = static_cast<uint32_t>(*n);
    } else {
      options.limit = 0;  // every plan kept
    }
    return absl::OkStatus();
  }
  if (args.flag("--limit")) return Usage("--limit is for plan history");
  if (operands.size() != 3) return Usage("plan diff takes two generations: A B");
  auto a = ParseNumber(operands[1], 1, UINT64_MAX);
  auto b = ParseNumber(operands[2], 1, UINT64_MAX);
  if (!a || !b) return Usage("plan diff takes two plan generations (whole numbers from 1)");
  options.generation_a = *a;
  options.generation_b = *b;
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& PlanCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "plan",
      .command = Command::kPlan,
      .flags = {"--limit"},
      .outputs = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "plan history [--limit N] [-o table|json|yaml]    the plans kept (newest 100, within 256 MB)\n"
               "plan diff A B [-o table|json|yaml]    routes and workloads that changed from\n"
               "    generation A to B, and why each workload moved\n",
      .parse = ParsePlan,
      .access = ServerOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
