// tectl drain / undrain: the drain intent of a link, node, facility or fabric
// plane. The intent id is derived from the target, so undrain finds it.
// A drain is pre-checked first (dry run): what would move is shown, and the
// drain goes ahead only when the pre-check passes or --force is given; the
// server checks again when it applies it.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "cli/impact_text.h"
#include "cli/operator_client.h"
#include "cli/output.h"

namespace geodesic::cli {
namespace {

std::string DrainIntentId(const Options& options) {
  if (options.plane) return absl::StrCat("drain-plane-", options.id, "-", *options.plane);
  return absl::StrCat("drain-", EntityKindName(options.kind), "-", options.id);
}

std::string TargetText(const Options& options) {
  if (options.plane) return absl::StrCat("plane ", options.id, ":", *options.plane);
  return absl::StrCat(EntityKindName(options.kind), " ", options.id);
}

void PrintImpact(const Options& options, const v1::Impact& impact) {
  if (options.output == OutputFormat::kTable) {
    std::cout << "pre-check of drain " << TargetText(options) << " " << ImpactText(impact);
  } else {
    PrintStructured(impact, options.output);
  }
}

}  // namespace

int RunDrain(const Options& options, v1::Operator::StubInterface& stub) {
  const bool drain = options.command == Command::kDrain;
  const std::string intent_id = DrainIntentId(options);
  if (!drain) {
    auto generation = RemoveIntentAt(options.server, options.tls, stub, intent_id);
    if (!generation.ok()) return PrintError(generation.status());
    std::cout << "undrained " << TargetText(options) << " (intent " << intent_id << "), plan generation "
              << *generation << "\n";
    return 0;
  }

  v1::AddIntentRequest request;
  v1::Intent& intent = *request.mutable_intent();
  intent.set_id(intent_id);
  v1::Target& target = *intent.mutable_drain()->mutable_target();
  switch (options.kind) {
    case EntityKind::kLink: target.set_link_id(options.id); break;
    case EntityKind::kNode: target.set_node_id(options.id); break;
    case EntityKind::kFacility: target.set_facility_id(options.id); break;
    default: return PrintError(absl::InvalidArgumentError("only a link, node, facility or plane drains"));
  }
  if (options.plane) {
    intent.mutable_drain()->set_plane(*options.plane);
    intent.mutable_drain()->set_plane_set(true);
  }
  intent.set_reason(options.reason);
  request.set_utilization_limit(options.utilization_limit);
  request.set_force(options.force);

  auto send = [&](bool dry_run, v1::AddIntentResponse& response) {
    return CallLeader(options.server, options.tls, stub, [&](auto& to) {
      grpc::ClientContext context;
      SetTimeout(context, std::chrono::seconds(120));
      request.set_dry_run(dry_run);
      return to.AddIntent(&context, request, &response);
    });
  };
  // The pre-check, shown; a refusal ends here unless forced.
  v1::AddIntentResponse check;
  grpc::Status status = send(/*dry_run=*/true, check);
  if (!status.ok()) return PrintError(FromGrpc(status));
  PrintImpact(options, check.impact());
  if (!check.impact().refusals().empty() && !options.force) {
    return PrintError(absl::FailedPreconditionError(
        absl::StrCat("FAILED_PRECONDITION: drain refused by the pre-check: ",
                     absl::StrJoin(check.impact().refusals(), "; "), " (an admin may --force it, with a --reason)")));
  }
  // With -o json|yaml, stdout holds only the impact.
  std::ostream& note = options.output == OutputFormat::kTable ? std::cout : std::cerr;
  if (options.dry_run) {
    note << "dry run: nothing changed\n";
    return 0;
  }
  v1::AddIntentResponse applied;
  status = send(/*dry_run=*/false, applied);
  if (!status.ok()) return PrintError(FromGrpc(status));
  note << "drained " << TargetText(options) << " (intent " << intent_id << (options.force ? ", forced" : "")
            << "), plan generation " << applied.plan_generation() << "\n";
  return 0;
}

}  // namespace geodesic::cli
