// tectl: the operator CLI for Geodesic traffic engineering (DESIGN §1).
//
//   tectl [where] COMMAND ...   (tectl help lists every command; tectl COMMAND --help one)
//
//   reads:    get, describe, export, journal, plan history|diff, explain chain,
//             audit, events watch, audit-log, whatif fail (changes nothing)
//   changes:  drain/undrain (pre-checked), workload add|remove, pin/unpin,
//             override, import
//   store:    backup (from a running pathcomp), restore (offline, --store)
//   offline:  solve, drill run, completion
//
// Where the model is (or the environment variable in brackets):
//   --server HOST:PORT [GEODESIC_SERVER]   a pathcomp replica's Operator API, over
//   --ca FILE [GEODESIC_CA] --cert FILE [GEODESIC_CERT] --key FILE [GEODESIC_KEY]
//                                           mTLS with the operator's certificate
//   --store DIR                             a pathcomp state directory, offline:
//                                           read-only beside a running pathcomp;
//                                           import only when none has it open
// Exit codes: 0 ok, 1 the server or the store refused or failed, 2 bad usage
// (with a one-line error and the command's usage), 3 audit found single-facility
// dependencies, 4 a drill expectation failed.
//
// Flag parsing is cli/options.h; each command is one file (cli/*_command.cc)
// reading through cli/model_source.h, which answers alike online and offline.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/operator_client.h"
#include "cli/options.h"
#include "cli/output.h"
#include "daemon/version.h"
#include "tls/credentials.h"

namespace geodesic::cli {
namespace {

// The one-line error, then the usage of the command the line names (the
// first word that is one), or the general synopsis.
int UsageError(const std::string& message, const std::vector<std::string>& args) {
  std::string usage;
  for (const std::string& arg : args) {
    if (usage.empty()) usage = CommandUsage(arg);
  }
  if (usage.empty()) {
    usage = "  tectl [--server HOST:PORT --ca FILE --cert FILE --key FILE | --store DIR] COMMAND ...\n";
  }
  std::fprintf(stderr, "tectl: %s\nusage:\n%s(tectl help lists every command and the exit codes)\n",
               message.c_str(), usage.c_str());
  return 2;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

int Main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--version") {
    return std::printf("tectl %s\n", std::string(daemon::Version()).c_str()), 0;
  }
  auto options = ParseCommandLine(args, Env);
  if (!options.ok()) return UsageError(std::string(options.status().message()), args);
  if (options->command == Command::kHelp) {
    const std::string text = options->help_topic.empty()
                                 ? UsageText()
                                 : absl::StrCat("usage:\n", CommandUsage(options->help_topic));
    return std::printf("%s", text.c_str()), 0;
  }
  if (options->command == Command::kSolve) return RunSolve(*options);
  if (options->command == Command::kCompletion) return RunCompletion(*options);
  if (options->command == Command::kDrill) return RunDrill(*options);
  if (options->command == Command::kRestore) return RunRestore(*options);

  std::shared_ptr<v1::Operator::Stub> stub;
  ModelSourcePtr source;
  if (!options->server.empty()) {
    if (auto status = tls::ValidateTlsFiles(options->tls); !status.ok()) {
      return UsageError(std::string(status.message()), args);
    }
    stub = ConnectOperator(options->server, options->tls);
    source = NewGrpcModelSource(stub, options->server);
  }
  switch (options->command) {
    case Command::kImport: return RunImport(*options, stub.get());
    case Command::kBackup: return RunBackup(*options);
    case Command::kDrain:
    case Command::kUndrain: return RunDrain(*options, *stub);
    case Command::kAutoDrain: return RunAutoDrain(*options, *stub);
    case Command::kWorkload:
      if (options->subcommand != "list") return RunWorkload(*options, *stub);
      break;  // list: get workloads
    case Command::kPin:
    case Command::kUnpin: return RunPin(*options, *stub);
    case Command::kOverride: return RunOverride(*options, *stub);
    case Command::kWhatIf: return RunWhatIf(*options, *stub);
    case Command::kAudit: return RunAudit(*options, *stub);
    case Command::kExplain: return RunExplain(*options, *stub);
    case Command::kPlan: return RunPlan(*options, *stub);
    case Command::kEvents: return RunEvents(*options, *stub);
    case Command::kAuditLog: return RunAuditLog(*options, *stub);
    default: break;
  }
  if (source == nullptr) {
    auto opened = OpenStoreModelSource(options->store_dir);
    if (!opened.ok()) return PrintError(opened.status());
    source = *std::move(opened);
  }
  switch (options->command) {
    case Command::kGet:
    case Command::kWorkload: return RunGet(*options, *source);  // workload list
    case Command::kDescribe: return RunDescribe(*options, *source);
    case Command::kExport: return RunExport(*options, *source);
    case Command::kJournal: return RunJournal(*options, *source);
    default: return UsageError("unknown command", args);
  }
}

}  // namespace
}  // namespace geodesic::cli

int main(int argc, char** argv) { return geodesic::cli::Main(argc, argv); }
