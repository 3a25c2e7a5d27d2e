// tectl audit and tectl explain chain: what the current plan says about
// single-facility dependencies and about one agent chain, planned vs measured.
#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/straggler_text.h"
#include "cli/option_values.h"
#include "site_plan/chain_paths.h"
#include "text/table.h"

namespace geodesic::cli {
namespace {

absl::StatusOr<v1::Plan> CurrentPlan(v1::Operator::StubInterface& stub) {
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(60));
  v1::GetPlanResponse response;
  const grpc::Status status = stub.GetPlan(&context, v1::GetPlanRequest(), &response);
  if (!status.ok()) return FromGrpc(status);
  return std::move(*response.mutable_plan());
}

std::string Ms(uint64_t us) { return absl::StrFormat("%.3f", us / 1000.0); }

// Path `path` of `chain`'s table, as text.
std::string Path(const v1::ChainPlan& chain, uint32_t path) {
  const std::vector<std::string> facilities = site_plan::ChainPathIds(chain, path);
  return facilities.empty() ? "(local)" : absl::StrJoin(facilities, ">");
}

std::string Scope(const v1::FailureScope& scope) {
  switch (scope.kind()) {
    case v1::FAILURE_KIND_LINK: return absl::StrCat("link ", scope.id());
    case v1::FAILURE_KIND_SRLG: return absl::StrCat("srlg ", scope.id());
    case v1::FAILURE_KIND_FACILITY: return absl::StrCat("facility ", scope.id());
    default: return scope.id();
  }
}

// A backup's assignment lists only the calls that differ from the primary:
// the whole assignment, the primary's hops with those in their place.
v1::ChainAssignment WholeBackup(const v1::ChainAssignment& primary, const v1::ChainAssignment& backup) {
  v1::ChainAssignment whole = backup;
  if (!backup.placed()) return whole;
  *whole.mutable_hops() = primary.hops();
  for (const auto& hop : backup.hops()) {
    if (static_cast<int>(hop.call()) < whole.hops_size()) *whole.mutable_hops(static_cast<int>(hop.call())) = hop;
  }
  return whole;
}

std::string Assignment(const v1::ChainAssignment& assignment) {
  if (!assignment.placed()) return absl::StrCat("cannot be placed: ", assignment.reason());
  std::vector<std::string> replicas;
  for (const auto& hop : assignment.hops()) replicas.push_back(absl::StrCat(hop.service_id(), "@", hop.replica_facility_id()));
  return absl::StrCat(absl::StrJoin(replicas, " -> "), " (", Ms(assignment.total_latency_us()), " ms",
                      assignment.within_budget() ? "" : ", over budget", ")");
}

}  // namespace

int RunAudit(const Options& options, v1::Operator::StubInterface& stub) {
  auto plan = CurrentPlan(stub);
  if (!plan.ok()) return PrintError(plan.status());
  const int found = plan->single_facility_dependencies_size();
  if (options.output != OutputFormat::kTable) {
    YAML::Node document;
    document["plan_generation"] = NumberNode(static_cast<double>(plan->generation()));
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& dependency : plan->single_facility_dependencies()) list.push_back(MessageNode(dependency));
    document["single_facility_dependencies"] = list;
    PrintDocument(document, options.output);
  } else if (found == 0) {
    std::cout << "no workload depends on a single facility (plan generation " << plan->generation() << ")\n";
  } else {
    text::Table table({"WORKLOAD", "FACILITY", "REASON"});
    for (const auto& dependency : plan->single_facility_dependencies()) {
      table.Add({dependency.workload_id(), dependency.facility_id(), dependency.reason()});
    }
    std::cout << table.Render() << found << " single-facility dependenc" << (found == 1 ? "y" : "ies")
              << " (plan generation " << plan->generation() << ")\n";
  }
  return found == 0 ? 0 : kExitDependencies;
}

namespace {

// The chain planned vs measured (ExplainChain); from a pathcomp without that
// call (UNIMPLEMENTED), the plan's part alone (GetPlan).
absl::StatusOr<v1::ExplainChainResponse> FetchChain(v1::Operator::StubInterface& stub, const std::string& id) {
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(60));
  v1::ExplainChainRequest request;
  request.set_workload_id(id);
  v1::ExplainChainResponse response;
  const grpc::Status status = stub.ExplainChain(&context, request, &response);
  if (status.ok()) return response;
  if (status.error_code() != grpc::StatusCode::UNIMPLEMENTED) return FromGrpc(status);
  auto plan = CurrentPlan(stub);
  if (!plan.ok()) return plan.status();
  for (const auto& chain : plan->chains()) {
    if (chain.workload_id() != id) continue;
    *response.mutable_plan() = chain;
    response.mutable_chain()->set_plan_generation(plan->generation());
    return response;
  }
  return absl::NotFoundError(absl::StrCat("no agent chain ", id, " in plan generation ", plan->generation(),
                                          " (tectl get workloads lists them)"));
}

// FetchChain's answer, its chain's path table checked (the hops' paths are
// read through it).
absl::StatusOr<v1::ExplainChainResponse> ExplainChain(v1::Operator::StubInterface& stub, const std::string& id) {
  auto response = FetchChain(stub, id);
  if (!response.ok()) return response;
  if (auto valid = site_plan::ValidateChainPaths(response->plan()); !valid.ok()) {
    return absl::DataLossError(absl::StrCat("pathcomp's answer is malformed: ", valid.message()));
  }
  return response;
}

// A measured value in ms, or "-" when not measured.
std::string MeasuredMs(bool measured, uint64_t us) { return measured ? Ms(us) : "-"; }

}  // namespace

int RunExplain(const Options& options, v1::Operator::StubInterface& stub) {
  auto explained = ExplainChain(stub, options.id);
  if (!explained.ok()) {
    if (explained.status().code() == absl::StatusCode::kNotFound) {
      return PrintError(absl::NotFoundError(absl::StrCat(explained.status().message(), " (tectl get workloads lists them)")));
    }
    return PrintError(explained.status());
  }
  if (options.output != OutputFormat::kTable) {
    PrintStructured(*explained, options.output);
    return 0;
  }
  const v1::ChainPlan& chain = explained->plan();
  const v1::ChainExplanation& measured = explained->chain();
  const v1::ChainAssignment& primary = chain.primary();
  std::cout << "chain " << chain.workload_id() << ", plan generation " << measured.plan_generation() << ": "
            << (primary.placed() ? absl::StrCat(Ms(primary.total_latency_us()), " ms of a ",
                                                Ms(chain.latency_budget_us()), " ms budget",
                                                primary.within_budget() ? "" : " (OVER BUDGET)")
                                 : absl::StrCat("cannot be placed: ", primary.reason()))
            << "\n";
  if (primary.placed()) {
    text::Table table({"HOP", "SERVICE", "REPLICA", "PATH_THERE", "PATH_BACK", "NETWORK_MS", "MEASURED_NET_MS",
                       "SERVICE_MS", "MEASURED_SVC_MS", "HOP_MS", "SHARE"});
    int slowest = -1;
    uint64_t slowest_us = 0;
    for (int i = 0; i < primary.hops_size(); ++i) {
      const auto& hop = primary.hops(i);
      const v1::HopLatency* latency = i < measured.hops_size() ? &measured.hops(i) : nullptr;
      const uint64_t hop_us = hop.network_rtt_us() + hop.service_time_us();
      if (slowest < 0 || hop_us > slowest_us) slowest = i, slowest_us = hop_us;
      const double share = primary.total_latency_us() == 0 ? 0 : 100.0 * hop_us / primary.total_latency_us();
      const bool net_measured = latency != nullptr && latency->network_source() != v1::NETWORK_SOURCE_NONE;
      const bool svc_measured = latency != nullptr && latency->service_measured();
      table.Add({absl::StrCat(i + 1), hop.service_id(), hop.replica_facility_id(), Path(chain, hop.path_there()),
                 Path(chain, hop.path_back()), Ms(hop.network_rtt_us()),
                 MeasuredMs(net_measured, net_measured ? latency->measured_network_rtt_us() : 0),
                 Ms(hop.service_time_us()),
                 MeasuredMs(svc_measured, svc_measured ? latency->measured_service_latency_us() : 0), Ms(hop_us),
                 absl::StrFormat("%.1f%%", share)});
    }
    std::cout << table.Render();
    if (slowest >= 0) {
      std::cout << "slowest hop: " << slowest + 1 << " (" << primary.hops(slowest).service_id() << " at "
                << primary.hops(slowest).replica_facility_id() << ", " << Ms(slowest_us) << " ms)\n";
    }
    if (!measured.hops().empty()) {
      std::cout << "measured: " << Ms(measured.measured_total_us()) << " ms"
                << (measured.fully_measured() ? "" : " (planned where not measured)")
                << (measured.measured_within_budget() ? "" : ", OVER BUDGET") << "\n";
      std::cout << "straggler: "
                << (measured.has_straggler() ? StragglerText(measured.straggler()) : "none (every hop within its plan)")
                << "\n";
    }
  }
  if (!chain.backups().empty()) {
    text::Table backups({"IF THIS FAILS", "BACKUP"});
    for (const auto& backup : chain.backups()) {
      std::vector<std::string> scopes;
      for (const auto& scope : backup.protects()) scopes.push_back(Scope(scope));
      backups.Add({absl::StrJoin(scopes, ", "), Assignment(WholeBackup(primary, backup.assignment()))});
    }
    std::cout << "\n" << backups.Render();
  }
  return 0;
}

namespace {

absl::Status ParseAudit(const CommandArgs& args, Options&) {
  if (!args.operands.empty()) return Usage("audit takes no operands");
  return absl::OkStatus();
}

absl::Status ParseExplain(const CommandArgs& args, Options& options) {
  if (args.operands.size() != 2 || args.operands[0] != "chain") return Usage("explain takes: chain ID");
  options.id = args.operands[1];
  return CheckId("workload", options.id);
}

}  // namespace

const CommandSpec& AuditCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "audit",
      .command = Command::kAudit,
      .outputs = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "audit [-o table|json|yaml]\n"
               "    every single-facility dependency with its reason; exits 3 when there is any\n",
      .parse = ParseAudit,
      .access = ServerOnly,
  };
  return *spec;
}

const CommandSpec& ExplainCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "explain",
      .command = Command::kExplain,
      .outputs = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "explain chain ID [-o table|json|yaml]\n"
               "    each hop's replica, path, planned and measured latency and share of the total;\n"
               "    the slowest hop; the straggler (the hop furthest over its plan); the backup for\n"
               "    each facility the chain touches\n",
      .parse = ParseExplain,
      .access = ServerOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
