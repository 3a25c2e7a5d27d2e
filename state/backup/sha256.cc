#include "state/backup/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace geodesic::state::backup {

struct Sha256::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  // Only an out-of-memory can fail these; the digest would then be wrong, so stop.
  if (context_->ctx == nullptr || EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr) != 1) std::abort();
}

Sha256::~Sha256() = default;

void Sha256::Update(std::string_view bytes) {
  if (EVP_DigestUpdate(context_->ctx, bytes.data(), bytes.size()) != 1) std::abort();
}

std::string Sha256::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(context_->ctx, digest, &size) != 1) std::abort();
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), size));
}

absl::StatusOr<FileDigest> DigestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    std::string message = absl::StrCat("cannot read ", path, ": ", std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(message) : absl::UnavailableError(message);
  }
  Sha256 hash;
  FileDigest digest;
  std::string buffer(1 << 16, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<size_t>(in.gcount());
    hash.Update(std::string_view(buffer.data(), got));
    digest.size_bytes += got;
  }
  if (in.bad()) return absl::UnavailableError(absl::StrCat("cannot read ", path, ": I/O error"));
  digest.sha256 = hash.HexDigest();
  return digest;
}

}  // namespace geodesic::state::backup
