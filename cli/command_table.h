#pragma once
// tectl's commands as data: each command's flags, output formats and usage
// text, and every flag the command line knows. The parser (options.cc), the
// help texts and the completion script are made from it, so they agree.
// Internal to cli/. Pure.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/options.h"

namespace geodesic::cli {

struct CommandSpec {
  Command command;
  std::set<std::string> flags;        // besides the global ones
  std::vector<OutputFormat> outputs;  // the first is the default; empty: no -o
};

// One command: its flags, output formats and usage lines (the first line is
// the synopsis, the others say what it does).
struct CommandInfo {
  std::string name;
  CommandSpec spec;
  std::string usage;
};

// Every command, in usage order.
const std::vector<CommandInfo>& CommandTable();
// The command named `name`; nullptr for an unknown one.
const CommandInfo* FindCommand(const std::string& name);
// Every flag and whether it takes a value. "--output" is an alias of "-o".
const std::map<std::string, bool>& Flags();
// Flags every command takes.
bool IsGlobalFlag(const std::string& name);

}  // namespace geodesic::cli
