#pragma once
// A backup of pathcomp's store on disk, and the stream that carries one.
//
// Layout of a backup directory:
//   <dir>/store/...              the store's files (a RocksDB checkpoint)
//   <dir>/geodesic-backup.json   the manifest (v1::BackupManifest, protobuf
//                                JSON): position, schema, origin and the
//                                size and SHA-256 of every file of store/
// The manifest is written last and atomically: a directory without it is an
// unfinished backup and nothing accepts it.
//
// Thread-compatible.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "geodesic/v1/backup.pb.h"
#include "state/backup/sha256.h"
#include "state/store.h"

namespace geodesic::state::backup {

inline constexpr char kManifestName[] = "geodesic-backup.json";
inline constexpr char kStoreDirName[] = "store";
inline constexpr uint32_t kManifestFormat = 1;
// The largest data of one BackupChunk.
inline constexpr size_t kChunkBytes = size_t{1} << 20;

// Checks a manifest's fields: format, a schema this build can open (older
// ones are migrated when opened; newer: FailedPrecondition naming both),
// file names that are plain names (no '/', no "..", [A-Za-z0-9._-]), unique,
// with 64-hex-digit checksums. InvalidArgument otherwise, naming the field.
[[nodiscard]] absl::Status ValidateManifest(const v1::BackupManifest& manifest);

// Reads and validates `dir`'s manifest, then checks that store/ holds exactly
// the files it lists with their sizes and checksums. NotFound when `dir` or
// its manifest is missing (not a backup, or an unfinished one); DataLoss for a
// missing, extra, resized or changed file or an unreadable manifest;
// ValidateManifest's errors.
[[nodiscard]] absl::StatusOr<v1::BackupManifest> VerifyBackup(const std::string& dir);

// Makes `dir` ready to receive a backup: creates it (not its parents) when
// missing; accepts an existing empty directory. FailedPrecondition when it
// holds anything or is not a directory; NotFound when its parent is missing.
// `created` says whether this call made it (so a failed backup removes it).
[[nodiscard]] absl::Status PrepareBackupDir(const std::string& dir, bool& created);

// Writes a backup stream (BackupChunk messages) into a directory PrepareBackupDir
// accepted, checking it as it comes: chunks in order, plain file names, each
// file once, at most kChunkBytes each; at the end, the manifest must list
// exactly the files received with the sizes and checksums computed here. Every
// file is fsynced; the manifest is written last, atomically. Any error is
// InvalidArgument or DataLoss (a broken stream) or Unavailable (the disk), and
// then Abort() removes what was written.
class BackupReceiver {
 public:
  // `dir`: the backup directory; `created`: from PrepareBackupDir.
  BackupReceiver(std::string dir, bool created);
  ~BackupReceiver();  // Abort()s unless Finish succeeded

  // One message of the stream; the last one carries the manifest.
  [[nodiscard]] absl::Status Add(const v1::BackupChunk& chunk);
  // The stream ended: OK once the manifest came and matched; the manifest.
  [[nodiscard]] absl::StatusOr<v1::BackupManifest> Finish();
  // Removes what this receiver wrote (and `dir` when PrepareBackupDir made it).
  void Abort();

 private:
  absl::Status CloseFile();
  absl::Status Check(const v1::BackupManifest& manifest);

  struct Received {
    uint64_t size_bytes = 0;
    std::string sha256;
  };
  const std::string dir_;
  const bool created_;
  bool finished_ = false;
  bool store_made_ = false;
  int fd_ = -1;                           // the file being written
  std::string path_;                      // its name
  uint64_t size_ = 0;                     // its bytes so far
  std::unique_ptr<Sha256> hash_;          // of its bytes so far
  std::map<std::string, Received> files_;  // closed ones
  std::optional<v1::BackupManifest> manifest_;
};

// The server's half: streams the checkpoint in `checkpoint_dir` (a store
// directory with only plain files) as BackupChunk messages to `write`, then
// the manifest (`manifest` with its files filled in here). `write` returns
// false when the receiver is gone: Cancelled. Unavailable when a file cannot
// be read; FailedPrecondition for a subdirectory or a file name a manifest
// may not hold.
[[nodiscard]] absl::StatusOr<v1::BackupManifest> StreamCheckpoint(
    const std::string& checkpoint_dir, v1::BackupManifest manifest,
    const std::function<bool(const v1::BackupChunk&)>& write);

// A backup of a local RocksStore (CheckpointRocksStore) into `dir`, as
// `tectl backup` writes one: for tools and tests on the store's machine.
// `origin` gives the manifest's pathcomp_replica and requested_by. Errors of
// PrepareBackupDir and CheckpointRocksStore; nothing is left behind on error.
[[nodiscard]] absl::StatusOr<v1::BackupManifest> BackupLocalStore(const Store& store, const std::string& dir,
                                                                 const v1::BackupManifest& origin);

}  // namespace geodesic::state::backup
