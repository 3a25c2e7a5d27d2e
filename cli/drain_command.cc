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
  uint64_t generation = 0;
  // A follower names the leader: the change goes there, once.
  auto send = [&](v1::Operator::StubInterface& to) {
    grpc::ClientContext context;
    SetTimeout(context, std::chrono::seconds(30));
    if (drain) {
      v1::AddIntentRequest request;
      request.mutable_intent()->set_id(intent_id);
      *request.mutable_intent()->mutable_drain()->mutable_target() = target;
      request.mutable_intent()->set_reason(options.reason);
      v1::AddIntentResponse response;
      const grpc::Status status = to.AddIntent(&context, request, &response);
      generation = response.plan_generation();
      return status;
    }
    v1::DeleteIntentRequest request;
    request.set_id(intent_id);
    v1::DeleteIntentResponse response;
    const grpc::Status status = to.DeleteIntent(&context, request, &response);
    generation = response.plan_generation();
    return status;
  };
  grpc::Status status = send(stub);
  if (auto leader = LeaderAddressFrom(status); leader && !options.server.empty()) {
    std::cerr << "tectl: " << options.server << " is a follower; sending to the leader at " << *leader << "\n";
    auto leader_stub = ConnectOperator(*leader, options.tls);
    status = send(*leader_stub);
  }
  if (!status.ok()) return PrintError(FromGrpc(status));
  std::cout << (drain ? "drained " : "undrained ") << kind << " " << options.id << " (intent " << intent_id
            << "), plan generation " << generation << "\n";
  return 0;
}

}  // namespace geodesic::cli
