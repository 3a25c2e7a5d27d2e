// tectl journal: every committed change set of pathcomp's store, with its cause.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "text/table.h"

namespace geodesic::cli {
namespace {

// Changes listed one by one up to this many; beyond, counted per kind.
constexpr int kListedChanges = 4;

std::string ChangeName(const v1::JournalChange& change) {
  return absl::StrCat(change.deleted() ? "-" : "", change.kind(), "/", change.id());
}

// "link/a-b, -workload/x"; with more changes than kListedChanges (and not
// `all`): "149 changes: 11 facility, 28 link, 110 workload (8 deleted)".
std::string Changes(const v1::JournalRecord& record, bool all) {
  if (all || record.changes_size() <= kListedChanges) {
    std::vector<std::string> names;
    for (const auto& change : record.changes()) names.push_back(ChangeName(change));
    return names.empty() ? "-" : absl::StrJoin(names, ", ");
  }
  std::map<std::string, int> per_kind;
  int deleted = 0;
  for (const auto& change : record.changes()) {
    ++per_kind[change.kind()];
    deleted += change.deleted();
  }
  std::vector<std::string> counts;
  for (const auto& [kind, count] : per_kind) counts.push_back(absl::StrCat(count, " ", kind));
  return absl::StrCat(record.changes_size(), " changes: ", absl::StrJoin(counts, ", "),
                      deleted ? absl::StrCat(" (", deleted, " deleted)") : "");
}

}  // namespace

int RunJournal(const Options& options, ModelSource& source) {
  v1::ListJournalRequest request;
  request.set_from_seq(options.from_seq);
  request.set_limit(options.limit);
  auto response = source.ListJournal(request);
  if (!response.ok()) return PrintError(response.status());
  if (options.output == OutputFormat::kJson || options.output == OutputFormat::kYaml) {
    PrintStructured(*response, options.output);
    return 0;
  }
  // Asked for entries the retention dropped: said, on stderr, before what is kept.
  if (options.from_seq != 0 && options.from_seq < response->first_seq()) {
    std::cerr << "The journal keeps seq " << response->first_seq()
              << " on: older entries were dropped by its retention (journal.max_age_hours, journal.max_mb).\n";
  }
  if (response->entries().empty()) {
    std::cerr << (response->last_seq() == 0 ? "The journal is empty.\n"
                                            : absl::StrCat("No journal entries from seq ", options.from_seq,
                                                           "; the last is ", response->last_seq(), ".\n"));
    return 0;
  }
  text::Table table({"SEQ", "TIME", "CAUSE", "CHANGES"});
  for (const auto& record : response->entries()) {
    table.Add({absl::StrCat(record.seq()), FormatUnixMs(record.at_unix_ms()), record.cause(),
               Changes(record, options.output == OutputFormat::kWide)});
  }
  std::cout << table.Render();
  return 0;
}

namespace {

absl::Status ParseJournal(const CommandArgs& args, Options& options) {
  if (!args.operands.empty()) return Usage(absl::StrCat(args.name, " takes no operands"));
  return ParseJournalWindow(args.flag("--from"), args.flag("--limit"), options);
}

}  // namespace

const CommandSpec& JournalCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "journal",
      .command = Command::kJournal,
      .flags = {"--from", "--limit"},
      .outputs = {OutputFormat::kTable, OutputFormat::kWide, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "journal [--from SEQ] [--limit N] [-o table|wide|json|yaml]\n"
               "    the store's committed changes with their causes (N: 1..10000, default 100)\n",
      .parse = ParseJournal,
      .access = ServerOrStore,
  };
  return *spec;
}

}  // namespace geodesic::cli
