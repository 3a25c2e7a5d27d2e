#include "state/backup/restore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "state/backup/backup_dir.h"
#include "state/backup/sha256.h"
#include "state/rocks_store.h"

namespace geodesic::state::backup {
namespace {

namespace fs = std::filesystem;

std::string Errno(int error) { return std::strerror(error); }

absl::Status SyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", path, " to sync it: ", Errno(errno)));
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (synced != 0) return absl::UnavailableError(absl::StrCat("cannot sync ", path, ": ", Errno(error)));
  return absl::OkStatus();
}

// Copies `from` to the new file `to`, hashing what it copies, and fsyncs it.
absl::StatusOr<FileDigest> CopyFile(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", from, ": ", Errno(errno)));
  const int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot create ", to, ": ", Errno(errno)));
  Sha256 hash;
  FileDigest digest;
  std::string buffer(1 << 20, '\0');
  absl::Status status;
  while (status.ok() && in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    std::string_view chunk(buffer.data(), static_cast<size_t>(in.gcount()));
    hash.Update(chunk);
    digest.size_bytes += chunk.size();
    while (status.ok() && !chunk.empty()) {
      const ssize_t wrote = ::write(fd, chunk.data(), chunk.size());
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote < 0) status = absl::UnavailableError(absl::StrCat("cannot write ", to, ": ", Errno(errno)));
      if (wrote > 0) chunk.remove_prefix(static_cast<size_t>(wrote));
    }
  }
  if (status.ok() && in.bad()) status = absl::UnavailableError(absl::StrCat("cannot read ", from, ": I/O error"));
  if (status.ok() && ::fsync(fd) != 0) status = absl::UnavailableError(absl::StrCat("cannot sync ", to, ": ", Errno(errno)));
  ::close(fd);
  if (!status.ok()) return status;
  digest.sha256 = hash.HexDigest();
  return digest;
}

// RocksDB's lock on a store directory (an fcntl lock on <dir>/LOCK), held
// while the directory is replaced so no pathcomp opens it meanwhile.
class StoreDirLock {
 public:
  ~StoreDirLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  // FailedPrecondition when another process holds it.
  absl::Status Acquire(const std::string& store_dir) {
    const std::string path = store_dir + "/LOCK";
    fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) {
      if (errno == ENOENT) return absl::OkStatus();  // not a store, or one never opened
      return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", Errno(errno)));
    }
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (::fcntl(fd_, F_SETLK, &lock) != 0) {
      if (errno == EAGAIN || errno == EACCES) {
        return absl::FailedPreconditionError(absl::StrCat(
            store_dir, " is open (its LOCK is held): is a pathcomp running on it? Stop it before restoring"));
      }
      return absl::UnavailableError(absl::StrCat("cannot lock ", path, ": ", Errno(errno)));
    }
    return absl::OkStatus();
  }

 private:
  int fd_ = -1;
};

// Removes the staged copy unless released.
struct RemoveOnExit {
  std::string path;
  ~RemoveOnExit() {
    if (path.empty()) return;
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

}  // namespace

absl::StatusOr<RestoreResult> RestoreStore(const std::string& backup_dir, const std::string& store_dir,
                                           const RestoreOptions& options) {
  if (store_dir.empty()) return absl::InvalidArgumentError("the store directory is empty");
  RestoreResult result;
  absl::StatusOr<v1::BackupManifest> manifest = VerifyBackup(backup_dir);
  if (!manifest.ok()) return manifest.status();
  result.manifest = *std::move(manifest);

  fs::path target = fs::path(store_dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "dir/"
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    return absl::NotFoundError(absl::StrCat("cannot restore into ", store_dir, ": ", parent.string(),
                                            " is not a directory"));
  }
  // The store must lie apart from the backup: replacing one with the other would lose it.
  const fs::path backup_path = fs::weakly_canonical(fs::path(backup_dir), ec);
  const fs::path target_path = fs::weakly_canonical(target, ec);
  auto within = [](const fs::path& inner, const fs::path& outer) {
    return std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end()).first == outer.end();
  };
  if (within(target_path, backup_path) || within(backup_path, target_path)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot restore into ", store_dir, ": it overlaps the backup ",
                                                   backup_dir, "; restore into the store's own directory"));
  }
  const fs::file_status status = fs::symlink_status(target, ec);
  const bool exists = status.type() != fs::file_type::not_found;
  if (exists && status.type() != fs::file_type::directory) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot restore into ", store_dir, ": it exists and is not a directory (or is a symbolic link)"));
  }
  const bool empty = !exists || fs::is_empty(target, ec);
  if (!empty && !options.force) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot restore into ", store_dir, ": it holds files (a store?); pass --force to replace it"));
  }
  StoreDirLock lock;
  if (exists) {
    if (absl::Status locked = lock.Acquire(target.string()); !locked.ok()) return locked;
  }

  // Copy, checking every byte against the manifest again (the backup may
  // change under us), then check the copy opens where the manifest says.
  const std::string name = target.filename().string();
  const std::string staged = (parent / absl::StrCat(".", name, ".restoring-", ::getpid())).string();
  fs::remove_all(staged, ec);  // left by an earlier crash of the same pid: ours to reuse
  if (::mkdir(staged.c_str(), 0750) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot make ", staged, ": ", Errno(errno)));
  }
  RemoveOnExit cleanup{staged};
  for (const v1::BackupFile& file : result.manifest.files()) {
    const std::string from = (fs::path(backup_dir) / kStoreDirName / file.path()).string();
    absl::StatusOr<FileDigest> copied = CopyFile(from, staged + "/" + file.path());
    if (!copied.ok()) return copied.status();
    if (copied->sha256 != file.sha256() || copied->size_bytes != file.size_bytes()) {
      return absl::DataLossError(absl::StrCat(from, " changed while it was restored: it no longer matches the manifest"));
    }
  }
  {
    // Opened as pathcomp opens its store: this build's migrations bring a
    // backup of an older schema up to date here, before anything is replaced.
    absl::StatusOr<StorePtr> opened = OpenRocksStore(staged);
    if (!opened.ok()) {
      return absl::DataLossError(absl::StrCat("the backup in ", backup_dir, " does not open as a store: ",
                                              opened.status().message()));
    }
    if ((*opened)->LastJournalSeq() != result.manifest.last_journal_seq()) {
      return absl::DataLossError(absl::StrCat("the backup in ", backup_dir, " holds journal entries up to ",
                                              (*opened)->LastJournalSeq(), "; its manifest says ",
                                              result.manifest.last_journal_seq()));
    }
  }  // closed before it moves
  if (absl::Status synced = SyncPath(staged, O_RDONLY | O_DIRECTORY); !synced.ok()) return synced;

  // Put it in place: an empty directory is removed, a non-empty one (with
  // --force) moved aside until the copy is in, then removed.
  std::string aside;
  if (exists && empty) {
    if (!fs::remove(target, ec)) {
      return absl::UnavailableError(absl::StrCat("cannot replace the empty ", store_dir, ": ", ec.message()));
    }
  } else if (exists) {
    aside = (parent / absl::StrCat(".", name, ".replaced-", ::getpid())).string();
    fs::remove_all(aside, ec);
    fs::rename(target, aside, ec);
    if (ec) return absl::UnavailableError(absl::StrCat("cannot move ", store_dir, " aside: ", ec.message()));
    result.replaced = true;
  }
  fs::rename(staged, target, ec);
  if (ec) {
    const std::string why = ec.message();
    std::error_code ignored;
    if (!aside.empty()) fs::rename(aside, target, ignored);
    if (exists && empty) fs::create_directory(target, ignored);
    return absl::UnavailableError(absl::StrCat("cannot move the restored store to ", store_dir, ": ", why));
  }
  cleanup.path.clear();
  if (!aside.empty()) fs::remove_all(aside, ec);
  if (absl::Status synced = SyncPath(parent.string(), O_RDONLY | O_DIRECTORY); !synced.ok()) return synced;
  return result;
}

}  // namespace geodesic::state::backup
