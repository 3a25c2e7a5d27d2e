// tectl whatif fail KIND ID...: the impact of failures on the plan, computed by
// pathcomp without changing anything.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/impact_text.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/option_values.h"

namespace geodesic::cli {

int RunWhatIf(const Options& options, v1::Operator::StubInterface& stub) {
  v1::WhatIfRequest request;
  std::vector<std::string> names;
  for (const Options::Failure& failure : options.failures) {
    v1::FailureScope& scope = *request.add_failures();
    scope.set_id(failure.id);
    if (failure.kind == "link") scope.set_kind(v1::FAILURE_KIND_LINK);
    if (failure.kind == "srlg") scope.set_kind(v1::FAILURE_KIND_SRLG);
    if (failure.kind == "node") scope.set_kind(v1::FAILURE_KIND_NODE);
    if (failure.kind == "facility") scope.set_kind(v1::FAILURE_KIND_FACILITY);
    if (failure.kind == "plane") {
      scope.set_kind(v1::FAILURE_KIND_PLANE);
      scope.set_plane(failure.plane);
      names.push_back(absl::StrCat("plane ", failure.id, ":", failure.plane));
    } else {
      names.push_back(absl::StrCat(failure.kind, " ", failure.id));
    }
  }
  request.set_utilization_limit(options.utilization_limit);
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(120));
  v1::WhatIfResponse response;
  const grpc::Status status = stub.WhatIf(&context, request, &response);
  if (!status.ok()) return PrintError(FromGrpc(status));
  if (options.output != OutputFormat::kTable) {
    PrintStructured(response.impact(), options.output);
    return 0;
  }
  std::cout << "what if " << absl::StrJoin(names, " + ") << " failed, " << ImpactText(response.impact());
  return 0;
}

namespace {

absl::StatusOr<Options::Failure> ParseFailure(const std::string& kind, const std::string& id) {
  Options::Failure failure;
  failure.kind = kind;
  if (kind == "plane") {
    auto plane = ParsePlane(id);
    if (!plane.ok()) return plane.status();
    failure.id = plane->first;
    failure.plane = plane->second;
    return failure;
  }
  if (kind != "link" && kind != "srlg" && kind != "node" && kind != "facility") {
    return Usage(absl::StrCat("whatif fails a link, srlg, node, plane or facility, not ", Quoted(kind)));
  }
  if (auto status = CheckId(kind, id); !status.ok()) return status;
  failure.id = id;
  return failure;
}

absl::Status ParseWhatIf(const CommandArgs& args, Options& options) {
  const std::vector<std::string>& operands = args.operands;
  if (operands.empty() || operands[0] != "fail") return Usage("whatif takes: fail KIND ID [KIND ID ...]");
  if (operands.size() < 3 || operands.size() % 2 != 1) return Usage("whatif fail takes KIND ID pairs");
  for (size_t i = 1; i + 1 < operands.size(); i += 2) {
    auto failure = ParseFailure(operands[i], operands[i + 1]);
    if (!failure.ok()) return failure.status();
    options.failures.push_back(*std::move(failure));
  }
  if (options.failures.size() > 64) return Usage("whatif fail takes at most 64 failures");
  return ParseUtilizationLimit(args.flag("--max-utilization"), options);
}

}  // namespace

const CommandSpec& WhatIfCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "whatif",
      .command = Command::kWhatIf,
      .flags = {"--max-utilization"},
      .outputs = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "whatif fail KIND ID [KIND ID ...] [--max-utilization U] [-o table|json|yaml]\n"
               "    KIND: link srlg node plane facility. The impact, changing nothing: workloads\n"
               "    that move or are cut, chains over budget, links over U, routes changed\n",
      .parse = ParseWhatIf,
      .access = ServerOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
