// tectl workload add|remove (list is `get workloads`), and the intents that
// steer one workload or link: pin / unpin, override.
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "daemon/clock.h"
#include "topology/project_reader.h"

namespace geodesic::cli {
namespace {

// The workloads of `options.file`, checked against the server's facilities,
// services and workloads (none may exist yet), so a bad file sends nothing.
absl::StatusOr<std::vector<v1::Workload>> ReadWorkloadFile(const Options& options,
                                                           v1::Operator::StubInterface& stub) {
  std::ifstream in(options.file);
  if (!in) return absl::NotFoundError(absl::StrCat(options.file, ": cannot open the file"));
  std::stringstream text;
  text << in.rdbuf();
  topology::Topology known;
  v1::ListWorkloadsResponse existing;
  {
    grpc::ClientContext context;
    SetTimeout(context, std::chrono::seconds(60));
    v1::ListFacilitiesResponse facilities;
    if (auto status = stub.ListFacilities(&context, {}, &facilities); !status.ok()) return FromGrpc(status);
    known.facilities.assign(facilities.facilities().begin(), facilities.facilities().end());
  }
  {
    grpc::ClientContext context;
    SetTimeout(context, std::chrono::seconds(60));
    v1::ListServicesResponse services;
    if (auto status = stub.ListServices(&context, {}, &services); !status.ok()) return FromGrpc(status);
    known.services.assign(services.services().begin(), services.services().end());
  }
  {
    grpc::ClientContext context;
    SetTimeout(context, std::chrono::seconds(60));
    if (auto status = stub.ListWorkloads(&context, {}, &existing); !status.ok()) return FromGrpc(status);
  }
  auto workloads = topology::ParseWorkloads(text.str(), options.file, known);
  if (!workloads.ok()) return workloads.status();
  std::set<std::string> ids;
  for (const auto& workload : existing.workloads()) ids.insert(workload.id());
  for (const auto& workload : *workloads) {
    if (ids.count(workload.id())) {
      return absl::AlreadyExistsError(
          absl::StrCat(options.file, ": workload ", workload.id(), " already exists (remove it first)"));
    }
  }
  return workloads;
}

int SendIntent(const Options& options, v1::Operator::StubInterface& stub, const v1::Intent& intent,
               const std::string& done) {
  v1::AddIntentResponse response;
  const grpc::Status status = CallLeader(options.server, options.tls, stub, [&](auto& to) {
    grpc::ClientContext context;
    SetTimeout(context, std::chrono::seconds(60));
    v1::AddIntentRequest request;
    *request.mutable_intent() = intent;
    return to.AddIntent(&context, request, &response);
  });
  if (!status.ok()) return PrintError(FromGrpc(status));
  std::cout << done << " (intent " << intent.id() << "), plan generation " << response.plan_generation() << "\n";
  return 0;
}

int RemoveIntent(const Options& options, v1::Operator::StubInterface& stub, const std::string& id,
                 const std::string& done) {
  auto generation = RemoveIntentAt(options.server, options.tls, stub, id);
  if (!generation.ok()) return PrintError(generation.status());
  std::cout << done << " (intent " << id << "), plan generation " << *generation << "\n";
  return 0;
}

}  // namespace

int RunWorkload(const Options& options, v1::Operator::StubInterface& stub) {
  if (options.subcommand == "remove") {
    const grpc::Status status = CallLeader(options.server, options.tls, stub, [&](auto& to) {
      grpc::ClientContext context;
      SetTimeout(context, std::chrono::seconds(60));
      v1::DeleteWorkloadRequest request;
      request.set_id(options.id);
      v1::DeleteWorkloadResponse response;
      return to.DeleteWorkload(&context, request, &response);
    });
    if (!status.ok()) return PrintError(FromGrpc(status));
    std::cout << "removed workload " << options.id << "\n";
    return 0;
  }
  std::vector<v1::Workload> workloads;
  if (!options.file.empty()) {
    auto read = ReadWorkloadFile(options, stub);
    if (!read.ok()) return PrintError(read.status());
    workloads = *std::move(read);
  } else {
    v1::Workload& workload = workloads.emplace_back();
    workload.set_id(options.id);
    if (!options.src.empty()) {
      v1::ElephantFlow& flow = *workload.mutable_elephant();
      flow.set_src_facility_id(options.src);
      flow.set_dst_prefix(options.dst_prefix);
      flow.set_demand_gbps(options.gbps);
      flow.set_priority(options.priority);
    } else {
      v1::AgentChain& chain = *workload.mutable_chain();
      chain.set_origin_facility_id(options.origin);
      for (const std::string& service : options.services) chain.add_service_ids(service);
      chain.set_latency_budget_us(options.budget_us);
    }
  }
  size_t added = 0;
  for (const v1::Workload& workload : workloads) {
    const grpc::Status status = CallLeader(options.server, options.tls, stub, [&](auto& to) {
      grpc::ClientContext context;
      SetTimeout(context, std::chrono::seconds(60));
      v1::AddWorkloadRequest request;
      *request.mutable_workload() = workload;
      v1::AddWorkloadResponse response;
      return to.AddWorkload(&context, request, &response);
    });
    if (!status.ok()) {
      if (added > 0) std::cerr << "tectl: " << added << " of " << workloads.size() << " workloads were added\n";
      return PrintError(FromGrpc(status));
    }
    ++added;
  }
  if (workloads.size() == 1) {
    std::cout << "added workload " << workloads.front().id() << "\n";
  } else {
    std::cout << "added " << added << " workloads\n";
  }
  return 0;
}

int RunPin(const Options& options, v1::Operator::StubInterface& stub) {
  const std::string id = absl::StrCat("pin-", options.id);
  if (options.command == Command::kUnpin) return RemoveIntent(options, stub, id, absl::StrCat("unpinned ", options.id));
  v1::Intent intent;
  intent.set_id(id);
  intent.set_reason(options.reason);
  v1::Pin& pin = *intent.mutable_pin();
  pin.set_workload_id(options.id);
  for (const std::string& facility : options.path) pin.add_path_facility_ids(facility);
  for (const std::string& facility : options.facilities) pin.add_allowed_facility_ids(facility);
  return SendIntent(options, stub, intent,
                    absl::StrCat("pinned ", options.id,
                                 options.path.empty() ? absl::StrCat(" within ", absl::StrJoin(options.facilities, ","))
                                                      : absl::StrCat(" to ", absl::StrJoin(options.path, ">"))));
}

int RunOverride(const Options& options, v1::Operator::StubInterface& stub) {
  const std::string id = absl::StrCat("override-", options.id);
  if (options.clear) return RemoveIntent(options, stub, id, absl::StrCat("cleared the metric override of ", options.id));
  v1::Intent intent;
  intent.set_id(id);
  intent.set_reason(options.reason);
  v1::MetricOverride& override = *intent.mutable_metric_override();
  override.set_link_id(options.id);
  override.set_igp_metric(options.metric);
  if (options.for_s > 0) override.set_expires_at_unix_ms(daemon::UnixNowMs() + options.for_s * 1000);
  return SendIntent(options, stub, intent,
                    absl::StrCat("link ", options.id, " metric ", options.metric,
                                 options.for_s > 0 ? absl::StrCat(" until ", FormatUnixMs(override.expires_at_unix_ms()))
                                                   : " until cleared"));
}

}  // namespace geodesic::cli
