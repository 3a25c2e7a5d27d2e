// tectl auto-drain pause|resume|status: the operator's hand on pathcomp's
// automatic drainer. A pause is an intent (kind auto_drain_pause, id
// "auto-drain-pause"): stored, replicated and audited like any other, shown
// by `tectl get intents`; resume removes it. Status shows whether the
// drainer acts, why not, what it drained and which links are not healthy.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/entity_text.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "text/table.h"

namespace geodesic::cli {
namespace {

constexpr char kPauseIntentId[] = "auto-drain-pause";

int Pause(const Options& options, v1::Operator::StubInterface& stub) {
  v1::AddIntentRequest request;
  request.mutable_intent()->set_id(kPauseIntentId);
  request.mutable_intent()->mutable_auto_drain_pause();
  request.mutable_intent()->set_reason(options.reason);
  v1::AddIntentResponse response;
  const grpc::Status status = CallLeader(options.server, options.tls, stub, [&](auto& to) {
    grpc::ClientContext context;
    SetTimeout(context, std::chrono::seconds(60));
    return to.AddIntent(&context, request, &response);
  });
  if (!status.ok()) return PrintError(FromGrpc(status));
  std::cout << "automatic drains paused (intent " << kPauseIntentId << "); drains already taken stay until undrained\n";
  return 0;
}

int Resume(const Options& options, v1::Operator::StubInterface& stub) {
  v1::ListIntentsResponse intents;
  {
    grpc::ClientContext context;
    SetTimeout(context, std::chrono::seconds(30));
    const grpc::Status status = stub.ListIntents(&context, v1::ListIntentsRequest(), &intents);
    if (!status.ok()) return PrintError(FromGrpc(status));
  }
  int removed = 0;
  for (const v1::Intent& intent : intents.intents()) {
    if (!intent.has_auto_drain_pause()) continue;
    auto generation = RemoveIntentAt(options.server, options.tls, stub, intent.id());
    if (!generation.ok()) return PrintError(generation.status());
    ++removed;
  }
  if (removed == 0) return PrintError(absl::FailedPreconditionError("automatic drains are not paused"));
  std::cout << "automatic drains resumed\n";
  return 0;
}

int Status(const Options& options, v1::Operator::StubInterface& stub) {
  v1::AutoDrainStatus status;
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(30));
  const grpc::Status called = stub.GetAutoDrainStatus(&context, v1::GetAutoDrainStatusRequest(), &status);
  if (!called.ok()) return PrintError(FromGrpc(called));
  if (options.output != OutputFormat::kTable) {
    PrintStructured(status, options.output);
    return 0;
  }
  std::string state = !status.enabled()      ? "disabled in pathcomp's config"
                      : status.paused()      ? absl::StrCat("paused by ", status.paused_by(),
                                                            status.pause_reason().empty() ? "" : ": ",
                                                            status.pause_reason())
                      : status.failed_open() ? absl::StrCat("failed open: ", status.fail_open_reason())
                      : !status.acting()     ? "watching (this replica does not lead: the leader acts)"
                                             : "active";
  std::cout << "automatic drains: " << state << "\n"
            << "drained now: "
            << (status.active_intent_ids().empty() ? "none" : absl::StrJoin(status.active_intent_ids(), ", ")) << "\n"
            << "drains within the last hour: " << status.drains_last_hour() << " (max " << status.max_per_hour()
            << "), at once at most " << status.max_active() << " fibers\n";
  if (status.tripped().empty()) {
    std::cout << "every link is healthy or not yet judged\n";
    return 0;
  }
  text::Table table({"LINK", "VERDICT", "CONFIRMED", "SINCE", "EVIDENCE"});
  for (const v1::LinkAssessment& link : status.tripped()) {
    std::vector<std::string> evidence;
    for (const v1::VerdictEvidence& item : link.evidence()) {
      if (item.verdict() == v1::LINK_VERDICT_HEALTHY || item.verdict() == v1::LINK_VERDICT_UNKNOWN) continue;
      evidence.push_back(absl::StrCat(item.observer(), ": ", item.detail()));
    }
    table.Add({link.link_id(), VerdictText(link.verdict()), link.confirmed() ? "yes" : "no (one end only)",
               FormatUnixMs(link.since_unix_ms()), absl::StrJoin(evidence, "; ")});
  }
  std::cout << table.Render();
  return 0;
}

absl::Status ParseAutoDrain(const CommandArgs& args, Options& options) {
  if (args.operands.size() != 1) return Usage("auto-drain takes pause, resume or status");
  options.subcommand = args.operands[0];
  if (options.subcommand != "pause" && options.subcommand != "resume" && options.subcommand != "status") {
    return Usage(absl::StrCat("auto-drain takes pause, resume or status, not ", Quoted(options.subcommand)));
  }
  if (auto status = ParseReason(args.flag("--reason"), options); !status.ok()) return status;
  if (!options.reason.empty() && options.subcommand != "pause") return Usage("only pause takes --reason");
  return absl::OkStatus();
}

}  // namespace

int RunAutoDrain(const Options& options, v1::Operator::StubInterface& stub) {
  if (options.subcommand == "pause") return Pause(options, stub);
  if (options.subcommand == "resume") return Resume(options, stub);
  return Status(options, stub);
}

const CommandSpec& AutoDrainCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "auto-drain",
      .command = Command::kAutoDrain,
      .flags = {"--reason"},
      .outputs = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "auto-drain pause [--reason TEXT] | resume | status\n"
               "    pathcomp's automatic drains of gray links: pause them (operator role; drains\n"
               "    taken stay), resume them, or show whether they act, what is drained and which\n"
               "    links are slow, lossy or flapping with their evidence (undo one: tectl undrain)\n",
      .parse = ParseAutoDrain,
      .access = ServerOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
