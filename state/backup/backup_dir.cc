#include "state/backup/backup_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "files/atomic_file.h"
#include "google/protobuf/util/json_util.h"
#include "state/rocks_migration.h"
#include "state/rocks_store.h"

namespace geodesic::state::backup {
namespace {

namespace fs = std::filesystem;

// A manifest larger than this is not one we wrote (a million files would be ~150 MB).
constexpr uintmax_t kMaxManifestBytes = uintmax_t{64} << 20;

bool IsPlainFileName(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

bool IsHexDigest(const std::string& digest) {
  return digest.size() == 64 && std::all_of(digest.begin(), digest.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string Errno(int error) { return std::strerror(error); }

absl::Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", dir, " to sync it: ", Errno(errno)));
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (synced != 0) return absl::UnavailableError(absl::StrCat("cannot sync ", dir, ": ", Errno(error)));
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t wrote = ::write(fd, bytes.data(), bytes.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", Errno(errno)));
    bytes.remove_prefix(static_cast<size_t>(wrote));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateManifest(const v1::BackupManifest& manifest) {
  if (manifest.format() != kManifestFormat) {
    return absl::InvalidArgumentError(absl::StrCat("manifest format ", manifest.format(),
                                                   " is not one this build reads (", kManifestFormat, ")"));
  }
  if (manifest.schema_version() < 1) {
    return absl::InvalidArgumentError("manifest schema_version is missing");
  }
  if (manifest.schema_version() > static_cast<uint32_t>(kSchemaVersion)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the backup holds a store of schema version ", manifest.schema_version(),
                     ", newer than this build's ", kSchemaVersion,
                     ": it was made by a newer pathcomp (restore it with that version or newer)"));
  }
  if (manifest.files().empty()) return absl::InvalidArgumentError("manifest lists no files");
  std::set<std::string> seen;
  for (const v1::BackupFile& file : manifest.files()) {
    if (!IsPlainFileName(file.path())) {
      return absl::InvalidArgumentError(
          absl::StrCat("manifest file \"", absl::CHexEscape(file.path()), "\" is not a plain file name"));
    }
    if (!seen.insert(file.path()).second) {
      return absl::InvalidArgumentError(absl::StrCat("manifest lists ", file.path(), " twice"));
    }
    if (!IsHexDigest(file.sha256())) {
      return absl::InvalidArgumentError(
          absl::StrCat("manifest sha256 of ", file.path(), " is not 64 lowercase hex digits"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::BackupManifest> VerifyBackup(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat(dir, " is not a directory", ec ? ": " + ec.message() : ""));
  }
  const std::string manifest_path = (fs::path(dir) / kManifestName).string();
  if (!fs::is_regular_file(manifest_path, ec)) {
    return absl::NotFoundError(absl::StrCat(dir, " holds no ", kManifestName,
                                            ": it is not a backup, or one that did not finish"));
  }
  const uintmax_t manifest_size = fs::file_size(manifest_path, ec);
  if (ec || manifest_size > kMaxManifestBytes) {
    return absl::DataLossError(absl::StrCat(manifest_path, ": unreadable or larger than ", kMaxManifestBytes, " bytes"));
  }
  std::ifstream in(manifest_path, std::ios::binary);
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::DataLossError(absl::StrCat(manifest_path, ": cannot read it"));
  v1::BackupManifest manifest;
  if (auto parsed = google::protobuf::util::JsonStringToMessage(json, &manifest); !parsed.ok()) {
    return absl::DataLossError(absl::StrCat(manifest_path, ": not a backup manifest: ", parsed.ToString()));
  }
  if (absl::Status valid = ValidateManifest(manifest); !valid.ok()) {
    return absl::Status(valid.code(), absl::StrCat(manifest_path, ": ", valid.message()));
  }

  const fs::path store = fs::path(dir) / kStoreDirName;
  if (!fs::is_directory(store, ec)) return absl::DataLossError(absl::StrCat(store.string(), " is missing"));
  std::set<std::string> present;
  for (fs::directory_iterator it(store, ec), end; !ec && it != end; it.increment(ec)) {
    present.insert(it->path().filename().string());
  }
  if (ec) return absl::DataLossError(absl::StrCat("cannot list ", store.string(), ": ", ec.message()));
  for (const v1::BackupFile& file : manifest.files()) {
    const std::string path = (store / file.path()).string();
    if (present.erase(file.path()) == 0) return absl::DataLossError(absl::StrCat(path, " is missing"));
    if (!fs::is_regular_file(fs::symlink_status(path, ec))) {
      return absl::DataLossError(absl::StrCat(path, " is not a regular file"));
    }
    absl::StatusOr<FileDigest> digest = DigestFile(path);
    if (!digest.ok()) return absl::DataLossError(digest.status().message());
    if (digest->size_bytes != file.size_bytes()) {
      return absl::DataLossError(absl::StrCat(path, " has ", digest->size_bytes, " bytes; the manifest says ",
                                              file.size_bytes()));
    }
    if (digest->sha256 != file.sha256()) {
      return absl::DataLossError(absl::StrCat(path, " does not match its checksum in the manifest (sha256 ",
                                              digest->sha256, ", expected ", file.sha256(), ")"));
    }
  }
  if (!present.empty()) {
    return absl::DataLossError(absl::StrCat((store / *present.begin()).string(), " is not in the manifest"));
  }
  return manifest;
}

absl::Status PrepareBackupDir(const std::string& dir, bool& created) {
  created = false;
  if (dir.empty()) return absl::InvalidArgumentError("the backup directory is empty");
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(dir, ec);
  if (status.type() == fs::file_type::not_found) {
    const fs::path parent = fs::path(dir).has_parent_path() ? fs::path(dir).parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec)) {
      return absl::NotFoundError(absl::StrCat("cannot make ", dir, ": ", parent.string(), " is not a directory"));
    }
    if (::mkdir(dir.c_str(), 0750) != 0) {
      return absl::UnavailableError(absl::StrCat("cannot make ", dir, ": ", Errno(errno)));
    }
    created = true;
    return absl::OkStatus();
  }
  if (!fs::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(dir, " exists and is not a directory"));
  }
  if (!fs::is_empty(dir, ec) || ec) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, " is not empty: a backup goes into a new or empty directory",
                     ec ? absl::StrCat(" (", ec.message(), ")") : ""));
  }
  return absl::OkStatus();
}

BackupReceiver::BackupReceiver(std::string dir, bool created) : dir_(std::move(dir)), created_(created) {}

BackupReceiver::~BackupReceiver() {
  if (!finished_) Abort();
}

absl::Status BackupReceiver::CloseFile() {
  if (fd_ < 0) return absl::OkStatus();
  const std::string path = (fs::path(dir_) / kStoreDirName / path_).string();
  const int synced = ::fsync(fd_);
  const int error = errno;
  ::close(fd_);
  fd_ = -1;
  if (synced != 0) return absl::UnavailableError(absl::StrCat("cannot sync ", path, ": ", Errno(error)));
  files_[path_] = Received{.size_bytes = size_, .sha256 = hash_->HexDigest()};
  hash_.reset();
  return absl::OkStatus();
}

absl::Status BackupReceiver::Add(const v1::BackupChunk& chunk) {
  if (finished_ || manifest_) return absl::InvalidArgumentError("backup stream: a message after the manifest");
  if (chunk.has_manifest()) {
    if (!chunk.path().empty() || !chunk.data().empty()) {
      return absl::InvalidArgumentError("backup stream: the manifest message carries file data too");
    }
    if (absl::Status closed = CloseFile(); !closed.ok()) return closed;
    manifest_ = chunk.manifest();
    return absl::OkStatus();
  }
  if (chunk.data().size() > kChunkBytes) {
    return absl::InvalidArgumentError(absl::StrCat("backup stream: a chunk of ", chunk.data().size(),
                                                   " bytes, more than ", kChunkBytes));
  }
  if (fd_ >= 0 && chunk.path() == path_) {
    if (chunk.offset() != size_) {
      return absl::DataLossError(absl::StrCat("backup stream: ", path_, " continues at offset ", chunk.offset(),
                                              " after ", size_, " bytes"));
    }
  } else {
    if (!IsPlainFileName(chunk.path())) {
      return absl::InvalidArgumentError(
          absl::StrCat("backup stream: \"", absl::CHexEscape(chunk.path()), "\" is not a plain file name"));
    }
    if (files_.count(chunk.path()) > 0) {
      return absl::InvalidArgumentError(absl::StrCat("backup stream: ", chunk.path(), " comes twice"));
    }
    if (chunk.offset() != 0) {
      return absl::DataLossError(
          absl::StrCat("backup stream: ", chunk.path(), " starts at offset ", chunk.offset(), ", not 0"));
    }
    if (absl::Status closed = CloseFile(); !closed.ok()) return closed;
    const std::string store = (fs::path(dir_) / kStoreDirName).string();
    if (!store_made_) {
      if (::mkdir(store.c_str(), 0750) != 0) {
        return absl::UnavailableError(absl::StrCat("cannot make ", store, ": ", Errno(errno)));
      }
      store_made_ = true;
    }
    const std::string path = store + "/" + chunk.path();
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (fd_ < 0) return absl::UnavailableError(absl::StrCat("cannot create ", path, ": ", Errno(errno)));
    path_ = chunk.path();
    size_ = 0;
    hash_ = std::make_unique<Sha256>();
  }
  if (absl::Status wrote = WriteAll(fd_, chunk.data(), path_); !wrote.ok()) return wrote;
  hash_->Update(chunk.data());
  size_ += chunk.data().size();
  return absl::OkStatus();
}

absl::Status BackupReceiver::Check(const v1::BackupManifest& manifest) {
  if (absl::Status valid = ValidateManifest(manifest); !valid.ok()) {
    return absl::Status(valid.code(), absl::StrCat("backup stream: ", valid.message()));
  }
  if (static_cast<size_t>(manifest.files_size()) != files_.size()) {
    return absl::DataLossError(absl::StrCat("backup stream: the manifest lists ", manifest.files_size(),
                                            " files; ", files_.size(), " came"));
  }
  for (const v1::BackupFile& file : manifest.files()) {
    auto it = files_.find(file.path());
    if (it == files_.end()) {
      return absl::DataLossError(absl::StrCat("backup stream: ", file.path(), " is in the manifest but never came"));
    }
    if (it->second.size_bytes != file.size_bytes() || it->second.sha256 != file.sha256()) {
      return absl::DataLossError(absl::StrCat("backup stream: ", file.path(), " arrived with ", it->second.size_bytes,
                                              " bytes, sha256 ", it->second.sha256, "; the manifest says ",
                                              file.size_bytes(), " bytes, sha256 ", file.sha256()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::BackupManifest> BackupReceiver::Finish() {
  if (finished_) return absl::FailedPreconditionError("backup stream already finished");
  if (!manifest_) return absl::DataLossError("backup stream: it ended before the manifest");
  if (absl::Status checked = Check(*manifest_); !checked.ok()) return checked;
  if (absl::Status synced = SyncDir((fs::path(dir_) / kStoreDirName).string()); !synced.ok()) return synced;
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  if (auto printed = google::protobuf::util::MessageToJsonString(*manifest_, &json, options); !printed.ok()) {
    return absl::InternalError(absl::StrCat("cannot print the manifest: ", printed.ToString()));
  }
  if (absl::Status written = files::AtomicWriteFile((fs::path(dir_) / kManifestName).string(), json);
      !written.ok()) {
    return written;
  }
  finished_ = true;
  return *manifest_;
}

void BackupReceiver::Abort() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ignored;
  if (created_) {
    fs::remove_all(dir_, ignored);
    return;
  }
  // The directory was there, empty: leave it so.
  fs::remove((fs::path(dir_) / kManifestName), ignored);
  if (store_made_) fs::remove_all(fs::path(dir_) / kStoreDirName, ignored);
}

absl::StatusOr<v1::BackupManifest> StreamCheckpoint(const std::string& checkpoint_dir, v1::BackupManifest manifest,
                                                    const std::function<bool(const v1::BackupChunk&)>& write) {
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(checkpoint_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_regular_file(ec) || !IsPlainFileName(name)) {
      return absl::FailedPreconditionError(
          absl::StrCat("checkpoint ", checkpoint_dir, " holds ", name, ", which is not a plain file"));
    }
    names.push_back(name);
  }
  if (ec) return absl::UnavailableError(absl::StrCat("cannot list ", checkpoint_dir, ": ", ec.message()));
  std::sort(names.begin(), names.end());
  manifest.clear_files();
  std::string buffer(kChunkBytes, '\0');
  for (const std::string& name : names) {
    const std::string path = checkpoint_dir + "/" + name;
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path, ": ", Errno(errno)));
    Sha256 hash;
    uint64_t offset = 0;
    bool first = true;
    while (first || in) {
      in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      const auto got = static_cast<size_t>(in.gcount());
      if (in.bad()) return absl::UnavailableError(absl::StrCat("cannot read ", path, ": I/O error"));
      if (got == 0 && !first) break;
      v1::BackupChunk chunk;
      chunk.set_path(name);
      chunk.set_offset(offset);
      chunk.set_data(buffer.data(), got);
      if (!write(chunk)) return absl::CancelledError("the backup's receiver went away");
      hash.Update(std::string_view(buffer.data(), got));
      offset += got;
      first = false;
    }
    v1::BackupFile* file = manifest.add_files();
    file->set_path(name);
    file->set_size_bytes(offset);
    file->set_sha256(hash.HexDigest());
  }
  v1::BackupChunk last;
  *last.mutable_manifest() = manifest;
  if (!write(last)) return absl::CancelledError("the backup's receiver went away");
  return manifest;
}

absl::StatusOr<v1::BackupManifest> BackupLocalStore(const Store& store, const std::string& dir,
                                                    const v1::BackupManifest& origin) {
  bool created = false;
  if (absl::Status prepared = PrepareBackupDir(dir, created); !prepared.ok()) return prepared;
  BackupReceiver receiver(dir, created);
  // The checkpoint goes beside `dir` (same file system: hard links), then
  // through the same stream and checks as a remote backup.
  fs::path normal = fs::path(dir).lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // "dir/"
  const std::string checkpoint = absl::StrCat(normal.string(), ".checkpoint-", ::getpid());
  absl::StatusOr<CheckpointInfo> info = CheckpointRocksStore(store, checkpoint);
  if (!info.ok()) return info.status();
  v1::BackupManifest manifest = origin;
  if (manifest.created_at_unix_ms() == 0) {
    manifest.set_created_at_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
  }
  manifest.set_format(kManifestFormat);
  manifest.set_schema_version(static_cast<uint32_t>(info->schema_version));
  manifest.set_last_journal_seq(info->last_journal_seq);
  absl::Status received;
  absl::StatusOr<v1::BackupManifest> streamed =
      StreamCheckpoint(checkpoint, std::move(manifest), [&](const v1::BackupChunk& chunk) {
        received = receiver.Add(chunk);
        return received.ok();
      });
  std::error_code ignored;
  fs::remove_all(checkpoint, ignored);
  if (!received.ok()) return received;
  if (!streamed.ok()) return streamed.status();
  return receiver.Finish();
}

}  // namespace geodesic::state::backup
