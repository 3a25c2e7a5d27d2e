// tectl import FILE: a topology file into a running pathcomp (Operator API,
// admin role; the server validates it again) or straight into a store no
// pathcomp has open.
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/operator_client.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "pathcomp/model/offline_store.h"
#include "text/table.h"
#include "topology/import.h"
#include "topology/inventory_proto.h"

namespace geodesic::cli {
namespace {

// An import re-solves the whole plan; a large one takes a while.
constexpr std::chrono::seconds kImportTimeout(300);

// The local user, for the journal of an offline import: $USER, else the
// account of our uid, else the uid. One line of printable characters.
std::string LocalUser() {
  std::string user;
  if (const char* env = std::getenv("USER"); env != nullptr) user = env;
  if (user.empty()) {
    struct passwd entry;
    struct passwd* found = nullptr;
    char buffer[4096];
    if (getpwuid_r(getuid(), &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) {
      user = found->pw_name;
    }
  }
  if (user.empty()) user = absl::StrCat("uid ", getuid());
  for (char& c : user) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return user;
}

// The file as the journal names it: absolute, so the entry means something later.
std::string SourceName(const std::string& file) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(file, error);
  return error ? file : absolute.lexically_normal().string();
}

absl::StatusOr<v1::ImportTopologyResponse> ImportOnline(const Options& options,
                                                        v1::Operator::StubInterface& stub,
                                                        const topology::Topology& topology,
                                                        const std::string& source) {
  v1::ImportTopologyRequest request;
  *request.mutable_inventory() = topology::ToInventoryProto(topology);
  request.set_source(source);
  request.set_replace_workloads(options.replace_workloads);
  request.set_dry_run(options.dry_run);
  v1::ImportTopologyResponse response;
  // A follower names the leader: the import goes there, as every change does.
  const grpc::Status status = CallLeader(options.server, options.tls, stub, [&](v1::Operator::StubInterface& to) {
    grpc::ClientContext context;
    SetTimeout(context, kImportTimeout);
    return to.ImportTopology(&context, request, &response);
  });
  if (!status.ok()) return FromGrpc(status);
  return response;
}

absl::StatusOr<v1::ImportTopologyResponse> ImportOffline(const Options& options,
                                                         const topology::Topology& topology,
                                                         const std::string& source) {
  // A dry run reads the store only (read-only: beside a running pathcomp too;
  // a missing store counts as empty); an import needs the store to itself.
  auto store = pathcomp::OfflineStore::OpenForImport(options.store_dir, options.dry_run);
  if (!store.ok()) return store.status();
  return (*store)->Import(topology, absl::StrCat("import of ", source, " by ", LocalUser(), " (offline)"),
                          options.replace_workloads);
}

}  // namespace

int RunImport(const Options& options, v1::Operator::StubInterface* stub) {
  std::vector<std::string> skipped;
  auto topology = topology::ImportTopology(options.file, &skipped);
  for (const std::string& line : skipped) std::cerr << "tectl: warning: " << line << "\n";
  if (!topology.ok()) {
    // The reader's own lines ("file:line: reason"), as they are.
    std::cerr << topology.status().message() << "\n"
              << "tectl: nothing imported from " << options.file << "\n";
    return 1;
  }
  const std::string source = SourceName(options.file);
  const bool online = stub != nullptr;
  auto response =
      online ? ImportOnline(options, *stub, *topology, source) : ImportOffline(options, *topology, source);
  if (!response.ok()) return PrintError(response.status());
  if (options.output == OutputFormat::kJson || options.output == OutputFormat::kYaml) {
    PrintStructured(*response, options.output);
    return 0;
  }
  text::Table table({"KIND", "ADDED", "CHANGED", "REMOVED", "UNCHANGED"});
  for (const auto& count : response->counts()) {
    table.Add({count.kind(), absl::StrCat(count.added()), absl::StrCat(count.changed()),
               absl::StrCat(count.removed()), absl::StrCat(count.unchanged())});
  }
  std::cout << table.Render();
  const std::string where = online ? absl::StrCat("pathcomp at ", options.server)
                                   : absl::StrCat("the store in ", options.store_dir);
  if (options.dry_run) {
    std::cout << "dry run against " << where << ": nothing was changed\n";
  } else if (response->journal_seq() == 0) {
    std::cout << "nothing to change in " << where;
    if (online) std::cout << "; plan generation " << response->plan_generation();
    std::cout << "\n";
  } else if (online) {
    std::cout << "imported into " << where << ": journal seq " << response->journal_seq()
              << ", plan generation " << response->plan_generation() << "\n";
  } else {
    std::cout << "imported into " << where << ": journal seq " << response->journal_seq()
              << "; pathcomp plans it when it next starts\n";
  }
  return 0;
}

namespace {

absl::Status ParseImport(const CommandArgs& args, Options& options) {
  if (args.operands.size() != 1) return Usage("import takes one file");
  options.file = args.operands[0];
  if (options.file.empty() || !IsOneLine(options.file)) return Usage("the file name must be one non-empty line");
  options.replace_workloads = args.flag("--replace-workloads") != nullptr;
  options.dry_run = args.flag("--dry-run") != nullptr;
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& ImportCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "import",
      .command = Command::kImport,
      .switches = {"--replace-workloads", "--dry-run"},
      .outputs = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "import FILE [--replace-workloads] [--dry-run] [-o table|json|yaml]\n"
               "    FILE: .yaml/.yml/.json (project format), .graph (REPETITA, with its\n"
               "    .0000.demands beside it) or .graphml (Topology Zoo); needs the admin role\n",
      .parse = ParseImport,
      .access = ServerOrStore,
  };
  return *spec;
}

}  // namespace geodesic::cli
