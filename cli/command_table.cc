#include "cli/command_table.h"

#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace geodesic::cli {

const std::vector<const CommandSpec*>& CommandTable() {
  static const auto* table = new std::vector<const CommandSpec*>{
      &GetCommandSpec(),      &DescribeCommandSpec(), &DrainCommandSpec(),   &UndrainCommandSpec(),   &AutoDrainCommandSpec(),
      &WorkloadCommandSpec(), &PinCommandSpec(),      &UnpinCommandSpec(),   &OverrideCommandSpec(),
      &WhatIfCommandSpec(),   &AuditCommandSpec(),    &ExplainCommandSpec(), &PlanCommandSpec(),
      &EventsCommandSpec(),   &AuditLogCommandSpec(), &ImportCommandSpec(),  &ExportCommandSpec(),
      &JournalCommandSpec(),  &BackupCommandSpec(),   &RestoreCommandSpec(),  &SolveCommandSpec(),    &DrillCommandSpec(),   &CompletionCommandSpec(),
      &HelpCommandSpec(),
  };
  return *table;
}

const CommandSpec* FindCommand(const std::string& name) {
  for (const CommandSpec* spec : CommandTable()) {
    if (spec->name == name) return spec;
  }
  return nullptr;
}

// The end of the general usage: where the model is, roles, exit codes.
constexpr std::string_view kWhere =
    "where the model is (or the environment variable in brackets):\n"
    "  --server HOST:PORT [GEODESIC_SERVER]   a pathcomp replica, with the operator's\n"
    "  --ca FILE [GEODESIC_CA] --cert FILE [GEODESIC_CERT] --key FILE [GEODESIC_KEY]\n"
    "  --store DIR   a pathcomp state directory, offline (get, describe, export, journal,\n"
    "                import, restore): read even while pathcomp runs; import and restore\n"
    "                only into a store no pathcomp has open\n"
    "roles (from the operator's certificate): viewer reads; operator also drains,\n"
    "  changes workloads and pins, runs what-ifs; admin also imports, overrides\n"
    "  metrics, forces drains and takes backups\n"
    "exit codes: 0 ok, 1 the server or the store refused or failed, 2 bad usage,\n"
    "  3 audit found single-facility dependencies, 4 a drill expectation failed\n";

namespace {

// Every command takes these; each but --help takes a value.
constexpr std::string_view kGlobalFlags[] = {"--server", "--store", "--ca", "--cert", "--key", "--help"};

}  // namespace

const std::map<std::string, bool>& Flags() {
  static const auto* flags = [] {
    auto* flags = new std::map<std::string, bool>;
    for (std::string_view name : kGlobalFlags) flags->emplace(name, name != "--help");
    flags->emplace("-o", true);
    // A flag means the same to every command that takes it: the first
    // command's word on whether it takes a value holds (options_test checks
    // that they agree).
    for (const CommandSpec* spec : CommandTable()) {
      for (const std::string& name : spec->flags) flags->emplace(name, true);
      for (const std::string& name : spec->switches) flags->emplace(name, false);
    }
    return flags;
  }();
  return *flags;
}

bool IsGlobalFlag(const std::string& name) {
  for (std::string_view global : kGlobalFlags) {
    if (name == global) return true;
  }
  return false;
}

bool TakesFlag(const CommandSpec& command, const std::string& name) {
  if (IsGlobalFlag(name)) return true;
  if (name == "-o") return !command.outputs.empty();
  return command.flags.count(name) > 0 || command.switches.count(name) > 0;
}

std::vector<std::string> CommandNames() {
  std::vector<std::string> names;
  for (const CommandSpec* spec : CommandTable()) names.push_back(spec->name);
  return names;
}

std::vector<std::string> CommandFlags(const std::string& name) {
  const CommandSpec* spec = FindCommand(name);
  if (spec == nullptr) return {};
  std::set<std::string> flags = spec->flags;
  flags.insert(spec->switches.begin(), spec->switches.end());
  if (!spec->outputs.empty()) flags.insert("-o");
  return {flags.begin(), flags.end()};
}

std::string CommandUsage(const std::string& name) {
  const CommandSpec* spec = FindCommand(name);
  if (spec == nullptr) return "";
  std::string usage;
  for (const std::string& line : std::vector<std::string>(absl::StrSplit(spec->usage, '\n', absl::SkipEmpty()))) {
    absl::StrAppend(&usage, line.rfind("    ", 0) == 0 ? "  " : "  tectl ", line, "\n");
  }
  return usage;
}

std::string UsageText() {
  std::string text = "usage: tectl [--server HOST:PORT --ca FILE --cert FILE --key FILE | --store DIR] COMMAND\ncommands:\n";
  for (const CommandSpec* spec : CommandTable()) absl::StrAppend(&text, CommandUsage(spec->name));
  absl::StrAppend(&text, std::string(kWhere));
  return text;
}

}  // namespace geodesic::cli
