#include "pathcomp/service/backup_service.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "pathcomp/service/grpc_status.h"
#include "state/backup/backup_dir.h"
#include "state/rocks_store.h"
#include "tls/peer_identity.h"

namespace geodesic::pathcomp {
namespace {

namespace fs = std::filesystem;

constexpr char kCheckpointPrefix[] = "checkpoint-";

// Removes the checkpoint directory when the backup ends, however it ends.
struct RemoveOnExit {
  std::string path;
  ~RemoveOnExit() {
    std::error_code ignored;
    if (!path.empty()) fs::remove_all(path, ignored);
  }
};

}  // namespace

BackupService::BackupService(const state::Store& store, Model& model, std::string scratch_dir,
                             std::string replica_id, RecordAudit record_audit)
    : store_(store),
      model_(model),
      scratch_dir_(std::move(scratch_dir)),
      replica_id_(std::move(replica_id)),
      record_audit_(std::move(record_audit)) {}

void BackupService::Audit(const std::string& who, const std::string& role, const std::string& arguments,
                          const absl::Status& result) const {
  daemon::LogInfo("audit", {{"who", who},
                            {"what", "backup"},
                            {"arguments", arguments},
                            {"result", result.ok() ? "ok" : result.ToString()}});
  v1::AuditRecord record;
  record.set_at_unix_ms(daemon::UnixNowMs());
  record.set_identity(who);
  record.set_role(role);
  record.set_action("backup");
  record.set_arguments(arguments);
  record.set_ok(result.ok());
  record.set_result(result.ok() ? "OK" : result.ToString());
  if (auto plan = model_.CurrentPlan()) record.set_plan_generation(plan->generation());
  record_audit_(std::move(record));
}

grpc::Status BackupService::Backup(grpc::ServerContext* context, const v1::BackupRequest*,
                                   grpc::ServerWriter<v1::BackupChunk>* writer) {
  auto identity = tls::PeerIdentity(*context);
  if (!identity.ok()) {
    Audit(absl::StrCat("(unauthenticated peer ", context->peer(), ")"), "", "", identity.status());
    return ToGrpcStatus(identity.status());
  }
  const std::string role = identity->kind == tls::Identity::Kind::kOperator ? std::string(tls::RoleName(identity->role)) : "";
  absl::Status allowed;
  if (identity->kind != tls::Identity::Kind::kOperator) {
    allowed = absl::PermissionDeniedError(absl::StrCat(identity->spiffe_id, " is not an operator"));
  } else if (identity->role < tls::Role::kAdmin) {
    allowed = absl::PermissionDeniedError(absl::StrCat("operator ", identity->name, " has role ", role,
                                                       "; a backup needs admin"));
  }
  if (!allowed.ok()) {
    Audit(identity->spiffe_id, role, "", allowed);
    return ToGrpcStatus(allowed);
  }
  std::unique_lock lock(backup_mu_, std::try_to_lock);
  if (!lock.owns_lock()) {
    const absl::Status busy = absl::UnavailableError("another backup is running; try again when it ends");
    Audit(identity->spiffe_id, role, "", busy);
    return ToGrpcStatus(busy);
  }

  // A checkpoint left by a pathcomp that died mid-backup is removed first.
  std::error_code ec;
  fs::create_directories(scratch_dir_, ec);
  absl::Status result;
  if (ec) {
    result = absl::UnavailableError(absl::StrCat("cannot make the backup directory ", scratch_dir_, ": ", ec.message()));
  }
  for (fs::directory_iterator it(scratch_dir_, ec), end; result.ok() && !ec && it != end; it.increment(ec)) {
    if (absl::StartsWith(it->path().filename().string(), kCheckpointPrefix)) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
  const int64_t now_ms = daemon::UnixNowMs();
  RemoveOnExit cleanup{(fs::path(scratch_dir_) / absl::StrCat(kCheckpointPrefix, now_ms)).string()};
  std::string arguments;
  if (result.ok()) {
    absl::StatusOr<state::CheckpointInfo> info = state::CheckpointRocksStore(store_, cleanup.path);
    result = info.status();
    if (info.ok()) {
      v1::BackupManifest manifest;
      manifest.set_format(state::backup::kManifestFormat);
      manifest.set_schema_version(static_cast<uint32_t>(info->schema_version));
      manifest.set_last_journal_seq(info->last_journal_seq);
      manifest.set_created_at_unix_ms(now_ms);
      manifest.set_pathcomp_replica(replica_id_);
      manifest.set_requested_by(identity->spiffe_id);
      auto streamed = state::backup::StreamCheckpoint(
          cleanup.path, manifest, [&](const v1::BackupChunk& chunk) { return !context->IsCancelled() && writer->Write(chunk); });
      result = streamed.status();
      uint64_t bytes = 0;
      if (streamed.ok()) {
        for (const v1::BackupFile& file : streamed->files()) bytes += file.size_bytes();
      }
      arguments = absl::StrCat("journal_seq: ", info->last_journal_seq, " schema_version: ", info->schema_version,
                               streamed.ok() ? absl::StrCat(" files: ", streamed->files_size(), " bytes: ", bytes) : "");
    }
  }
  Audit(identity->spiffe_id, role, arguments, result);
  return ToGrpcStatus(result);
}

}  // namespace geodesic::pathcomp
