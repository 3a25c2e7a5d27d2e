#pragma once
// Restores pathcomp's store from a backup directory (backup_dir.h), offline:
// no pathcomp may have the store open. Used by `tectl restore`.
#include <string>

#include "absl/status/statusor.h"
#include "geodesic/v1/backup.pb.h"

namespace geodesic::state::backup {

struct RestoreOptions {
  // Replace a store directory that holds anything (an empty or missing one
  // is always accepted).
  bool force = false;
};

struct RestoreResult {
  v1::BackupManifest manifest;  // of the backup restored
  bool replaced = false;        // a non-empty store directory was replaced
};

// Makes `store_dir` a copy of the backup in `backup_dir`: verifies the backup
// first (VerifyBackup: manifest, every file's size and checksum, a schema this
// build knows), copies it beside `store_dir` (same parent, checked again as it
// is copied and fsynced), opens the copy as pathcomp opens its store (so a
// backup of an older schema is migrated to this build's, as pathcomp would at
// its next start) and checks that its journal ends at the manifest's
// last_journal_seq, and only then puts it in place with renames. On any error
// `store_dir` is unchanged and the copy is removed.
// Errors: VerifyBackup's; InvalidArgument for an empty `store_dir` or one
// that is, holds or lies inside `backup_dir`;
// NotFound when its parent is missing; FailedPrecondition when `store_dir`
// is not a directory, holds anything and `force` is not set, or is open
// (a running pathcomp holds its lock: stop it first); DataLoss when the copy
// does not open or ends elsewhere; Unavailable for I/O errors.
// For a tool's process: the check for a running pathcomp takes RocksDB's
// fcntl lock on <store_dir>/LOCK, which cannot see (and on release would drop)
// a lock this same process holds, so never call it while this process has
// the store open.
[[nodiscard]] absl::StatusOr<RestoreResult> RestoreStore(const std::string& backup_dir, const std::string& store_dir,
                                                         const RestoreOptions& options = {});

}  // namespace geodesic::state::backup
