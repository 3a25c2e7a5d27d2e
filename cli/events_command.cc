// tectl events watch: pathcomp's health, plan and intent changes as they
// happen, one line each (a table row, or a JSON object per line). The first
// line says the watch is subscribed: every change after it is shown.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/entity_text.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "entity/oper_state_name.h"
#include "google/protobuf/util/json_util.h"

namespace geodesic::cli {
namespace {

std::string EventLine(const v1::Event& event) {
  const std::string at = FormatUnixMs(event.at_unix_ms());
  switch (event.kind_case()) {
    case v1::Event::kHealth: {
      const auto& health = event.health();
      return absl::StrCat(at, "  health  link ", health.link_id(), " ", entity::OperStateName(health.previous()),
                          " -> ", entity::OperStateName(health.current()),
                          health.reported_by().empty() ? "" : absl::StrCat(" (", health.reported_by(), ")"));
    }
    case v1::Event::kPlan:
      return absl::StrCat(at, "  plan    generation ", event.plan().generation(), ", ", event.plan().routes_changed(),
                          " routes changed: ", event.plan().reason());
    case v1::Event::kSubscribed:
      return absl::StrCat(at, "  subscribed  (plan generation ", event.subscribed().plan_generation(), ")");
    case v1::Event::kIntent: {
      const auto& change = event.intent();
      if (change.removed()) return absl::StrCat(at, "  intent  ", change.intent().id(), " removed");
      return absl::StrCat(at, "  intent  ", change.intent().id(), " ", IntentAction(change.intent()), " ",
                          IntentTarget(change.intent()));
    }
    case v1::Event::kAutoDrain: {
      const auto& drain = event.auto_drain();
      std::string line = absl::StrCat(at, "  auto-drain  ", AutoDrainActionText(drain.action()));
      if (!drain.link_ids().empty()) absl::StrAppend(&line, " ", absl::StrJoin(drain.link_ids(), ","));
      if (!drain.intent_ids().empty()) absl::StrAppend(&line, " (intents ", absl::StrJoin(drain.intent_ids(), ","), ")");
      if (!drain.reason().empty()) absl::StrAppend(&line, ": ", drain.reason());
      return line;
    }
    case v1::Event::KIND_NOT_SET: break;
  }
  return absl::StrCat(at, "  ?");
}

}  // namespace

int RunEvents(const Options& options, v1::Operator::StubInterface& stub) {
  grpc::ClientContext context;
  auto reader = stub.WatchEvents(&context, v1::WatchEventsRequest());
  uint64_t seen = 0;
  v1::Event event;
  while (reader->Read(&event)) {
    if (options.output == OutputFormat::kJson) {
      std::string line;
      google::protobuf::util::JsonPrintOptions json;
      json.preserve_proto_field_names = true;
      (void)google::protobuf::util::MessageToJsonString(event, &line, json);
      std::cout << line << std::endl;  // flushed: a pipe sees each event at once
    } else {
      std::cout << EventLine(event) << std::endl;
    }
    // --count counts changes, not the subscription.
    if (event.kind_case() != v1::Event::kSubscribed && options.count != 0 && ++seen >= options.count) {
      context.TryCancel();
      reader->Finish();
      return 0;
    }
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return PrintError(FromGrpc(status));
  std::cerr << "tectl: the server ended the stream\n";
  return 0;
}

namespace {

absl::Status ParseEvents(const CommandArgs& args, Options& options) {
  if (args.operands.size() != 1 || args.operands[0] != "watch") return Usage("events takes: watch");
  options.subcommand = "watch";
  if (const std::string* count = args.flag("--count")) {
    auto n = ParseNumber(*count, 1, 1'000'000);
    if (!n) return Usage(absl::StrCat("--count must be a whole number from 1 to 1000000, not ", Quoted(*count)));
    options.count = *n;
  }
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& EventsCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "events",
      .command = Command::kEvents,
      .flags = {"--count"},
      .outputs = {OutputFormat::kTable, OutputFormat::kJson},
      .usage = "events watch [--count N] [-o table|json]\n"
               "    health, plan and intent changes as they happen (N events, or until ^C)\n",
      .parse = ParseEvents,
      .access = ServerOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
