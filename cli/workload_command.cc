// tectl workload add|remove (list is `get workloads`), and the intents that
// steer one workload or link: pin / unpin, override.
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/option_values.h"
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
    workload.set_tenant(options.tenant);
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

namespace {

absl::Status ParseWorkload(const CommandArgs& args, Options& options) {
  static const std::vector<std::string> kAddFlags = {"--file", "--src", "--to", "--gbps", "--priority",
                                                     "--origin", "--services", "--budget-ms", "--tenant"};
  const std::vector<std::string>& operands = args.operands;
  auto flag = [&args](const std::string& name) { return args.flag(name); };
  if (operands.empty() || (operands[0] != "add" && operands[0] != "remove" && operands[0] != "list")) {
    return Usage("workload takes add, remove or list");
  }
  options.subcommand = operands[0];
  if (options.subcommand != "add") {
    for (const std::string& name : kAddFlags) {
      if (flag(name)) return Usage(absl::StrCat(name, " is for workload add"));
    }
    if (options.subcommand == "list") {
      if (operands.size() != 1) return Usage("workload list takes no operands");
      options.kind = EntityKind::kWorkload;
      return absl::OkStatus();
    }
    if (flag("-o")) return Usage("-o is for workload list");
    if (operands.size() != 2) return Usage("workload remove takes one id");
    options.id = operands[1];
    return CheckId("workload", options.id);
  }
  if (flag("-o")) return Usage("-o is for workload list");
  if (const std::string* file = flag("--file")) {
    if (operands.size() != 1) return Usage("workload add --file takes no id: the file has them");
    for (const std::string& name : kAddFlags) {
      if (name != "--file" && flag(name)) return Usage(absl::StrCat(name, " does not go with --file"));
    }
    if (!IsOneLine(*file)) return Usage("the file name must be one line");
    options.file = *file;
    return absl::OkStatus();
  }
  if (operands.size() != 2) return Usage("workload add takes one id (or --file FILE)");
  options.id = operands[1];
  if (auto status = CheckId("workload", options.id); !status.ok()) return status;
  if (const std::string* tenant = flag("--tenant")) {
    if (auto status = CheckId("tenant", *tenant); !status.ok()) return status;
    options.tenant = *tenant;
  }
  const bool elephant = flag("--src") || flag("--to") || flag("--gbps") || flag("--priority");
  const bool chain = flag("--origin") || flag("--services") || flag("--budget-ms");
  if (elephant == chain) {
    return Usage("workload add takes an elephant flow (--src --to --gbps) or a chain (--origin --services --budget-ms)");
  }
  if (elephant) {
    if (!flag("--src") || !flag("--to") || !flag("--gbps")) return Usage("an elephant flow needs --src, --to and --gbps");
    options.src = *flag("--src");
    if (auto status = CheckId("facility", options.src); !status.ok()) return status;
    options.dst_prefix = *flag("--to");
    double gbps = 0;
    if (!absl::SimpleAtod(*flag("--gbps"), &gbps) || !std::isfinite(gbps) || gbps <= 0 || gbps > 1e6) {
      return Usage(absl::StrCat("--gbps must be a number in (0, 1e6], not ", Quoted(*flag("--gbps"))));
    }
    options.gbps = gbps;
    if (const std::string* priority = flag("--priority")) {
      auto value = ParseNumber(*priority, 0, 7);
      if (!value) return Usage(absl::StrCat("--priority must be 0-7 (0 = highest), not ", Quoted(*priority)));
      options.priority = static_cast<uint32_t>(*value);
    }
    return absl::OkStatus();
  }
  if (!flag("--origin") || !flag("--services") || !flag("--budget-ms")) {
    return Usage("an agent chain needs --origin, --services and --budget-ms");
  }
  options.origin = *flag("--origin");
  if (auto status = CheckId("facility", options.origin); !status.ok()) return status;
  auto services = ParseIdList("--services", *flag("--services"), /*repeats=*/true);
  if (!services.ok()) return services.status();
  options.services = *std::move(services);
  auto budget = ParseNumber(*flag("--budget-ms"), 1, 60'000);
  if (!budget) return Usage(absl::StrCat("--budget-ms must be a whole number from 1 to 60000, not ",
                                         Quoted(*flag("--budget-ms"))));
  options.budget_us = *budget * 1000;
  return absl::OkStatus();
}

// workload list reads the model (also offline); add and remove change it.
ModelAccess WorkloadAccess(const Options& parsed) {
  return parsed.subcommand == "list" ? ModelAccess::kServerOrStore : ModelAccess::kServer;
}

// pin and unpin: one chain id; pin also --path or --facilities.
absl::Status ParsePin(const CommandArgs& args, Options& options) {
  if (args.operands.size() != 1) return Usage(absl::StrCat(args.name, " takes one chain id"));
  options.id = args.operands[0];
  if (auto status = CheckId("workload", options.id); !status.ok()) return status;
  if (options.command == Command::kUnpin) return absl::OkStatus();
  const std::string* path = args.flag("--path");
  const std::string* facilities = args.flag("--facilities");
  if ((path == nullptr) == (facilities == nullptr)) return Usage("pin takes --path or --facilities (one of them)");
  auto list = ParseIdList(path ? "--path" : "--facilities", path ? *path : *facilities, /*repeats=*/path != nullptr);
  if (!list.ok()) return list.status();
  (path ? options.path : options.facilities) = *std::move(list);
  return ParseReason(args.flag("--reason"), options);
}

// 90s, 30m, 4h, 2d: seconds, at most a year.
absl::StatusOr<int64_t> ParseDuration(const std::string& text) {
  const std::map<char, int64_t> units = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
  auto unit = text.empty() ? units.end() : units.find(text.back());
  std::optional<uint64_t> count;
  if (unit != units.end()) count = ParseNumber(text.substr(0, text.size() - 1), 1, 366 * 86400);
  if (!count || static_cast<int64_t>(*count) * unit->second > 366 * 86400) {
    return Usage(absl::StrCat("--for is a duration like 90s, 30m, 4h or 2d (at most a year), not ", Quoted(text)));
  }
  return static_cast<int64_t>(*count) * unit->second;
}

absl::Status ParseOverride(const CommandArgs& args, Options& options) {
  if (args.operands.size() != 1) return Usage("override takes one link id");
  options.id = args.operands[0];
  if (auto status = CheckId("link", options.id); !status.ok()) return status;
  options.clear = args.flag("--clear") != nullptr;
  const std::string* metric = args.flag("--metric");
  if (options.clear) {
    if (metric || args.flag("--for") || args.flag("--reason")) {
      return Usage("--clear takes no --metric, --for or --reason");
    }
    return absl::OkStatus();
  }
  if (metric == nullptr) return Usage("override needs --metric N (or --clear)");
  auto value = ParseNumber(*metric, 1, 65535);
  if (!value) return Usage(absl::StrCat("--metric must be a whole number from 1 to 65535, not ", Quoted(*metric)));
  options.metric = static_cast<uint32_t>(*value);
  if (const std::string* duration = args.flag("--for")) {
    auto seconds = ParseDuration(*duration);
    if (!seconds.ok()) return seconds.status();
    options.for_s = *seconds;
  }
  return ParseReason(args.flag("--reason"), options);
}

}  // namespace

const CommandSpec& WorkloadCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "workload",
      .command = Command::kWorkload,
      .flags = {"--file", "--src", "--to", "--gbps", "--priority", "--origin", "--services", "--budget-ms",
                "--tenant"},
      .outputs = {OutputFormat::kTable, OutputFormat::kWide, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "workload add ID --src F --to PREFIX --gbps G [--priority 0-7]     an elephant flow\n"
               "workload add ID --origin F --services S1,S2,... --budget-ms MS     an agent chain\n"
               "    either kind takes --tenant NAME: the tenant it belongs to, who may watch its paths\n"
               "    (the Relay service, with the certificate tenant-NAME); without it, the operators' own\n"
               "workload add --file FILE     every workload of a file (`workloads:` as in import; `tenant:`)\n"
               "workload remove ID\n"
               "workload list [-o table|wide|json|yaml]\n",
      .parse = ParseWorkload,
      .access = WorkloadAccess,
  };
  return *spec;
}

const CommandSpec& PinCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "pin",
      .command = Command::kPin,
      .flags = {"--path", "--facilities", "--reason"},
      .usage = "pin CHAIN (--path F1,F2,... | --facilities F1,F2,...) [--reason TEXT]\n"
               "    keeps an agent chain on these replica facilities (one per call, in order) or\n"
               "    within a facility set (replicas and transit)\n",
      .parse = ParsePin,
      .access = ServerOnly,
  };
  return *spec;
}

const CommandSpec& UnpinCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "unpin",
      .command = Command::kUnpin,
      .usage = "unpin CHAIN\n    removes the pin\n",
      .parse = ParsePin,
      .access = ServerOnly,
  };
  return *spec;
}

const CommandSpec& OverrideCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "override",
      .command = Command::kOverride,
      .flags = {"--metric", "--for", "--reason"},
      .switches = {"--clear"},
      .usage = "override LINK --metric N [--for DURATION] [--reason TEXT] | override LINK --clear\n"
               "    replaces the link's metric (1-65535; path cost scales by it over the inventory\n"
               "    metric) until it expires (DURATION: 90s, 30m, 4h, 2d); admin role\n",
      .parse = ParseOverride,
      .access = ServerOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
