// tectl: the operator CLI for Geodesic traffic engineering (DESIGN §1).
//
//   tectl [where] get KIND [ID] [--facility F] [-o table|wide|json|yaml]
//   tectl [where] describe KIND ID [-o yaml|json]
//   tectl [where] import FILE [--replace-workloads] [--dry-run] [-o table|json|yaml]
//   tectl [where] export [FILE]
//   tectl [where] journal [--from SEQ] [--limit N] [-o table|wide|json|yaml]
//   tectl solve --graph FILE [--demands FILE] [--objective mlu|total-flow] [--scale S] [-o ...]
//   tectl [--server ...] drain|undrain link|node|facility ID [--reason TEXT]
//
//   KIND: facilities nodes links fabrics services workloads intents plan
//   (singular or plural).
//
// Where the model is (or the environment variable in brackets):
//   --server HOST:PORT [GEODESIC_SERVER]   a pathcomp replica's Operator API, over
//   --ca FILE [GEODESIC_CA] --cert FILE [GEODESIC_CERT] --key FILE [GEODESIC_KEY]
//                                           mTLS with the operator's certificate
//   --store DIR                             a pathcomp state directory, offline:
//                                           read-only beside a running pathcomp;
//                                           import only when none has it open
// Exit codes: 0 ok, 1 the server or the store refused or failed, 2 bad usage
// (with a one-line error and the usage text).
//
// Flag parsing is cli/options.h; each command is one file (cli/*_command.cc)
// reading through cli/model_source.h, which answers alike online and offline.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/operator_client.h"
#include "cli/options.h"
#include "cli/output.h"
#include "tls/credentials.h"

namespace geodesic::cli {
namespace {

int UsageError(const std::string& message) {
  std::fprintf(stderr, "tectl: %s\n%s", message.c_str(), kUsage);
  return 2;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

int Main(int argc, char** argv) {
  auto options = ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc), Env);
  if (!options.ok()) return UsageError(std::string(options.status().message()));
  if (options->command == Command::kHelp) return std::printf("%s", kUsage), 0;
  if (options->command == Command::kSolve) return RunSolve(*options);

  std::shared_ptr<v1::Operator::Stub> stub;
  ModelSourcePtr source;
  if (!options->server.empty()) {
    if (auto status = tls::ValidateTlsFiles(options->tls); !status.ok()) {
      return UsageError(std::string(status.message()));
    }
    stub = ConnectOperator(options->server, options->tls);
    source = NewGrpcModelSource(stub, options->server);
  }
  switch (options->command) {
    case Command::kImport: return RunImport(*options, stub.get());
    case Command::kDrain:
    case Command::kUndrain: return RunDrain(*options, *stub);
    default: break;
  }
  if (source == nullptr) {
    auto opened = OpenStoreModelSource(options->store_dir);
    if (!opened.ok()) return PrintError(opened.status());
    source = *std::move(opened);
  }
  switch (options->command) {
    case Command::kGet: return RunGet(*options, *source);
    case Command::kDescribe: return RunDescribe(*options, *source);
    case Command::kExport: return RunExport(*options, *source);
    case Command::kJournal: return RunJournal(*options, *source);
    default: return UsageError("unknown command");
  }
}

}  // namespace
}  // namespace geodesic::cli

int main(int argc, char** argv) { return geodesic::cli::Main(argc, argv); }
