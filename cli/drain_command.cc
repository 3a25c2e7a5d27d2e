// tectl drain / undrain: the drain intent of a link, node or facility. The
// intent id is derived from the target, so undrain finds it.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/operator_client.h"
#include "cli/output.h"

namespace geodesic::cli {

int RunDrain(const Options& options, v1::Operator::StubInterface& stub) {
  const bool drain = options.command == Command::kDrain;
  const std::string kind(EntityKindName(options.kind));
  v1::Target target;
  switch (options.kind) {
    case EntityKind::kLink: target.set_link_id(options.id); break;
    case EntityKind::kNode: target.set_node_id(options.id); break;
    case EntityKind::kFacility: target.set_facility_id(options.id); break;
    default: return PrintError(absl::InvalidArgumentError(absl::StrCat("cannot drain a ", kind)));
  }
  const std::string intent_id = absl::StrCat("drain-", kind, "-", options.id);
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(30));
  uint64_t generation = 0;
  if (drain) {
    v1::AddIntentRequest request;
    request.mutable_intent()->set_id(intent_id);
    *request.mutable_intent()->mutable_drain()->mutable_target() = target;
    request.mutable_intent()->set_reason(options.reason);
    v1::AddIntentResponse response;
    if (auto status = stub.AddIntent(&context, request, &response); !status.ok()) {
      return PrintError(FromGrpc(status));
    }
    generation = response.plan_generation();
  } else {
    v1::DeleteIntentRequest request;
    request.set_id(intent_id);
    v1::DeleteIntentResponse response;
    if (auto status = stub.DeleteIntent(&context, request, &response); !status.ok()) {
      return PrintError(FromGrpc(status));
    }
    generation = response.plan_generation();
  }
  std::cout << (drain ? "drained " : "undrained ") << kind << " " << options.id << " (intent " << intent_id
            << "), plan generation " << generation << "\n";
  return 0;
}

}  // namespace geodesic::cli
