// tectl whatif fail KIND ID...: the impact of failures on the plan, computed by
// pathcomp without changing anything.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "cli/impact_text.h"
#include "cli/operator_client.h"
#include "cli/output.h"

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

}  // namespace geodesic::cli
