// tectl completion bash: a bash completion script for tectl's commands, their
// operands' fixed words and their flags. Generated from the same command
// table the parser uses, so it cannot drift from it.
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/option_values.h"

namespace geodesic::cli {
namespace {

// Fixed words a command's operands take.
const std::map<std::string, std::string>& OperandWords() {
  static const auto* words = new std::map<std::string, std::string>{
      {"get", "facilities nodes links fabrics services workloads intents plan stragglers"},
      {"describe", "facility node link fabric service workload intent plan"},
      {"drain", "link node facility plane"},
      {"undrain", "link node facility plane"},
      {"workload", "add remove list"},
      {"whatif", "fail link srlg node plane facility"},
      {"explain", "chain"},
      {"plan", "history diff"},
      {"events", "watch"},
      {"completion", "bash"},
      {"drill", "run"},
  };
  return *words;
}

}  // namespace

int RunCompletion(const Options&) {
  const std::vector<std::string> commands = CommandNames();
  std::string cases;
  for (const std::string& command : commands) {
    std::vector<std::string> flags = CommandFlags(command);
    auto words = OperandWords().find(command);
    absl::StrAppend(&cases, "    ", command, ") words=\"", words == OperandWords().end() ? "" : words->second, " ",
                    absl::StrJoin(flags, " "), "\" ;;\n");
  }
  if (commands.empty()) return 1;
  std::cout << "# bash completion for tectl: source <(tectl completion bash)\n"
               "_tectl() {\n"
               "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
               "  local global=\"--server --store --ca --cert --key --help\"\n"
               "  case \"$prev\" in\n"
               "    --ca|--cert|--key|--file|--graph|--demands|--store|--report|--charts) COMPREPLY=( $(compgen -f -- \"$cur\") ); return ;;\n"
               "    -o|--output) COMPREPLY=( $(compgen -W \"table wide json yaml\" -- \"$cur\") ); return ;;\n"
               "    --objective) COMPREPLY=( $(compgen -W \"mlu latency total-flow\" -- \"$cur\") ); return ;;\n"
               "    --state) COMPREPLY=( $(compgen -W \"up degraded down unknown drained\" -- \"$cur\") ); return ;;\n"
               "  esac\n"
               "  local command=\"\" i\n"
               "  for (( i=1; i < COMP_CWORD; i++ )); do\n"
               "    case \"${COMP_WORDS[i]}\" in\n"
               "      --server|--store|--ca|--cert|--key|-o|--output) (( i++ )) ;;\n"
               "      -*) ;;\n"
               "      *) command=\"${COMP_WORDS[i]}\"; break ;;\n"
               "    esac\n"
               "  done\n"
               "  local words\n"
               "  case \"$command\" in\n"
               "    \"\") words=\""
            << absl::StrJoin(commands, " ")
            << "\" ;;\n"
            << cases
            << "  esac\n"
               "  COMPREPLY=( $(compgen -W \"$words $global\" -- \"$cur\") )\n"
               "}\n"
               "complete -F _tectl tectl\n";
  return 0;
}

namespace {

absl::Status ParseCompletion(const CommandArgs& args, Options& options) {
  if (args.operands.size() != 1 || args.operands[0] != "bash") return Usage("completion takes one shell: bash");
  options.shell = args.operands[0];
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& CompletionCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "completion",
      .command = Command::kCompletion,
      .usage = "completion bash\n    a bash completion script: source <(tectl completion bash)\n",
      .parse = ParseCompletion,
      .access = NoModel,
  };
  return *spec;
}

}  // namespace geodesic::cli
