#pragma once
// tectl's command line: the commands, their operands and flags, validated in
// full before anything runs, so a mistyped command changes nothing and says
// what was wrong. Pure: no I/O (the environment comes in as a function).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tls/credentials.h"

namespace geodesic::cli {

enum class OutputFormat { kTable, kWide, kJson, kYaml };

// "table", "wide", "json", "yaml".
std::string OutputFormatName(OutputFormat format);

// The entities tectl shows.
enum class EntityKind { kFacility, kNode, kLink, kFabric, kService, kWorkload, kIntent, kPlan };

// The singular name: "facility", "node", ... (as in the journal's changes).
std::string EntityKindName(EntityKind kind);
// The plural name: "facilities", "nodes", ...
std::string EntityKindPlural(EntityKind kind);
// Accepts the singular or the plural name ("link", "links"); nullopt otherwise.
std::optional<EntityKind> ParseEntityKind(std::string_view word);

enum class Command {
  kHelp, kGet, kDescribe, kImport, kExport, kJournal, kDrain, kUndrain, kSolve,
  kWorkload, kPin, kUnpin, kOverride, kWhatIf, kAudit, kExplain, kPlan, kEvents, kAuditLog, kCompletion,
  kDrill, kBackup, kRestore, kAutoDrain,
};

// Every command's name, as typed ("get", "audit-log", ...), in usage order.
std::vector<std::string> CommandNames();
// The flags one command takes besides the global ones (for completion).
std::vector<std::string> CommandFlags(const std::string& name);
// The usage of one command (its synopsis and what it does); "" for an unknown name.
std::string CommandUsage(const std::string& name);

// `tectl audit` exits with this when some workload depends on one facility.
inline constexpr int kExitDependencies = 3;
// `tectl drill run` exits with this when an expectation of the drill failed.
inline constexpr int kExitDrillFailed = 4;

// What `tectl solve` optimizes (pathcomp/solver/mcf_problem.h).
enum class SolveObjective { kMlu, kLatency, kTotalFlow };

// The journal entries `tectl journal` asks for at most, and by default.
inline constexpr uint32_t kMaxJournalLimit = 10'000;
inline constexpr uint32_t kDefaultJournalLimit = 100;

// A validated command line.
struct Options {
  Command command = Command::kHelp;

  // Where the model is. For every command but help exactly one is set.
  std::string server;     // HOST:PORT of a pathcomp replica (Operator API over mTLS)
  tls::TlsFiles tls;      // the operator's certificate, with `server`
  std::string store_dir;  // a pathcomp state directory, used offline

  // get, describe, drain, undrain: what to act on. `id` may be empty for get
  // (every entity of the kind) and for describe plan (the whole plan). For
  // plan, the site given as the id is moved to `facility`.
  EntityKind kind = EntityKind::kFacility;
  std::string id;
  std::string facility;  // get --facility (and the plan's site)
  std::string state;     // get --state up|degraded|down|unknown|drained (links)

  OutputFormat output = OutputFormat::kTable;

  // import: the file read; export: the file written ("" for stdout)
  std::string file;
  bool replace_workloads = false;
  bool dry_run = false;

  // journal
  uint64_t from_seq = 0;  // 0: the newest `limit` entries
  uint32_t limit = kDefaultJournalLimit;

  // drain, pin, override: why (kept with the intent); drain also plane
  // (kind facility with `plane` set), --force, --dry-run, --max-utilization
  std::string reason;
  std::optional<uint32_t> plane;
  bool force = false;
  double utilization_limit = 0;  // 0: the server's default (1.0)

  // Sub-commands: workload add|remove|list, plan history|diff, events watch.
  std::string subcommand;

  // workload add: from `file`, or one workload from flags (`id` and either
  // elephant or chain fields)
  std::string src, dst_prefix;  // elephant
  double gbps = 0;
  uint32_t priority = 0;
  std::string origin;  // chain
  std::vector<std::string> services;
  uint64_t budget_us = 0;
  std::string tenant;  // either kind; empty: the operators' own

  // pin WORKLOAD: a path (replica facility per call, for a chain) or a facility set
  std::vector<std::string> path, facilities;
  // override LINK: --metric N [--for SECONDS] | --clear
  uint32_t metric = 0;
  int64_t for_s = 0;  // 0: until removed
  bool clear = false;

  // whatif fail KIND ID...
  struct Failure {
    std::string kind;  // link, srlg, node, facility, plane
    std::string id;    // for a plane, its facility
    uint32_t plane = 0;
  };
  std::vector<Failure> failures;

  // plan diff A B
  uint64_t generation_a = 0, generation_b = 0;
  // events watch --count N (0: until interrupted)
  uint64_t count = 0;
  // completion SHELL; help COMMAND
  std::string shell, help_topic;
  // drill run FILE (`file`): the JSON report and SVG charts written to;
  // --live: on the real daemons, in `work_dir` ("" = a fresh temporary one);
  // --netns: in the network-namespace lab, left up until interrupted with
  // `keep`, re-planning only with `no_local_repair`
  std::string report_file, charts_dir;
  bool live = false;
  bool netns = false;
  bool keep = false;
  bool no_local_repair = false;
  std::string work_dir;

  // backup DIR: the directory written; restore --from DIR (into store_dir,
  // replacing a non-empty one only with `force`): the backup read
  std::string backup_dir;

  // solve (no server, no store: the solver runs here)
  std::string graph;    // any topology format import reads
  std::string demands;  // REPETITA demands for a .graph; "" = "<stem>.0000.demands" if present
  SolveObjective objective = SolveObjective::kMlu;
  double utilization_target = 0.8;  // --utilization-target (latency)
  double mlu_slack = 0.01;          // --mlu-slack (latency)
  double scale = 1;     // every demand multiplied by this
};

// Looks up an environment variable; "" when unset.
using EnvLookup = std::function<std::string(const char* name)>;

// The usage text printed by `tectl help` and after a usage error.
std::string UsageText();

// Parses `args` (without the program name). Flags may come before or after the
// command, as "--flag value" or "--flag=value" ("-ojson" too). GEODESIC_SERVER,
// GEODESIC_CA, GEODESIC_CERT and GEODESIC_KEY (read through `env`) stand in for
// the flags; --store beats GEODESIC_SERVER. InvalidArgument with a one-line
// message for any bad usage: unknown command, kind or flag, a flag the command
// does not take or a flag given twice, a missing or surplus operand, an id
// that is not an entity id, a number that is not one or is out of range, an
// output format the command does not print, --server with --store, neither.
[[nodiscard]] absl::StatusOr<Options> ParseCommandLine(const std::vector<std::string>& args,
                                                       const EnvLookup& env);

}  // namespace geodesic::cli
