#pragma once
// Entity ids: the stable names of facilities, nodes, links, services, workloads,
// intents, replicas and operators. Lowercase so they are safe in keys, URIs,
// file names and shell arguments.
#include <string_view>

namespace geodesic::entity {

// True when `id` matches [a-z0-9][a-z0-9._-]{0,62}.
constexpr bool IsValidEntityId(std::string_view id) {
  if (id.empty() || id.size() > 63) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum) continue;
    if (i > 0 && (c == '.' || c == '_' || c == '-')) continue;
    return false;
  }
  return true;
}

inline constexpr char kEntityIdRule[] = "[a-z0-9][a-z0-9._-]{0,62}";

}  // namespace geodesic::entity
