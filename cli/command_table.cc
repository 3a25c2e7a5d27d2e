#include "cli/command_table.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace geodesic::cli {

const std::vector<CommandInfo>& CommandTable() {
  using F = OutputFormat;
  const std::vector<OutputFormat> all = {F::kTable, F::kWide, F::kJson, F::kYaml};
  const std::vector<OutputFormat> structured = {F::kTable, F::kJson, F::kYaml};
  static const auto* table = new std::vector<CommandInfo>{
      {"get", {Command::kGet, {"--facility", "--state", "-o"}, all},
       "get KIND [ID] [--facility F] [--state S] [-o table|wide|json|yaml]\n"
       "    KIND: facilities nodes links fabrics services workloads intents plan (singular\n"
       "    or plural; a fabric's ID is its facility, plan's is a site). --state (links):\n"
       "    up, degraded, down, unknown or drained\n"},
      {"describe", {Command::kDescribe, {"-o"}, {F::kYaml, F::kJson}},
       "describe KIND ID [-o yaml|json]\n    every field of one entity, and what follows from it\n"},
      {"drain", {Command::kDrain, {"--reason", "--dry-run", "--force", "--max-utilization", "-o"}, structured},
       "drain link|node|facility|plane ID [--reason TEXT] [--dry-run] [--force] [--max-utilization U]\n"
       "    takes traffic off it. A plane's ID is FACILITY:N. First shows what would move;\n"
       "    refused when a workload would lose its last path or a link would go over U\n"
       "    (default 1 = capacity) unless --force (admin role, with --reason)\n"},
      {"undrain", {Command::kUndrain, {}, {}}, "undrain link|node|facility|plane ID\n    removes the drain\n"},
      {"workload",
       {Command::kWorkload,
        {"--file", "--src", "--to", "--gbps", "--priority", "--origin", "--services", "--budget-ms", "-o"},
        all},
       "workload add ID --src F --to PREFIX --gbps G [--priority 0-7]     an elephant flow\n"
       "workload add ID --origin F --services S1,S2,... --budget-ms MS     an agent chain\n"
       "workload add --file FILE     every workload of a file (`workloads:` as in import)\n"
       "workload remove ID\n"
       "workload list [-o table|wide|json|yaml]\n"},
      {"pin", {Command::kPin, {"--path", "--facilities", "--reason"}, {}},
       "pin CHAIN (--path F1,F2,... | --facilities F1,F2,...) [--reason TEXT]\n"
       "    keeps an agent chain on these replica facilities (one per call, in order) or\n"
       "    within a facility set (replicas and transit)\n"},
      {"unpin", {Command::kUnpin, {}, {}}, "unpin CHAIN\n    removes the pin\n"},
      {"override", {Command::kOverride, {"--metric", "--for", "--clear", "--reason"}, {}},
       "override LINK --metric N [--for DURATION] [--reason TEXT] | override LINK --clear\n"
       "    replaces the link's metric (1-65535; path cost scales by it over the inventory\n"
       "    metric) until it expires (DURATION: 90s, 30m, 4h, 2d); admin role\n"},
      {"whatif", {Command::kWhatIf, {"--max-utilization", "-o"}, structured},
       "whatif fail KIND ID [KIND ID ...] [--max-utilization U] [-o table|json|yaml]\n"
       "    KIND: link srlg node plane facility. The impact, changing nothing: workloads\n"
       "    that move or are cut, chains over budget, links over U, routes changed\n"},
      {"audit", {Command::kAudit, {"-o"}, structured},
       "audit [-o table|json|yaml]\n"
       "    every single-facility dependency with its reason; exits 3 when there is any\n"},
      {"explain", {Command::kExplain, {"-o"}, structured},
       "explain chain ID [-o table|json|yaml]\n"
       "    each hop's replica, path, latency and share of the total; the slowest hop;\n"
       "    the backup for each facility the chain touches\n"},
      {"plan", {Command::kPlan, {"--limit", "-o"}, structured},
       "plan history [--limit N] [-o table|json|yaml]    the plans kept (newest 100)\n"
       "plan diff A B [-o table|json|yaml]    routes and workloads that changed from\n"
       "    generation A to B, and why each workload moved\n"},
      {"events", {Command::kEvents, {"--count", "-o"}, {F::kTable, F::kJson}},
       "events watch [--count N] [-o table|json]\n"
       "    health, plan and intent changes as they happen (N events, or until ^C)\n"},
      {"audit-log", {Command::kAuditLog, {"--from", "--limit", "-o"}, all},
       "audit-log [--from SEQ] [--limit N] [-o table|wide|json|yaml]\n"
       "    who asked for which change, when, and the result (N: 1..10000, default 100)\n"},
      {"import",
       {Command::kImport, {"--replace-workloads", "--dry-run", "-o"}, structured},
       "import FILE [--replace-workloads] [--dry-run] [-o table|json|yaml]\n"
       "    FILE: .yaml/.yml/.json (project format), .graph (REPETITA, with its\n"
       "    .0000.demands beside it) or .graphml (Topology Zoo); needs the admin role\n"},
      {"export", {Command::kExport, {}, {}},
       "export [FILE]\n    the model's inventory in the project format (YAML), to FILE or stdout\n"},
      {"journal", {Command::kJournal, {"--from", "--limit", "-o"}, all},
       "journal [--from SEQ] [--limit N] [-o table|wide|json|yaml]\n"
       "    the store's committed changes with their causes (N: 1..10000, default 100)\n"},
      {"solve",
       {Command::kSolve, {"--graph", "--demands", "--objective", "--scale", "-o"}, all},
       "solve --graph FILE [--demands FILE] [--objective mlu|total-flow] [--scale S] [-o ...]\n"
       "    the elephant-flow allocation, offline (every link up; FILE in any import\n"
       "    format; S in (0, 1e6], default 1)\n"},
      {"drill", {Command::kDrill, {"--report", "--charts", "--live", "--work-dir", "-o"}, structured},
       "drill run FILE [--live [--work-dir DIR]] [--report FILE.json] [--charts DIR] [-o table|json|yaml]\n"
       "    runs a failure drill (sim/drills/*.yaml) on the simulator with pathcomp's\n"
       "    planning, or --live on real daemons started on loopback (pathcomp, agents,\n"
       "    routerds, FRR); exits 4 when an expectation fails, saying which and why\n"},
      {"completion", {Command::kCompletion, {}, {}},
       "completion bash\n    a bash completion script: source <(tectl completion bash)\n"},
      {"help", {Command::kHelp, {}, {}}, "help [COMMAND]\n    this text, or one command's (also COMMAND --help)\n"},
  };
  return *table;
}

const CommandInfo* FindCommand(const std::string& name) {
  for (const CommandInfo& info : CommandTable()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

// The end of the general usage: where the model is, roles, exit codes.
constexpr std::string_view kWhere =
    "where the model is (or the environment variable in brackets):\n"
    "  --server HOST:PORT [GEODESIC_SERVER]   a pathcomp replica, with the operator's\n"
    "  --ca FILE [GEODESIC_CA] --cert FILE [GEODESIC_CERT] --key FILE [GEODESIC_KEY]\n"
    "  --store DIR   a pathcomp state directory, offline (get, describe, export, journal,\n"
    "                import): read even while pathcomp runs; import only into a store\n"
    "                no pathcomp has open\n"
    "roles (from the operator's certificate): viewer reads; operator also drains,\n"
    "  changes workloads and pins, runs what-ifs; admin also imports, overrides\n"
    "  metrics and forces drains\n"
    "exit codes: 0 ok, 1 the server or the store refused or failed, 2 bad usage,\n"
    "  3 audit found single-facility dependencies, 4 a drill expectation failed\n";

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
      {"--state", true},
      {"--max-utilization", true},
      {"--file", true},
      {"--src", true},
      {"--to", true},
      {"--gbps", true},
      {"--priority", true},
      {"--origin", true},
      {"--services", true},
      {"--budget-ms", true},
      {"--path", true},
      {"--facilities", true},
      {"--metric", true},
      {"--for", true},
      {"--count", true},
      {"--report", true},
      {"--charts", true},
      {"--replace-workloads", false},
      {"--dry-run", false},
      {"--force", false},
      {"--clear", false},
      {"--live", false},
      {"--work-dir", true},
      {"--help", false},
  };
  return *flags;
}

bool IsGlobalFlag(const std::string& name) {
  return name == "--server" || name == "--store" || name == "--ca" || name == "--cert" || name == "--key" ||
         name == "--help";
}

std::vector<std::string> CommandNames() {
  std::vector<std::string> names;
  for (const CommandInfo& info : CommandTable()) names.push_back(info.name);
  return names;
}

std::vector<std::string> CommandFlags(const std::string& name) {
  const CommandInfo* info = FindCommand(name);
  if (info == nullptr) return {};
  return {info->spec.flags.begin(), info->spec.flags.end()};
}

std::string CommandUsage(const std::string& name) {
  const CommandInfo* info = FindCommand(name);
  if (info == nullptr) return "";
  std::string usage;
  for (const std::string& line : std::vector<std::string>(absl::StrSplit(info->usage, '\n', absl::SkipEmpty()))) {
    absl::StrAppend(&usage, line.rfind("    ", 0) == 0 ? "  " : "  tectl ", line, "\n");
  }
  return usage;
}

std::string UsageText() {
  std::string text = "usage: tectl [--server HOST:PORT --ca FILE --cert FILE --key FILE | --store DIR] COMMAND\ncommands:\n";
  for (const CommandInfo& info : CommandTable()) absl::StrAppend(&text, CommandUsage(info.name));
  absl::StrAppend(&text, std::string(kWhere));
  return text;
}

}  // namespace geodesic::cli
