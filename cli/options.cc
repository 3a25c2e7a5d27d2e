#include "cli/options.h"

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "state/entity_id.h"

namespace geodesic::cli {

const char kUsage[] =
    "usage: tectl [--server HOST:PORT --ca FILE --cert FILE --key FILE | --store DIR] COMMAND\n"
    "commands:\n"
    "  get KIND [ID] [--facility F] [-o table|wide|json|yaml]\n"
    "      KIND: facilities nodes links fabrics services workloads intents plan\n"
    "      (singular or plural; a fabric's ID is its facility, plan's is a site)\n"
    "  describe KIND ID [-o yaml|json]   every field of one entity, and what follows\n"
    "  import FILE [--replace-workloads] [--dry-run] [-o table|json|yaml]\n"
    "      FILE: .yaml/.yml/.json (project format), .graph (REPETITA, with its\n"
    "      .0000.demands beside it) or .graphml (Topology Zoo); needs the admin role\n"
    "  export [FILE]   the model's inventory in the project format (YAML), to FILE\n"
    "      or stdout: what `import` reads back (measured health is not exported)\n"
    "  journal [--from SEQ] [--limit N] [-o table|wide|json|yaml]   N: 1..10000, default 100\n"
    "  drain link|node|facility ID [--reason TEXT]   (--server only)\n"
    "  undrain link|node|facility ID                 (--server only)\n"
    "  solve --graph FILE [--demands FILE] [--objective mlu|total-flow] [--scale S]\n"
    "        [-o table|wide|json|yaml]   the elephant-flow allocation, offline (every\n"
    "      link up; FILE in any import format; S in (0, 1e6], default 1)\n"
    "  help\n"
    "where the model is (or the environment variable in brackets):\n"
    "  --server HOST:PORT [GEODESIC_SERVER]   a pathcomp replica, with the operator's\n"
    "  --ca FILE [GEODESIC_CA] --cert FILE [GEODESIC_CERT] --key FILE [GEODESIC_KEY]\n"
    "  --store DIR   a pathcomp state directory, offline: read even while pathcomp\n"
    "                runs; import only into a store no pathcomp has open\n"
    "exit codes: 0 ok, 1 the server or the store refused or failed, 2 bad usage\n";

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

struct CommandSpec {
  Command command;
  std::set<std::string> flags;        // besides the global ones
  std::vector<OutputFormat> outputs;  // the first is the default; empty: no -o
};

const std::map<std::string, CommandSpec>& Commands() {
  using F = OutputFormat;
  static const auto* commands = new std::map<std::string, CommandSpec>{
      {"help", {Command::kHelp, {}, {}}},
      {"get", {Command::kGet, {"--facility", "-o"}, {F::kTable, F::kWide, F::kJson, F::kYaml}}},
      {"describe", {Command::kDescribe, {"-o"}, {F::kYaml, F::kJson}}},
      {"import",
       {Command::kImport, {"--replace-workloads", "--dry-run", "-o"}, {F::kTable, F::kJson, F::kYaml}}},
      {"export", {Command::kExport, {}, {}}},
      {"journal",
       {Command::kJournal, {"--from", "--limit", "-o"}, {F::kTable, F::kWide, F::kJson, F::kYaml}}},
      {"drain", {Command::kDrain, {"--reason"}, {}}},
      {"solve",
       {Command::kSolve,
        {"--graph", "--demands", "--objective", "--scale", "-o"},
        {F::kTable, F::kWide, F::kJson, F::kYaml}}},
      {"undrain", {Command::kUndrain, {}, {}}},
  };
  return *commands;
}

// Flags and whether each takes a value. "--output" is an alias of "-o".
const std::map<std::string, bool>& Flags() {
  static const auto* flags = new std::map<std::string, bool>{
      {"--server", true},
      {"--store", true},
      {"--ca", true},
      {"--cert", true},
      {"--key", true},
      {"--facility", true},
      {"-o", true},
      {"--reason", true},
      {"--from", true},
      {"--limit", true},
      {"--graph", true},
      {"--demands", true},
      {"--objective", true},
      {"--scale", true},
      {"--replace-workloads", false},
      {"--dry-run", false},
      {"--help", false},
  };
  return *flags;
}

// Flags every command takes.
bool IsGlobalFlag(const std::string& name) {
  return name == "--server" || name == "--store" || name == "--ca" || name == "--cert" || name == "--key" ||
         name == "--help";
}

absl::Status Usage(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string Quoted(std::string_view text) { return absl::StrCat("\"", std::string(text), "\""); }

// A whole number in [min, max], digits only.
std::optional<uint64_t> ParseNumber(const std::string& text, uint64_t min, uint64_t max) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (value < min || value > max) return std::nullopt;
  return value;
}

absl::Status CheckId(const std::string& what, const std::string& id) {
  if (state::IsValidEntityId(id)) return absl::OkStatus();
  return Usage(
      absl::StrCat(what, " ", Quoted(id), " is not a valid id (ids match ", state::kEntityIdRule, ")"));
}

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

}  // namespace

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
  if (given.count("--help")) {
    options.command = Command::kHelp;
    return options;
  }
  if (words.empty()) return Usage("no command");
  const std::string command_name = words[0];
  auto spec_it = Commands().find(command_name);
  if (spec_it == Commands().end()) return Usage(absl::StrCat("unknown command ", Quoted(command_name)));
  const CommandSpec& spec = spec_it->second;
  options.command = spec.command;
  const std::vector<std::string> operands(words.begin() + 1, words.end());
  for (const auto& [name, value] : given) {
    if (!IsGlobalFlag(name) && !spec.flags.count(name)) {
      return Usage(absl::StrCat(name, " is not a flag of ", command_name));
    }
  }
  if (options.command == Command::kHelp) {
    if (!operands.empty()) return Usage("help takes no operands");
    return options;
  }

  // 3. Operands.
  auto flag = [&](const std::string& name) -> const std::string* {
    auto it = given.find(name);
    return it == given.end() ? nullptr : &it->second;
  };
  switch (options.command) {
    case Command::kGet:
    case Command::kDescribe: {
      if (operands.empty()) return Usage(absl::StrCat(command_name, " needs a kind"));
      auto kind = ParseEntityKind(operands[0]);
      if (!kind) return Usage(absl::StrCat("unknown kind ", Quoted(operands[0])));
      options.kind = *kind;
      if (operands.size() > 2) return Usage(absl::StrCat(command_name, " takes a kind and at most one id"));
      if (operands.size() == 2) options.id = operands[1];
      if (options.command == Command::kDescribe && options.id.empty() && options.kind != EntityKind::kPlan) {
        return Usage(absl::StrCat("describe needs the id of the ", EntityKindName(options.kind)));
      }
      if (!options.id.empty()) {
        const std::string what(options.kind == EntityKind::kPlan ? "site" : EntityKindName(options.kind));
        if (auto status = CheckId(what, options.id); !status.ok()) return status;
      }
      if (const std::string* facility = flag("--facility")) {
        if (auto status = CheckId("facility", *facility); !status.ok()) return status;
        if (options.kind == EntityKind::kIntent) return Usage("--facility does not apply to intents");
        if (!options.id.empty()) {
          return Usage(absl::StrCat("give ", options.kind == EntityKind::kPlan ? "the site" : "an id",
                                    " or --facility, not both"));
        }
        options.facility = *facility;
      }
      if (options.kind == EntityKind::kPlan && !options.id.empty()) {
        options.facility = std::exchange(options.id, "");  // a plan's "id" is a site
      }
      break;
    }
    case Command::kImport:
      if (operands.size() != 1) return Usage("import takes one file");
      options.file = operands[0];
      if (options.file.empty() || options.file.find_first_of("\r\n") != std::string::npos) {
        return Usage("the file name must be one non-empty line");
      }
      options.replace_workloads = flag("--replace-workloads") != nullptr;
      options.dry_run = flag("--dry-run") != nullptr;
      break;
    case Command::kExport:
      if (operands.size() > 1) return Usage("export takes at most one file");
      if (!operands.empty()) {
        options.file = operands[0];
        if (options.file.empty() || options.file.find_first_of("\r\n") != std::string::npos) {
          return Usage("the file name must be one non-empty line");
        }
      }
      break;
    case Command::kJournal:
      if (!operands.empty()) return Usage("journal takes no operands");
      if (const std::string* from = flag("--from")) {
        auto seq = ParseNumber(*from, 1, UINT64_MAX);
        if (!seq)
          return Usage(
              absl::StrCat("--from must be a journal seq (a whole number from 1), not ", Quoted(*from)));
        options.from_seq = *seq;
      }
      if (const std::string* limit = flag("--limit")) {
        auto n = ParseNumber(*limit, 1, kMaxJournalLimit);
        if (!n) {
          return Usage(absl::StrCat("--limit must be a whole number from 1 to ", kMaxJournalLimit, ", not ",
                                    Quoted(*limit)));
        }
        options.limit = static_cast<uint32_t>(*n);
      }
      break;
    case Command::kDrain:
    case Command::kUndrain: {
      if (operands.size() != 2) return Usage(absl::StrCat(command_name, " takes a kind and an id"));
      auto kind = ParseEntityKind(operands[0]);
      if (!kind ||
          (*kind != EntityKind::kLink && *kind != EntityKind::kNode && *kind != EntityKind::kFacility)) {
        return Usage(
            absl::StrCat("can ", command_name, " a link, node or facility, not ", Quoted(operands[0])));
      }
      options.kind = *kind;
      options.id = operands[1];
      if (auto status = CheckId(std::string(EntityKindName(*kind)), options.id); !status.ok()) return status;
      if (const std::string* reason = flag("--reason")) {
        if (reason->size() > 1024 || reason->find_first_of("\r\n") != std::string::npos) {
          return Usage("--reason must be one line of at most 1024 characters");
        }
        options.reason = *reason;
      }
      break;
    }
    case Command::kSolve: {
      if (!operands.empty()) return Usage("solve takes no operands: give --graph FILE");
      const std::string* graph = flag("--graph");
      if (graph == nullptr) return Usage("solve needs --graph FILE");
      options.graph = *graph;
      if (const std::string* demands = flag("--demands")) options.demands = *demands;
      for (const std::string* file : {&options.graph, &options.demands}) {
        if (file->find_first_of("\r\n") != std::string::npos) {
          return Usage("file names must be one line");
        }
      }
      if (const std::string* objective = flag("--objective")) {
        if (*objective == "mlu") {
          options.objective = SolveObjective::kMlu;
        } else if (*objective == "total-flow") {
          options.objective = SolveObjective::kTotalFlow;
        } else {
          return Usage(absl::StrCat("--objective must be mlu or total-flow, not ", Quoted(*objective)));
        }
      }
      if (const std::string* scale = flag("--scale")) {
        double value = 0;
        if (!absl::SimpleAtod(*scale, &value) || !std::isfinite(value) || value <= 0 || value > 1e6) {
          return Usage(absl::StrCat("--scale must be a number in (0, 1e6], not ", Quoted(*scale)));
        }
        options.scale = value;
      }
      break;
    }
    case Command::kHelp: break;
  }

  // 4. Output format.
  if (!spec.outputs.empty()) {
    options.output = spec.outputs.front();
    if (const std::string* output = flag("-o")) {
      auto format = ParseOutput(*output, command_name, spec.outputs);
      if (!format.ok()) return format.status();
      options.output = *format;
    }
  }

  // 5. Where the model is: a server or a store, not both; solve needs neither.
  const std::string* server = flag("--server");
  const std::string* store = flag("--store");
  if (options.command == Command::kSolve) {
    if (server || store) return Usage("solve runs here, on files: it takes no --server or --store");
    return options;
  }
  if (server && store) return Usage("--server and --store are mutually exclusive");
  if (store) {
    for (const char* tls_flag : {"--ca", "--cert", "--key"}) {
      if (flag(tls_flag)) return Usage(absl::StrCat(tls_flag, " is for --server, not --store"));
    }
    if (options.command == Command::kDrain || options.command == Command::kUndrain) {
      return Usage(
          absl::StrCat(command_name, " changes intents, which only a running pathcomp does: use --server"));
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
