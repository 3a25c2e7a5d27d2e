// tectl backup DIR: a consistent copy of a running pathcomp's store, streamed
// over the StoreAdmin API (backup.proto) into DIR with its manifest.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/operator_client.h"
#include "cli/option_values.h"
#include "cli/output.h"
#include "geodesic/v1/backup.grpc.pb.h"
#include "state/backup/backup_dir.h"
#include "tls/credentials.h"

namespace geodesic::cli {
namespace {

// How long a backup may stream before tectl gives up: hours of a slow link
// for a large store, but not forever on a stuck one.
constexpr std::chrono::hours kBackupTimeout{6};

}  // namespace

int RunBackup(const Options& options) {
  bool created = false;
  if (absl::Status prepared = state::backup::PrepareBackupDir(options.backup_dir, created); !prepared.ok()) {
    return PrintError(prepared);
  }
  // Removes what it wrote (and DIR when it made it) unless the backup finishes.
  state::backup::BackupReceiver receiver(options.backup_dir, created);

  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(2 * static_cast<int>(state::backup::kChunkBytes) + (64 << 10));
  auto channel = grpc::CreateCustomChannel(
      options.server, tls::MakeChannelCredentials(options.tls, tls::Identity::Kind::kPathcomp), arguments);
  auto stub = v1::StoreAdmin::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kBackupTimeout);
  std::unique_ptr<grpc::ClientReader<v1::BackupChunk>> reader = stub->Backup(&context, v1::BackupRequest());
  v1::BackupChunk chunk;
  absl::Status received;
  while (received.ok() && reader->Read(&chunk)) received = receiver.Add(chunk);
  if (!received.ok()) {
    context.TryCancel();
    reader->Finish().ok();  // the stream's status says nothing more than `received`
    return PrintError(received);
  }
  if (grpc::Status status = reader->Finish(); !status.ok()) return PrintError(FromGrpc(status));
  absl::StatusOr<v1::BackupManifest> manifest = receiver.Finish();
  if (!manifest.ok()) return PrintError(manifest.status());
  uint64_t bytes = 0;
  for (const v1::BackupFile& file : manifest->files()) bytes += file.size_bytes();
  std::printf("backed up pathcomp %s at journal seq %llu (schema %u): %d files, %llu bytes in %s\n",
              manifest->pathcomp_replica().c_str(), static_cast<unsigned long long>(manifest->last_journal_seq()),
              manifest->schema_version(), manifest->files_size(), static_cast<unsigned long long>(bytes),
              options.backup_dir.c_str());
  return 0;
}

namespace {

absl::Status ParseBackup(const CommandArgs& args, Options& options) {
  if (args.operands.size() != 1) return Usage("backup takes one directory: backup DIR");
  options.backup_dir = args.operands[0];
  if (options.backup_dir.empty() || !IsOneLine(options.backup_dir)) {
    return Usage("the backup directory must be one non-empty line");
  }
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& BackupCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "backup",
      .command = Command::kBackup,
      .usage = "backup DIR\n"
               "    a consistent copy of the running pathcomp's store, taken online (admin), into DIR\n"
               "    (new or empty) with a manifest: journal seq, schema, SHA-256 of every file\n",
      .parse = ParseBackup,
      .access = ServerOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
