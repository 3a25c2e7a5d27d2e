#pragma once
// Entity ids for what the importers read: labels from foreign files become
// valid ids ([a-z0-9][a-z0-9._-]{0,62}), unique per entity kind.
// Internal to the topology component.
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>

namespace geodesic::topology::internal {

inline constexpr size_t kMaxIdSize = 63;

// Lowercases `label`, turns every character outside [a-z0-9._-] into '-',
// drops leading characters an id cannot start with, and cuts the result to
// `max_size`. Empty when nothing is left (the caller picks a fallback).
std::string SanitizeId(std::string_view label, size_t max_size = kMaxIdSize);

// The ids handed out so far for one entity kind. Not thread-safe.
class IdRegistry {
 public:
  bool Contains(const std::string& id) const { return ids_.count(id) > 0; }
  // Claims `id` as is; false when it is already taken.
  bool Claim(const std::string& id) { return ids_.insert(id).second; }
  // Claims `base`, or else the first free of base-2, base-3, ... (cutting
  // `base` so the result fits `max_size`). `base` must be a valid id.
  std::string ClaimUnique(const std::string& base, size_t max_size = kMaxIdSize);

 private:
  std::unordered_set<std::string> ids_;
};

}  // namespace geodesic::topology::internal
