#include "cli/options.h"

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/command_table.h"
#include "entity/entity_id.h"

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
  if (entity::IsValidEntityId(id)) return absl::OkStatus();
  return Usage(
      absl::StrCat(what, " ", Quoted(id), " is not a valid id (ids match ", entity::kEntityIdRule, ")"));
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

absl::Status ParseReason(const std::string* reason, Options& options) {
  if (reason == nullptr) return absl::OkStatus();
  if (reason->size() > 1024 || reason->find_first_of("\r\n") != std::string::npos) {
    return Usage("--reason must be one line of at most 1024 characters");
  }
  options.reason = *reason;
  return absl::OkStatus();
}

absl::Status ParseUtilizationLimit(const std::string* limit, Options& options) {
  if (limit == nullptr) return absl::OkStatus();
  double value = 0;
  if (!absl::SimpleAtod(*limit, &value) || !std::isfinite(value) || value <= 0 || value > 10) {
    return Usage(absl::StrCat("--max-utilization must be a number in (0, 10] (1 = a link at capacity), not ",
                              Quoted(*limit)));
  }
  options.utilization_limit = value;
  return absl::OkStatus();
}

// FACILITY:N, N a plane number.
absl::StatusOr<std::pair<std::string, uint32_t>> ParsePlane(const std::string& text) {
  const size_t colon = text.rfind(':');
  std::optional<uint64_t> plane;
  if (colon != std::string::npos) plane = ParseNumber(text.substr(colon + 1), 0, 1023);
  if (!plane) return Usage(absl::StrCat("a plane is FACILITY:N (N from 0), not ", Quoted(text)));
  std::string facility = text.substr(0, colon);
  if (auto status = CheckId("facility", facility); !status.ok()) return status;
  return std::make_pair(std::move(facility), static_cast<uint32_t>(*plane));
}

// "a,b,c": ids, none empty; none twice unless `repeats` (a path, a chain's calls).
absl::StatusOr<std::vector<std::string>> ParseIdList(const std::string& flag_name, const std::string& text,
                                                     bool repeats) {
  std::vector<std::string> ids = absl::StrSplit(text, ',');
  std::set<std::string> seen;
  for (const std::string& id : ids) {
    if (id.empty()) return Usage(absl::StrCat(flag_name, " is a comma-separated list of ids, not ", Quoted(text)));
    if (auto status = CheckId(flag_name.substr(2), id); !status.ok()) return status;
    if (!repeats && !seen.insert(id).second) {
      return Usage(absl::StrCat(flag_name, " names ", id, " twice"));
    }
  }
  if (ids.size() > 64) return Usage(absl::StrCat(flag_name, " takes at most 64 ids"));
  return ids;
}

// 90s, 30m, 4h, 2d: seconds, at most a year.
absl::StatusOr<int64_t> ParseDuration(const std::string& text) {
  const std::map<char, int64_t> units = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
  auto unit = text.empty() ? units.end() : units.find(text.back());
  std::optional<uint64_t> count;
  if (unit != units.end()) count = ParseNumber(text.substr(0, text.size() - 1), 1, 366 * 86400);
  if (!count || static_cast<int64_t>(*count) * unit->second > 366 * 86400) {
    return Usage(absl::StrCat("--for is a duration like 90s, 30m, 4h or 2d (at most a year), not ", Quoted(text)));
  }
  return static_cast<int64_t>(*count) * unit->second;
}

absl::StatusOr<Options::Failure> ParseFailure(const std::string& kind, const std::string& id) {
  Options::Failure failure;
  failure.kind = kind;
  if (kind == "plane") {
    auto plane = ParsePlane(id);
    if (!plane.ok()) return plane.status();
    failure.id = plane->first;
    failure.plane = plane->second;
    return failure;
  }
  if (kind != "link" && kind != "srlg" && kind != "node" && kind != "facility") {
    return Usage(absl::StrCat("whatif fails a link, srlg, node, plane or facility, not ", Quoted(kind)));
  }
  if (auto status = CheckId(kind, id); !status.ok()) return status;
  failure.id = id;
  return failure;
}

using FlagLookup = std::function<const std::string*(const std::string&)>;

absl::Status ParseWorkloadOperands(const std::vector<std::string>& operands, const FlagLookup& flag,
                                   Options& options) {
  static const std::vector<std::string> kAddFlags = {"--file", "--src", "--to", "--gbps", "--priority",
                                                     "--origin", "--services", "--budget-ms"};
  if (operands.empty() || (operands[0] != "add" && operands[0] != "remove" && operands[0] != "list")) {
    return Usage("workload takes add, remove or list");
  }
  options.subcommand = operands[0];
  if (options.subcommand != "add") {
    for (const std::string& name : kAddFlags) {
      if (flag(name)) return Usage(absl::StrCat(name, " is for workload add"));
    }
    if (options.subcommand == "list") {
      if (operands.size() != 1) return Usage("workload list takes no operands");
      options.kind = EntityKind::kWorkload;
      return absl::OkStatus();
    }
    if (flag("-o")) return Usage("-o is for workload list");
    if (operands.size() != 2) return Usage("workload remove takes one id");
    options.id = operands[1];
    return CheckId("workload", options.id);
  }
  if (flag("-o")) return Usage("-o is for workload list");
  if (const std::string* file = flag("--file")) {
    if (operands.size() != 1) return Usage("workload add --file takes no id: the file has them");
    for (const std::string& name : kAddFlags) {
      if (name != "--file" && flag(name)) return Usage(absl::StrCat(name, " does not go with --file"));
    }
    if (file->find_first_of("\r\n") != std::string::npos) return Usage("the file name must be one line");
    options.file = *file;
    return absl::OkStatus();
  }
  if (operands.size() != 2) return Usage("workload add takes one id (or --file FILE)");
  options.id = operands[1];
  if (auto status = CheckId("workload", options.id); !status.ok()) return status;
  const bool elephant = flag("--src") || flag("--to") || flag("--gbps") || flag("--priority");
  const bool chain = flag("--origin") || flag("--services") || flag("--budget-ms");
  if (elephant == chain) {
    return Usage("workload add takes an elephant flow (--src --to --gbps) or a chain (--origin --services --budget-ms)");
  }
  if (elephant) {
    if (!flag("--src") || !flag("--to") || !flag("--gbps")) return Usage("an elephant flow needs --src, --to and --gbps");
    options.src = *flag("--src");
    if (auto status = CheckId("facility", options.src); !status.ok()) return status;
    options.dst_prefix = *flag("--to");
    double gbps = 0;
    if (!absl::SimpleAtod(*flag("--gbps"), &gbps) || !std::isfinite(gbps) || gbps <= 0 || gbps > 1e6) {
      return Usage(absl::StrCat("--gbps must be a number in (0, 1e6], not ", Quoted(*flag("--gbps"))));
    }
    options.gbps = gbps;
    if (const std::string* priority = flag("--priority")) {
      auto value = ParseNumber(*priority, 0, 7);
      if (!value) return Usage(absl::StrCat("--priority must be 0-7 (0 = highest), not ", Quoted(*priority)));
      options.priority = static_cast<uint32_t>(*value);
    }
    return absl::OkStatus();
  }
  if (!flag("--origin") || !flag("--services") || !flag("--budget-ms")) {
    return Usage("an agent chain needs --origin, --services and --budget-ms");
  }
  options.origin = *flag("--origin");
  if (auto status = CheckId("facility", options.origin); !status.ok()) return status;
  auto services = ParseIdList("--services", *flag("--services"), /*repeats=*/true);
  if (!services.ok()) return services.status();
  options.services = *std::move(services);
  auto budget = ParseNumber(*flag("--budget-ms"), 1, 60'000);
  if (!budget) return Usage(absl::StrCat("--budget-ms must be a whole number from 1 to 60000, not ",
                                         Quoted(*flag("--budget-ms"))));
  options.budget_us = *budget * 1000;
  return absl::OkStatus();
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
  if (given.count("--help")) {  // tectl --help, tectl drain --help
    options.command = Command::kHelp;
    if (!words.empty() && FindCommand(words[0]) != nullptr) options.help_topic = words[0];
    return options;
  }
  if (words.empty()) return Usage("no command");
  const std::string command_name = words[0];
  const CommandInfo* info = FindCommand(command_name);
  if (info == nullptr) return Usage(absl::StrCat("unknown command ", Quoted(command_name)));
  const CommandSpec& spec = info->spec;
  options.command = spec.command;
  const std::vector<std::string> operands(words.begin() + 1, words.end());
  for (const auto& [name, value] : given) {
    if (!IsGlobalFlag(name) && !spec.flags.count(name)) {
      return Usage(absl::StrCat(name, " is not a flag of ", command_name));
    }
  }
  if (options.command == Command::kHelp) {
    if (operands.size() > 1) return Usage("help takes at most one command");
    if (!operands.empty()) {
      if (FindCommand(operands[0]) == nullptr) return Usage(absl::StrCat("unknown command ", Quoted(operands[0])));
      options.help_topic = operands[0];
    }
    return options;
  }
  if (options.command == Command::kCompletion) {
    if (operands.size() != 1 || operands[0] != "bash") return Usage("completion takes one shell: bash");
    options.shell = operands[0];
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
      if (const std::string* state = flag("--state")) {
        if (options.kind != EntityKind::kLink || options.command != Command::kGet) {
          return Usage("--state is for get links");
        }
        static const std::set<std::string> kStates = {"up", "degraded", "down", "unknown", "drained"};
        if (!kStates.count(*state)) {
          return Usage(absl::StrCat("--state must be up, degraded, down, unknown or drained, not ", Quoted(*state)));
        }
        options.state = *state;
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
    case Command::kAuditLog:
      if (!operands.empty()) return Usage(absl::StrCat(command_name, " takes no operands"));
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
      if (operands[0] == "plane") {
        auto plane = ParsePlane(operands[1]);
        if (!plane.ok()) return plane.status();
        options.kind = EntityKind::kFacility;
        options.id = plane->first;
        options.plane = plane->second;
      } else {
        auto kind = ParseEntityKind(operands[0]);
        if (!kind ||
            (*kind != EntityKind::kLink && *kind != EntityKind::kNode && *kind != EntityKind::kFacility)) {
          return Usage(absl::StrCat("can ", command_name, " a link, node, facility or plane, not ",
                                    Quoted(operands[0])));
        }
        options.kind = *kind;
        options.id = operands[1];
        if (auto status = CheckId(std::string(EntityKindName(*kind)), options.id); !status.ok()) return status;
      }
      if (auto status = ParseReason(flag("--reason"), options); !status.ok()) return status;
      options.dry_run = flag("--dry-run") != nullptr;
      options.force = flag("--force") != nullptr;
      if (options.force && options.dry_run) return Usage("--force and --dry-run do not go together");
      if (options.force && options.reason.empty()) return Usage("--force needs a --reason");
      if (auto status = ParseUtilizationLimit(flag("--max-utilization"), options); !status.ok()) return status;
      break;
    }
    case Command::kWorkload:
      if (auto status = ParseWorkloadOperands(operands, flag, options); !status.ok()) return status;
      break;
    case Command::kPin:
    case Command::kUnpin: {
      if (operands.size() != 1) return Usage(absl::StrCat(command_name, " takes one chain id"));
      options.id = operands[0];
      if (auto status = CheckId("workload", options.id); !status.ok()) return status;
      if (options.command == Command::kUnpin) break;
      const std::string* path = flag("--path");
      const std::string* facilities = flag("--facilities");
      if ((path == nullptr) == (facilities == nullptr)) return Usage("pin takes --path or --facilities (one of them)");
      auto list = ParseIdList(path ? "--path" : "--facilities", path ? *path : *facilities, /*repeats=*/path != nullptr);
      if (!list.ok()) return list.status();
      (path ? options.path : options.facilities) = *std::move(list);
      if (auto status = ParseReason(flag("--reason"), options); !status.ok()) return status;
      break;
    }
    case Command::kOverride: {
      if (operands.size() != 1) return Usage("override takes one link id");
      options.id = operands[0];
      if (auto status = CheckId("link", options.id); !status.ok()) return status;
      options.clear = flag("--clear") != nullptr;
      const std::string* metric = flag("--metric");
      if (options.clear) {
        if (metric || flag("--for") || flag("--reason")) return Usage("--clear takes no --metric, --for or --reason");
        break;
      }
      if (metric == nullptr) return Usage("override needs --metric N (or --clear)");
      auto value = ParseNumber(*metric, 1, 65535);
      if (!value) return Usage(absl::StrCat("--metric must be a whole number from 1 to 65535, not ", Quoted(*metric)));
      options.metric = static_cast<uint32_t>(*value);
      if (const std::string* duration = flag("--for")) {
        auto seconds = ParseDuration(*duration);
        if (!seconds.ok()) return seconds.status();
        options.for_s = *seconds;
      }
      if (auto status = ParseReason(flag("--reason"), options); !status.ok()) return status;
      break;
    }
    case Command::kWhatIf: {
      if (operands.empty() || operands[0] != "fail") return Usage("whatif takes: fail KIND ID [KIND ID ...]");
      if (operands.size() < 3 || operands.size() % 2 != 1) return Usage("whatif fail takes KIND ID pairs");
      for (size_t i = 1; i + 1 < operands.size(); i += 2) {
        auto failure = ParseFailure(operands[i], operands[i + 1]);
        if (!failure.ok()) return failure.status();
        options.failures.push_back(*std::move(failure));
      }
      if (options.failures.size() > 64) return Usage("whatif fail takes at most 64 failures");
      if (auto status = ParseUtilizationLimit(flag("--max-utilization"), options); !status.ok()) return status;
      break;
    }
    case Command::kAudit:
      if (!operands.empty()) return Usage("audit takes no operands");
      break;
    case Command::kExplain:
      if (operands.size() != 2 || operands[0] != "chain") return Usage("explain takes: chain ID");
      options.id = operands[1];
      if (auto status = CheckId("workload", options.id); !status.ok()) return status;
      break;
    case Command::kPlan:
      if (operands.empty() || (operands[0] != "history" && operands[0] != "diff")) {
        return Usage("plan takes history or diff A B");
      }
      options.subcommand = operands[0];
      if (options.subcommand == "history") {
        if (operands.size() != 1) return Usage("plan history takes no operands");
        if (const std::string* limit = flag("--limit")) {
          auto n = ParseNumber(*limit, 1, 100);
          if (!n) return Usage(absl::StrCat("--limit must be a whole number from 1 to 100, not ", Quoted(*limit)));
          options.limit = static_cast<uint32_t>(*n);
        } else {
          options.limit = 0;  // every plan kept
        }
      } else {
        if (flag("--limit")) return Usage("--limit is for plan history");
        if (operands.size() != 3) return Usage("plan diff takes two generations: A B");
        auto a = ParseNumber(operands[1], 1, UINT64_MAX);
        auto b = ParseNumber(operands[2], 1, UINT64_MAX);
        if (!a || !b) return Usage("plan diff takes two plan generations (whole numbers from 1)");
        options.generation_a = *a;
        options.generation_b = *b;
      }
      break;
    case Command::kEvents:
      if (operands.size() != 1 || operands[0] != "watch") return Usage("events takes: watch");
      options.subcommand = "watch";
      if (const std::string* count = flag("--count")) {
        auto n = ParseNumber(*count, 1, 1'000'000);
        if (!n) return Usage(absl::StrCat("--count must be a whole number from 1 to 1000000, not ", Quoted(*count)));
        options.count = *n;
      }
      break;

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
    case Command::kDrill: {
      if (operands.size() != 2 || operands[0] != "run") return Usage("drill takes: run FILE");
      options.subcommand = "run";
      options.file = operands[1];
      for (const std::string* path : {static_cast<const std::string*>(&options.file), flag("--report"), flag("--charts")}) {
        if (path != nullptr && path->find_first_of("\r\n") != std::string::npos) {
          return Usage("file names must be one line");
        }
      }
      if (const std::string* report = flag("--report")) options.report_file = *report;
      if (const std::string* charts = flag("--charts")) options.charts_dir = *charts;
      options.live = flag("--live") != nullptr;
      if (const std::string* work_dir = flag("--work-dir")) {
        if (!options.live) return Usage("--work-dir is for --live");
        if (work_dir->find_first_of("\r\n") != std::string::npos) return Usage("file names must be one line");
        options.work_dir = *work_dir;
      }
      break;
    }
    case Command::kHelp:
    case Command::kCompletion: break;
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
  if (options.command == Command::kSolve || options.command == Command::kDrill) {
    if (server || store) {
      return Usage(absl::StrCat(command_name, " runs here, on files: it takes no --server or --store"));
    }
    return options;
  }
  if (server && store) return Usage("--server and --store are mutually exclusive");
  if (store) {
    for (const char* tls_flag : {"--ca", "--cert", "--key"}) {
      if (flag(tls_flag)) return Usage(absl::StrCat(tls_flag, " is for --server, not --store"));
    }
    const bool store_reads = options.command == Command::kGet || options.command == Command::kDescribe ||
                             options.command == Command::kExport || options.command == Command::kJournal ||
                             options.command == Command::kImport ||
                             (options.command == Command::kWorkload && options.subcommand == "list");
    if (!store_reads) {
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
