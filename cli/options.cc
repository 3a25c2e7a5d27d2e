#include "cli/options.h"

#include <array>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_table.h"
#include "cli/option_values.h"

namespace geodesic::cli {

namespace {

struct KindNames {
  EntityKind kind;
  std::string_view singular, plural;
};
constexpr std::array<KindNames, 8> kKindNames = {{
    {EntityKind::kFacility, "facility", "facilities"},
    {EntityKind::kNode, "node", "nodes"},
    {EntityKind::kLink, "link", "links"},
    {EntityKind::kFabric, "fabric", "fabrics"},
    {EntityKind::kService, "service", "services"},
    {EntityKind::kWorkload, "workload", "workloads"},
    {EntityKind::kIntent, "intent", "intents"},
    {EntityKind::kPlan, "plan", "plans"},
}};


// HOST:PORT, [IPV6]:PORT; the port 1..65535.
absl::Status CheckServer(const std::string& server, const std::string& source) {
  const size_t colon = server.rfind(':');
  const bool ok = colon != std::string::npos && colon > 0 &&
                  ParseNumber(server.substr(colon + 1), 1, 65535).has_value() &&
                  server.find_first_of(" \t\r\n") == std::string::npos;
  if (ok) return absl::OkStatus();
  return Usage(absl::StrCat(source, " must be HOST:PORT (port 1-65535), not ", Quoted(server)));
}

absl::StatusOr<OutputFormat> ParseOutput(const std::string& value, const std::string& command,
                                         const std::vector<OutputFormat>& allowed) {
  std::vector<std::string> names;
  for (OutputFormat format : allowed) {
    names.emplace_back(OutputFormatName(format));
    if (value == OutputFormatName(format)) return format;
  }
  return Usage(absl::StrCat("-o must be one of ", absl::StrJoin(names, ", "), " for ", command, ", not ",
                            Quoted(value)));
}

absl::Status ParseHelp(const CommandArgs& args, Options& options) {
  if (args.operands.size() > 1) return Usage("help takes at most one command");
  if (!args.operands.empty()) {
    if (FindCommand(args.operands[0]) == nullptr) {
      return Usage(absl::StrCat("unknown command ", Quoted(args.operands[0])));
    }
    options.help_topic = args.operands[0];
  }
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& HelpCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "help",
      .command = Command::kHelp,
      .usage = "help [COMMAND]\n    this text, or one command's (also COMMAND --help)\n",
      .parse = ParseHelp,
      .access = NoModel,
  };
  return *spec;
}

std::string OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable: return "table";
    case OutputFormat::kWide: return "wide";
    case OutputFormat::kJson: return "json";
    case OutputFormat::kYaml: return "yaml";
  }
  return "";
}

std::string EntityKindName(EntityKind kind) {
  for (const auto& names : kKindNames) {
    if (names.kind == kind) return std::string(names.singular);
  }
  return "";
}

std::string EntityKindPlural(EntityKind kind) {
  for (const auto& names : kKindNames) {
    if (names.kind == kind) return std::string(names.plural);
  }
  return "";
}

std::optional<EntityKind> ParseEntityKind(std::string_view word) {
  for (const auto& names : kKindNames) {
    if (word == names.singular || word == names.plural) return names.kind;
  }
  return std::nullopt;
}

absl::StatusOr<Options> ParseCommandLine(const std::vector<std::string>& args, const EnvLookup& env) {
  // 1. Split flags from words; every flag known, none twice, values present.
  std::map<std::string, std::string> given;  // canonical flag -> value ("" for switches)
  std::vector<std::string> words;
  bool only_words = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_words || arg.size() < 2 || arg[0] != '-') {
      words.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_words = true;
      continue;
    }
    std::string name = arg;
    std::optional<std::string> value;
    if (arg.rfind("--", 0) == 0) {
      if (const size_t eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
      }
    } else if (arg.rfind("-o", 0) == 0 && arg.size() > 2) {  // -ojson, -o=json
      name = "-o";
      value = arg.substr(arg[2] == '=' ? 3 : 2);
    } else if (arg == "-h") {
      name = "--help";
    }
    if (name == "--output") name = "-o";
    auto flag = Flags().find(name);
    if (flag == Flags().end()) return Usage(absl::StrCat("unknown flag ", name));
    const bool takes_value = flag->second;
    if (!takes_value && value.has_value()) return Usage(absl::StrCat(name, " takes no value"));
    if (takes_value && !value.has_value()) {
      if (i + 1 >= args.size()) return Usage(absl::StrCat(name, " needs a value"));
      value = args[++i];
    }
    if (takes_value && value->empty()) return Usage(absl::StrCat(name, " needs a value"));
    if (!given.emplace(name, value.value_or("")).second) {
      return Usage(absl::StrCat(name, " is given twice"));
    }
  }

  // 2. The command and the flags it takes.
  Options options;
  if (given.count("--help")) {  // tectl --help, tectl drain --help
    options.command = Command::kHelp;
    if (!words.empty() && FindCommand(words[0]) != nullptr) options.help_topic = words[0];
    return options;
  }
  if (words.empty()) return Usage("no command");
  const std::string command_name = words[0];
  const CommandSpec* spec = FindCommand(command_name);
  if (spec == nullptr) return Usage(absl::StrCat("unknown command ", Quoted(command_name)));
  options.command = spec->command;
  for (const auto& [name, value] : given) {
    if (!TakesFlag(*spec, name)) return Usage(absl::StrCat(name, " is not a flag of ", command_name));
  }

  // 3. Operands and the command's own flags.
  const CommandArgs command_args(command_name, std::vector<std::string>(words.begin() + 1, words.end()), given);
  if (auto status = spec->parse(command_args, options); !status.ok()) return status;
  const ModelAccess access = spec->access(options);
  if (access == ModelAccess::kNone) return options;
  auto flag = [&command_args](const std::string& name) { return command_args.flag(name); };

  // 4. Output format.
  if (!spec->outputs.empty()) {
    options.output = spec->outputs.front();
    if (const std::string* output = flag("-o")) {
      auto format = ParseOutput(*output, command_name, spec->outputs);
      if (!format.ok()) return format.status();
      options.output = *format;
    }
  }

  // 5. Where the model is: a server or a store, not both; solve needs neither.
  const std::string* server = flag("--server");
  const std::string* store = flag("--store");
  if (access == ModelAccess::kLocalFiles) {
    if (server || store) {
      return Usage(absl::StrCat(command_name, " runs here, on files: it takes no --server or --store"));
    }
    return options;
  }
  if (server && store) return Usage("--server and --store are mutually exclusive");
  if (access == ModelAccess::kStore && !store) {
    return Usage(absl::StrCat(command_name, " works on a store directory offline: --store DIR is required"));
  }
  if (store) {
    for (const char* tls_flag : {"--ca", "--cert", "--key"}) {
      if (flag(tls_flag)) return Usage(absl::StrCat(tls_flag, " is for --server, not --store"));
    }
    if (access != ModelAccess::kServerOrStore && access != ModelAccess::kStore) {
      return Usage(absl::StrCat(command_name, " needs a running pathcomp: use --server"));
    }
    options.store_dir = *store;
    return options;
  }
  if (server) {
    if (auto status = CheckServer(*server, "--server"); !status.ok()) return status;
    options.server = *server;
  } else {
    options.server = env("GEODESIC_SERVER");
    if (options.server.empty()) {
      return Usage("--server HOST:PORT (or GEODESIC_SERVER) or --store DIR is required");
    }
    if (auto status = CheckServer(options.server, "GEODESIC_SERVER"); !status.ok()) return status;
  }
  const std::string* ca = flag("--ca");
  const std::string* cert = flag("--cert");
  const std::string* key = flag("--key");
  options.tls.ca_path = ca ? *ca : env("GEODESIC_CA");
  options.tls.cert_path = cert ? *cert : env("GEODESIC_CERT");
  options.tls.key_path = key ? *key : env("GEODESIC_KEY");
  if (options.tls.ca_path.empty() || options.tls.cert_path.empty() || options.tls.key_path.empty()) {
    return Usage("--server needs --ca, --cert and --key (or GEODESIC_CA, GEODESIC_CERT, GEODESIC_KEY)");
  }
  return options;
}

}  // namespace geodesic::cli
