#include "files/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace geodesic::files {
namespace {

std::atomic<uint64_t> next_temp_id{0};

absl::Status ErrnoError(int error, const std::string& path, std::string_view step) {
  const std::string message = absl::StrCat(path, ": cannot ", std::string(step), ": ", std::strerror(error));
  switch (error) {
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    default:
      return absl::UnavailableError(message);
  }
}

// Closes a descriptor once; reports close's own error (NFS reports write
// errors there).
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int Close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

int WriteAll(int fd, std::string_view contents) {
  while (!contents.empty()) {
    const ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    contents.remove_prefix(static_cast<size_t>(written));
  }
  return 0;
}

int SyncDescriptor(int fd) {
  while (::fsync(fd) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::Status AtomicWriteFile(const std::string& path, std::string_view contents) {
  if (path.empty() || path.back() == '/') {
    return absl::InvalidArgumentError(absl::StrCat("\"", path, "\" is not a file path"));
  }
  const std::string directory = DirectoryOf(path);
  // A name of its own per call (pid, counter), created exclusively: a torn
  // temporary left by a crash, or a concurrent writer's, is never the file
  // renamed into place.
  std::string temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = absl::StrCat(path, ".tmp.", ::getpid(), ".", next_temp_id.fetch_add(1));
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    const int error = errno;
    if (fd < 0 && (error != EEXIST || attempt >= 100)) {
      return ErrnoError(error, path, absl::StrCat("create a temporary file in ", directory));
    }
  }
  Descriptor file(fd);
  auto fail = [&](int error, std::string_view step) {  // `error` read before unlink
    ::unlink(temp.c_str());
    return ErrnoError(error, path, step);
  };
  if (int error = WriteAll(file.get(), contents); error != 0) return fail(error, "write the temporary file");
  if (int error = SyncDescriptor(file.get()); error != 0) return fail(error, "fsync the temporary file");
  if (int error = file.Close(); error != 0) return fail(error, "close the temporary file");
  if (::rename(temp.c_str(), path.c_str()) != 0) return fail(errno, "rename the temporary file over it");
  // The rename is durable only once the directory is.
  Descriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) {
    const int error = errno;
    return ErrnoError(error, path, absl::StrCat("open the directory ", directory, " to fsync it"));
  }
  if (int error = SyncDescriptor(dir.get()); error != 0) {
    return ErrnoError(error, path, absl::StrCat("fsync the directory ", directory));
  }
  return absl::OkStatus();
}

}  // namespace geodesic::files
