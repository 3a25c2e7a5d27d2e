#include "topology/internal/import_ids.h"

#include "absl/strings/str_cat.h"

namespace geodesic::topology::internal {

std::string SanitizeId(std::string_view label, size_t max_size) {
  std::string id;
  for (char c : label) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (id.empty() && !alnum) {
      // An id starts with [a-z0-9]; what cannot start it is dropped.
      continue;
    }
    id.push_back(alnum || c == '.' || c == '_' || c == '-' ? c : '-');
    if (id.size() == max_size) break;
  }
  return id;
}

std::string IdRegistry::ClaimUnique(const std::string& base, size_t max_size) {
  if (base.size() <= max_size && Claim(base)) return base;
  for (size_t n = 2;; ++n) {
    const std::string suffix = absl::StrCat("-", n);
    const size_t keep = max_size > suffix.size() ? max_size - suffix.size() : 0;
    std::string candidate = absl::StrCat(base.substr(0, keep), suffix);
    if (Claim(candidate)) return candidate;
  }
}

}  // namespace geodesic::topology::internal
