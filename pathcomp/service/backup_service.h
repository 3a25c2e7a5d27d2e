#pragma once
// The StoreAdmin service (backup.proto): a consistent copy of pathcomp's
// store, taken while pathcomp runs and streamed to an admin (`tectl backup`).
//
// Each backup makes a RocksDB checkpoint (hard links: cheap, one commit's
// state) in `scratch_dir`, streams its files in 1 MiB chunks with their
// SHA-256, then the manifest (journal seq, schema, time, replica, caller), and
// removes the checkpoint, also when the caller goes away. One backup at a
// time (UNAVAILABLE meanwhile). Only an operator with the admin role may
// call it; every call and refusal is written to the audit log.
// Thread-safe.
#include <functional>
#include <mutex>
#include <string>

#include "geodesic/v1/backup.grpc.pb.h"
#include "pathcomp/model/model.h"
#include "state/store.h"

namespace geodesic::pathcomp {

class BackupService final : public v1::StoreAdmin::Service {
 public:
  // Where an audit record goes: the model's log, or, replicated, etcd's one history.
  using RecordAudit = std::function<void(v1::AuditRecord)>;
  // `store` is the store `model` writes (both outlive this); `scratch_dir`
  // should be on the store's file system (else the checkpoint is a copy); it
  // is created when missing. `replica_id` names this pathcomp in manifests.
  BackupService(const state::Store& store, Model& model, std::string scratch_dir, std::string replica_id,
                RecordAudit record_audit);

  grpc::Status Backup(grpc::ServerContext* context, const v1::BackupRequest* request,
                      grpc::ServerWriter<v1::BackupChunk>* writer) override;

 private:
  // Records the call in the audit log (as OperatorService does).
  void Audit(const std::string& who, const std::string& role, const std::string& arguments,
             const absl::Status& result) const;

  const state::Store& store_;
  Model& model_;
  const std::string scratch_dir_;
  const std::string replica_id_;
  const RecordAudit record_audit_;
  std::mutex backup_mu_;  // held while a backup runs
};

}  // namespace geodesic::pathcomp
