// tectl audit-log: who asked pathcomp for which change, when, and the result.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "text/table.h"

namespace geodesic::cli {

int RunAuditLog(const Options& options, v1::Operator::StubInterface& stub) {
  v1::ListAuditLogRequest request;
  request.set_from_seq(options.from_seq);
  request.set_limit(options.limit);
  grpc::ClientContext context;
  SetTimeout(context, std::chrono::seconds(60));
  v1::ListAuditLogResponse response;
  const grpc::Status status = stub.ListAuditLog(&context, request, &response);
  if (!status.ok()) return PrintError(FromGrpc(status));
  if (options.output == OutputFormat::kJson || options.output == OutputFormat::kYaml) {
    PrintStructured(response, options.output);
    return 0;
  }
  if (response.records().empty()) {
    std::cerr << (response.last_seq() == 0 ? "The audit log is empty.\n"
                                           : absl::StrCat("No audit records from seq ", options.from_seq,
                                                          "; the last is ", response.last_seq(), ".\n"));
    return 0;
  }
  const bool wide = options.output == OutputFormat::kWide;
  text::Table table(wide ? std::vector<std::string>{"SEQ", "TIME", "WHO", "ROLE", "ACTION", "RESULT", "PLAN", "ARGUMENTS"}
                   : std::vector<std::string>{"SEQ", "TIME", "WHO", "ACTION", "RESULT", "PLAN"});
  for (const auto& record : response.records()) {
    std::vector<std::string> row = {absl::StrCat(record.seq()), FormatUnixMs(record.at_unix_ms()), record.identity()};
    if (wide) row.push_back(record.role().empty() ? "-" : record.role());
    row.push_back(record.action());
    row.push_back(record.result());
    row.push_back(record.plan_generation() == 0 ? "-" : absl::StrCat(record.plan_generation()));
    if (wide) row.push_back(record.arguments());
    table.Add(std::move(row));
  }
  std::cout << table.Render();
  return 0;
}

namespace {

absl::Status ParseAuditLog(const CommandArgs& args, Options& options) {
  if (!args.operands.empty()) return Usage(absl::StrCat(args.name, " takes no operands"));
  return ParseJournalWindow(args.flag("--from"), args.flag("--limit"), options);
}

}  // namespace

const CommandSpec& AuditLogCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "audit-log",
      .command = Command::kAuditLog,
      .flags = {"--from", "--limit"},
      .outputs = {OutputFormat::kTable, OutputFormat::kWide, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "audit-log [--from SEQ] [--limit N] [-o table|wide|json|yaml]\n"
               "    who asked for which change, when, and the result (N: 1..10000, default 100)\n",
      .parse = ParseAuditLog,
      .access = ServerOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
