#pragma once
// SHA-256 of bytes as they go by (OpenSSL), for a backup's checksums.
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace geodesic::state::backup {

// Thread-compatible.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view bytes);
  // The digest of everything updated so far, as 64 lowercase hex digits.
  // Ends this hasher: Update after it is a programming error.
  std::string HexDigest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// The SHA-256 of a whole file, and its size in bytes. NotFound /
// Unavailable naming `path` when it cannot be read.
struct FileDigest {
  std::string sha256;
  uint64_t size_bytes = 0;
};
[[nodiscard]] absl::StatusOr<FileDigest> DigestFile(const std::string& path);

}  // namespace geodesic::state::backup
