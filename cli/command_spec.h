#pragma once
// One tectl command as the command line knows it: its name, flags, output
// formats, usage text, where it finds the model, and the function that turns
// its operands and flags into Options. Each command defines its spec next to
// its implementation (cli/*_command.cc); command_table.cc lists them in usage
// order, and the parser (options.cc), `tectl help` and the completion script
// are made from that list, so they agree. Internal to cli/. Pure.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/options.h"

namespace geodesic::cli {

// What a command's parser gets: the words after the command's name, and the
// flags given (each one of the command's or a global one, none twice).
class CommandArgs {
 public:
  CommandArgs(std::string name, std::vector<std::string> operands, const std::map<std::string, std::string>& given)
      : name(std::move(name)), operands(std::move(operands)), given_(given) {}

  const std::string name;  // the command as typed
  const std::vector<std::string> operands;

  // The value of flag `flag_name` ("" for a switch); nullptr when not given.
  const std::string* flag(const std::string& flag_name) const {
    auto it = given_.find(flag_name);
    return it == given_.end() ? nullptr : &it->second;
  }

 private:
  const std::map<std::string, std::string>& given_;
};

// Where a command finds the model (ParseCommandLine's last step).
enum class ModelAccess {
  kNone,           // help, completion: --server and --store are accepted and unused
  kLocalFiles,     // solve, drill: runs on files here; --server and --store are refused
  kServer,         // a running pathcomp (--server or GEODESIC_SERVER)
  kServerOrStore,  // a server, or a store read offline (--store)
  kStore,          // a store directory only (--store): restore
};

struct CommandSpec {
  std::string name;
  Command command;
  std::set<std::string> flags{};     // that take a value, besides -o and the global ones
  std::set<std::string> switches{};  // that take none
  std::vector<OutputFormat> outputs{};  // the first is the default; empty: no -o
  // Usage lines: the first is the synopsis, indented ones say what it does.
  std::string usage;
  // Fills `options` (command already set) from `args`; InvalidArgument with a
  // one-line message for bad usage.
  absl::Status (*parse)(const CommandArgs& args, Options& options) = nullptr;
  // Where the parsed command finds the model.
  ModelAccess (*access)(const Options& parsed) = nullptr;
};

// The accesses most commands have, for CommandSpec::access.
inline ModelAccess NoModel(const Options&) { return ModelAccess::kNone; }
inline ModelAccess LocalFiles(const Options&) { return ModelAccess::kLocalFiles; }
inline ModelAccess ServerOnly(const Options&) { return ModelAccess::kServer; }
inline ModelAccess ServerOrStore(const Options&) { return ModelAccess::kServerOrStore; }
inline ModelAccess StoreOnly(const Options&) { return ModelAccess::kStore; }

// Each command's spec, defined beside its implementation.
const CommandSpec& GetCommandSpec();          // get_command.cc
const CommandSpec& DescribeCommandSpec();     // describe_command.cc
const CommandSpec& DrainCommandSpec();        // drain_command.cc
const CommandSpec& UndrainCommandSpec();      // drain_command.cc
const CommandSpec& AutoDrainCommandSpec();    // auto_drain_command.cc
const CommandSpec& WorkloadCommandSpec();     // workload_command.cc
const CommandSpec& PinCommandSpec();          // workload_command.cc
const CommandSpec& UnpinCommandSpec();        // workload_command.cc
const CommandSpec& OverrideCommandSpec();     // workload_command.cc
const CommandSpec& WhatIfCommandSpec();       // whatif_command.cc
const CommandSpec& AuditCommandSpec();        // explain_command.cc
const CommandSpec& ExplainCommandSpec();      // explain_command.cc
const CommandSpec& PlanCommandSpec();         // plan_command.cc
const CommandSpec& EventsCommandSpec();       // events_command.cc
const CommandSpec& AuditLogCommandSpec();     // audit_log_command.cc
const CommandSpec& ImportCommandSpec();       // import_command.cc
const CommandSpec& ExportCommandSpec();       // export_command.cc
const CommandSpec& JournalCommandSpec();      // journal_command.cc
const CommandSpec& BackupCommandSpec();       // backup_command.cc
const CommandSpec& RestoreCommandSpec();      // restore_command.cc
const CommandSpec& SolveCommandSpec();        // solve_command.cc
const CommandSpec& DrillCommandSpec();        // drill_command.cc
const CommandSpec& CompletionCommandSpec();   // completion_command.cc
const CommandSpec& HelpCommandSpec();         // options.cc

}  // namespace geodesic::cli
