// tectl drain / undrain: the drain intent of a link, node, facility or fabric
// plane. The intent id is derived from the target, so undrain finds it.
// A drain is pre-checked first (dry run): what would move is shown, and the
// drain goes ahead only when the pre-check passes or --force is given; the
// server checks again when it applies it.
#include <iostream>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/impact_text.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/option_values.h"

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

// What `undrain` removes: the operator's drain intent of the target and, for
// a link, pathcomp's automatic drains of its fiber (the link and its
// reverse). NotFound when there is none.
absl::StatusOr<std::vector<std::string>> UndrainIntents(const Options& options, v1::Operator::StubInterface& stub,
                                                        const std::string& operator_intent_id) {
  v1::ListIntentsResponse intents;
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(30));
  if (grpc::Status status = stub.ListIntents(&context, v1::ListIntentsRequest(), &intents); !status.ok()) {
    return FromGrpc(status);
  }
  std::set<std::string> fiber = {options.id};
  if (options.kind == EntityKind::kLink && !options.plane) {
    v1::ListLinksResponse links;
    grpc::ClientContext links_context;
    SetTimeout(links_context, std::chrono::seconds(30));
    if (grpc::Status status = stub.ListLinks(&links_context, v1::ListLinksRequest(), &links); !status.ok()) {
      return FromGrpc(status);
    }
    const v1::Link* link = nullptr;
    for (const v1::Link& candidate : links.links()) {
      if (candidate.id() == options.id) link = &candidate;
    }
    for (const v1::Link& candidate : links.links()) {
      if (link != nullptr && candidate.src_node_id() == link->dst_node_id() &&
          candidate.dst_node_id() == link->src_node_id()) {
        fiber.insert(candidate.id());
      }
    }
  }
  std::vector<std::string> ids;
  for (const v1::Intent& intent : intents.intents()) {
    if (intent.id() == operator_intent_id) {
      ids.push_back(intent.id());
    } else if (intent.automatic() && options.kind == EntityKind::kLink && intent.has_drain() &&
               fiber.count(intent.drain().target().link_id())) {
      ids.push_back(intent.id());
    }
  }
  if (ids.empty()) {
    return absl::NotFoundError(absl::StrCat(TargetText(options), " is not drained (no intent ", operator_intent_id,
                                            options.kind == EntityKind::kLink ? " and no automatic drain" : "", ")"));
  }
  return ids;
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
    auto removed = UndrainIntents(options, stub, intent_id);
    if (!removed.ok()) return PrintError(removed.status());
    uint64_t generation = 0;
    for (const std::string& id : *removed) {
      auto removed_at = RemoveIntentAt(options.server, options.tls, stub, id);
      if (!removed_at.ok()) return PrintError(removed_at.status());
      generation = *removed_at;
    }
    std::cout << "undrained " << TargetText(options) << " (intent" << (removed->size() == 1 ? " " : "s ")
              << absl::StrJoin(*removed, ", ") << "), plan generation " << generation << "\n";
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

namespace {

// drain and undrain: KIND ID, or plane FACILITY:N.
absl::Status ParseDrain(const CommandArgs& args, Options& options) {
  const std::vector<std::string>& operands = args.operands;
  if (operands.size() != 2) return Usage(absl::StrCat(args.name, " takes a kind and an id"));
  if (operands[0] == "plane") {
    auto plane = ParsePlane(operands[1]);
    if (!plane.ok()) return plane.status();
    options.kind = EntityKind::kFacility;
    options.id = plane->first;
    options.plane = plane->second;
  } else {
    auto kind = ParseEntityKind(operands[0]);
    if (!kind || (*kind != EntityKind::kLink && *kind != EntityKind::kNode && *kind != EntityKind::kFacility)) {
      return Usage(absl::StrCat("can ", args.name, " a link, node, facility or plane, not ", Quoted(operands[0])));
    }
    options.kind = *kind;
    options.id = operands[1];
    if (auto status = CheckId(std::string(EntityKindName(*kind)), options.id); !status.ok()) return status;
  }
  if (auto status = ParseReason(args.flag("--reason"), options); !status.ok()) return status;
  options.dry_run = args.flag("--dry-run") != nullptr;
  options.force = args.flag("--force") != nullptr;
  if (options.force && options.dry_run) return Usage("--force and --dry-run do not go together");
  if (options.force && options.reason.empty()) return Usage("--force needs a --reason");
  return ParseUtilizationLimit(args.flag("--max-utilization"), options);
}

}  // namespace

const CommandSpec& DrainCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "drain",
      .command = Command::kDrain,
      .flags = {"--reason", "--max-utilization"},
      .switches = {"--dry-run", "--force"},
      .outputs = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "drain link|node|facility|plane ID [--reason TEXT] [--dry-run] [--force] [--max-utilization U]\n"
               "    takes traffic off it. A plane's ID is FACILITY:N. First shows what would move;\n"
               "    refused when a workload would lose its last path or a link would go over U\n"
               "    (default 1 = capacity) unless --force (admin role, with --reason)\n",
      .parse = ParseDrain,
      .access = ServerOnly,
  };
  return *spec;
}

const CommandSpec& UndrainCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "undrain",
      .command = Command::kUndrain,
      .usage = "undrain link|node|facility|plane ID\n    removes the drain; of a link, also pathcomp's automatic drains of it and its reverse\n",
      .parse = ParseDrain,
      .access = ServerOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
