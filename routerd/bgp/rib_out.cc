#include "routerd/bgp/rib_out.h"

#include <algorithm>
#include <unordered_map>

namespace geodesic::routerd::bgp {
namespace {

// The paths a peer should have for one prefix.
std::vector<BgpPath> Visible(const std::vector<BgpPath>& paths, bool add_path) {
  if (add_path || paths.size() <= 1) {
    if (add_path || paths.empty()) return paths;
    BgpPath single = paths.front();
    single.path_id = 0;
    return {single};
  }
  const auto heaviest = std::max_element(paths.begin(), paths.end(), [](const BgpPath& a, const BgpPath& b) {
    return a.weight < b.weight || (a.weight == b.weight && a.path_id > b.path_id);
  });
  BgpPath single = *heaviest;
  single.path_id = 0;
  return {single};
}

class Grouper {
 public:
  explicit Grouper(FamilyChanges& changes) : changes_(changes) {
    for (size_t i = 0; i < changes_.announced.size(); ++i) index_[changes_.announced[i].first.get()] = i;
  }
  void Announce(const AttributesPtr& attributes, const Nlri& nlri) {
    auto [it, inserted] = index_.try_emplace(attributes.get(), changes_.announced.size());
    if (inserted) changes_.announced.push_back({attributes, {}});
    changes_.announced[it->second].second.push_back(nlri);
  }

 private:
  FamilyChanges& changes_;
  std::unordered_map<const PathAttributes*, size_t> index_;
};

}  // namespace

size_t FamilyChanges::announced_count() const {
  size_t count = 0;
  for (const auto& [attributes, nlri] : announced) count += nlri.size();
  return count;
}

void DiffPaths(const PathsByPrefix& target, const std::vector<IpPrefix>& dirty, const PeerView& view,
               PathsByPrefix& sent, OutboundChanges& changes) {
  Grouper ipv4(changes.ipv4), ipv6(changes.ipv6);
  static const std::vector<BgpPath> kNone;
  for (const IpPrefix& prefix : dirty) {
    const bool add_path = view.add_path(prefix.family);
    auto wanted_it = target.find(prefix);
    std::vector<BgpPath> wanted = Visible(wanted_it == target.end() ? kNone : wanted_it->second, add_path);
    auto sent_it = sent.find(prefix);
    const std::vector<BgpPath>& had = sent_it == sent.end() ? kNone : sent_it->second;
    if (wanted == had) continue;
    FamilyChanges& family = changes.of(prefix.family);
    Grouper& grouper = prefix.family == Family::kIpv4 ? ipv4 : ipv6;
    // Both lists are sorted by path id: withdraw what went, announce what is new or changed.
    size_t i = 0, j = 0;
    while (i < had.size() || j < wanted.size()) {
      if (j == wanted.size() || (i < had.size() && had[i].path_id < wanted[j].path_id)) {
        family.withdrawn.push_back({prefix, had[i].path_id});
        ++i;
      } else if (i == had.size() || wanted[j].path_id < had[i].path_id) {
        grouper.Announce(wanted[j].attributes, {prefix, wanted[j].path_id});
        ++j;
      } else {
        if (had[i].attributes != wanted[j].attributes) grouper.Announce(wanted[j].attributes, {prefix, wanted[j].path_id});
        ++i, ++j;
      }
    }
    if (wanted.empty()) {
      sent.erase(prefix);
    } else {
      sent[prefix] = std::move(wanted);
    }
  }
}

std::vector<std::vector<uint8_t>> PackUpdates(Family family, const FamilyChanges& changes,
                                              const EncodeContext& context,
                                              const AttributeDecorator& decorate) {
  std::vector<std::vector<uint8_t>> messages;
  constexpr size_t kFixed = kHeaderBytes + 4;  // withdrawn and attribute lengths
  // Withdrawals first, as many per message as fit.
  const size_t withdraw_overhead = kFixed + (family == Family::kIpv6 ? 4 + 3 : 0);
  static const PathAttributes kNoAttributes;
  for (size_t begin = 0; begin < changes.withdrawn.size();) {
    size_t bytes = withdraw_overhead, end = begin;
    while (end < changes.withdrawn.size() &&
           bytes + NlriWireBytes(changes.withdrawn[end], context.add_path) <= kMaxMessageBytes) {
      bytes += NlriWireBytes(changes.withdrawn[end++], context.add_path);
    }
    messages.push_back(EncodeUpdate(family, std::span(changes.withdrawn).subspan(begin, end - begin), {},
                                    kNoAttributes, context));
    begin = end;
  }
  for (const auto& [attributes, nlri] : changes.announced) {
    const PathAttributes sent_attributes = decorate(*attributes);
    const size_t overhead = kFixed + AttributesWireBytes(family, sent_attributes, context);
    for (size_t begin = 0; begin < nlri.size();) {
      size_t bytes = overhead, end = begin;
      while (end < nlri.size() && bytes + NlriWireBytes(nlri[end], context.add_path) <= kMaxMessageBytes) {
        bytes += NlriWireBytes(nlri[end++], context.add_path);
      }
      messages.push_back(EncodeUpdate(family, {}, std::span(nlri).subspan(begin, end - begin), sent_attributes, context));
      begin = end;
    }
  }
  return messages;
}

}  // namespace geodesic::routerd::bgp
