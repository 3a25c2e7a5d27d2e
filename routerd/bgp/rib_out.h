#pragma once
// What routerd announces (the target paths per prefix) against what a peer
// has been sent, and the fewest UPDATE messages that carry the difference:
// many prefixes per UPDATE, prefixes whose paths share attributes grouped,
// withdrawals batched. Pure, standard library only. Thread-compatible.
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "routerd/bgp/message.h"

namespace geodesic::routerd::bgp {

// Attributes are interned: equal attributes share one object, so grouping
// compares pointers.
using AttributesPtr = std::shared_ptr<const PathAttributes>;

struct BgpPath {
  uint32_t path_id = 0;  // stable per next hop (ADD-PATH identifier)
  uint32_t weight = 0;   // the plan's weight; the single path to a peer without ADD-PATH is the heaviest
  AttributesPtr attributes;
  bool operator==(const BgpPath& other) const {
    return path_id == other.path_id && attributes == other.attributes;
  }
};

// Per prefix, paths sorted by path_id.
using PathsByPrefix = std::map<IpPrefix, std::vector<BgpPath>>;

// What one family's UPDATEs must say.
struct FamilyChanges {
  std::vector<Nlri> withdrawn;
  std::vector<std::pair<AttributesPtr, std::vector<Nlri>>> announced;  // grouped, first-seen order
  bool empty() const { return withdrawn.empty() && announced.empty(); }
  size_t announced_count() const;
};

struct OutboundChanges {
  FamilyChanges ipv4;
  FamilyChanges ipv6;
  FamilyChanges& of(Family family) { return family == Family::kIpv4 ? ipv4 : ipv6; }
};

// How a peer sees the paths: all of them with identifiers (ADD-PATH send
// negotiated for the family), or only the heaviest, without identifier.
struct PeerView {
  bool add_path_ipv4 = false;
  bool add_path_ipv6 = false;
  bool add_path(Family family) const { return family == Family::kIpv4 ? add_path_ipv4 : add_path_ipv6; }
};

// Brings `sent` to `target` for the prefixes in `dirty` (others are assumed
// equal) and appends to `changes` what the peer must be told.
void DiffPaths(const PathsByPrefix& target, const std::vector<IpPrefix>& dirty, const PeerView& view,
               PathsByPrefix& sent, OutboundChanges& changes);

// Gives the attributes as sent to one peer (AS_PATH, LOCAL_PREF by peer type).
using AttributeDecorator = std::function<PathAttributes(const PathAttributes&)>;

// Turns one family's changes into UPDATE messages of at most kMaxMessageBytes.
// `decorate` gives the attributes as sent to this peer (AS_PATH, LOCAL_PREF).
std::vector<std::vector<uint8_t>> PackUpdates(Family family, const FamilyChanges& changes,
                                              const EncodeContext& context,
                                              const AttributeDecorator& decorate);

}  // namespace geodesic::routerd::bgp
