#pragma once
// Every tectl command (command_spec.h), in usage order, and what the command
// line as a whole knows: every flag, the global ones. The parser (options.cc),
// the help texts and the completion script are made from it, so they agree.
// Internal to cli/. Pure.
#include <map>
#include <string>
#include <vector>

#include "cli/command_spec.h"

namespace geodesic::cli {

// Every command, in usage order.
const std::vector<const CommandSpec*>& CommandTable();
// The command named `name`; nullptr for an unknown one.
const CommandSpec* FindCommand(const std::string& name);
// Every flag (global, -o and every command's) and whether it takes a value.
// "--output" is an alias of "-o".
const std::map<std::string, bool>& Flags();
// Flags every command takes.
bool IsGlobalFlag(const std::string& name);
// Whether `command` takes flag `name` (a global one, -o or its own).
bool TakesFlag(const CommandSpec& command, const std::string& name);

}  // namespace geodesic::cli
