#include "pathcomp/solver/failure_distances.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "pathcomp/solver/internal/on_threads.h"

namespace geodesic::pathcomp {

struct FailureDistances::Tree {
  ShortestPaths base;  // with no failure
  // Every reachable facility hangs off the source through parent links (false
  // only with a zero-latency cycle of parents: then failures recompute all).
  bool regular = true;
  std::vector<int> preorder;    // reachable facilities, depth first
  std::vector<int> first, end;  // subtree of v: preorder[first[v] .. end[v])

  // Under the current failure (valid when epoch == FailureDistances::epoch_).
  enum class State { kBase, kRepaired, kRecomputed, kSourceDown };
  uint32_t epoch = 0;
  State state = State::kBase;
  // Per facility, what PathId asks together: kept in one place.
  struct Target {
    uint32_t stamp = 0;       // == epoch: cut off by the failure, repaired below
    uint32_t path_epoch = 0;  // path_id is the current failure's when == epoch
    int path_id = 0;          // the id of the current failure's path where it differs
    int base_path_id = -1;    // the id of the unfailed path (-1: not yet)
  };
  std::vector<Target> target;
  std::vector<uint64_t> distance_us;  // a whole row: base.distance_us but where `repaired` says
  std::vector<int> repaired;          // the facilities distance_us differs from base for
  std::vector<int> parent, parent_arc_link;
  ShortestPaths recomputed;  // State::kRecomputed
  // Links of the unfailed path to each facility, once asked (most pairs keep
  // it under most failures, so it is copied rather than walked again).
  std::vector<std::vector<int>> base_links;
  std::vector<char> base_links_known;

  // Whether `to` keeps its unfailed path under the current failure.
  bool KeepsBasePath(uint32_t now, int to) const {
    return state == State::kBase || (state == State::kRepaired && target[to].stamp != now);
  }

  uint64_t Distance(uint32_t now, int to) const {
    switch (state) {
      case State::kBase: return base.distance_us[to];
      case State::kRepaired: return target[to].stamp == now ? distance_us[to] : base.distance_us[to];
      case State::kRecomputed: return recomputed.distance_us[to];
      case State::kSourceDown: return kUnreachable;
    }
    return kUnreachable;
  }
  // The link into `at` on its path and the facility before it; -1 at the source.
  std::pair<int, int> Parent(uint32_t now, int at) const {
    switch (state) {
      case State::kBase: return {base.parent_arc_link[at], base.parent[at]};
      case State::kRepaired:
        return target[at].stamp == now ? std::pair{parent_arc_link[at], parent[at]}
                                : std::pair{base.parent_arc_link[at], base.parent[at]};
      case State::kRecomputed: return {recomputed.parent_arc_link[at], recomputed.parent[at]};
      case State::kSourceDown: return {-1, -1};
    }
    return {-1, -1};
  }
};

FailureDistances::FailureDistances(const Snapshot& snapshot, const std::vector<char>* allowed)
    : snapshot_(snapshot),
      allowed_(allowed),
      exclusion_{.allowed = allowed},
      trees_(snapshot.facility_count()),
      irregular_(snapshot.facility_count(), 0),
      unreachable_row_(snapshot.facility_count(), kUnreachable),
      row_(snapshot.facility_count(), nullptr),
      row_epoch_(snapshot.facility_count(), 0),
      words_((snapshot.facility_count() + 63) / 64),
      may_change_(snapshot.facility_count() * words_, 0) {
  const int n = snapshot.facility_count();
  in_begin_.assign(static_cast<size_t>(n) + 1, 0);
  for (int link = 0; link < snapshot.link_count(); ++link) {
    ++in_begin_[static_cast<size_t>(snapshot.link_dst(link)) + 1];
  }
  for (int v = 0; v < n; ++v) in_begin_[v + 1] += in_begin_[v];
  in_arcs_.resize(in_begin_[n]);
  std::vector<uint32_t> fill(in_begin_.begin(), in_begin_.end() - 1);
  out_begin_.assign(1, 0);
  for (int v = 0; v < n; ++v) {
    for (int link : snapshot.out_links(v)) {
      out_arcs_.push_back({link, snapshot.link_dst(link), snapshot.link_state(link).cost_us});
    }
    out_begin_.push_back(static_cast<uint32_t>(out_arcs_.size()));
  }
  for (int link = 0; link < snapshot.link_count(); ++link) {
    in_arcs_[fill[snapshot.link_dst(link)]++] = {link, snapshot.link_src(link), snapshot.link_state(link).cost_us};
    for (int srlg : snapshot.link_srlgs(link)) {
      if (srlg >= static_cast<int>(srlg_links_.size())) srlg_links_.resize(srlg + 1);
      srlg_links_[srlg].push_back(link);
    }
  }
}

FailureDistances::~FailureDistances() = default;

void FailureDistances::SetFailure(const Exclusion& failure) {
  if (failure.link == exclusion_.link && failure.srlg == exclusion_.srlg &&
      failure.facility == exclusion_.facility) {
    return;
  }
  exclusion_ = Exclusion{.link = failure.link, .srlg = failure.srlg, .facility = failure.facility, .allowed = allowed_};
  if (++epoch_ == 0) {  // wrapped: forget every stamp
    for (auto& tree : trees_) {
      if (!tree) continue;
      for (Tree::Target& target : tree->target) target.stamp = target.path_epoch = 0;
      tree->epoch = 0;
    }
    std::fill(row_epoch_.begin(), row_epoch_.end(), 0);
    excluded_epoch_ = 0;
    epoch_ = 1;
  }
}

uint64_t FailureDistances::Distance(int from, int to) {
  if (to == exclusion_.facility) return kUnreachable;
  return TreeFrom(from).Distance(epoch_, to);
}

uint64_t FailureDistances::UnfailedPath(int from, int to, std::vector<int>& links, std::vector<int>& facilities,
                                        bool& regular) const {
  const Tree& tree = *trees_[from];
  regular = tree.regular;
  const uint64_t distance = tree.base.distance_us[to];
  if (distance == kUnreachable || !regular) return distance;  // parents may go round a cycle
  for (int at = to; at != from && at >= 0; at = tree.base.parent[at]) {
    facilities.push_back(at);
    links.push_back(tree.base.parent_arc_link[at]);
  }
  facilities.push_back(from);
  return distance;
}

const uint64_t* FailureDistances::DecideRow(int from) {
  Tree& tree = TreeFrom(from);
  const uint64_t* row = unreachable_row_.data();
  switch (tree.state) {
    case Tree::State::kBase: row = tree.base.distance_us.data(); break;
    case Tree::State::kRepaired: row = tree.distance_us.data(); break;
    case Tree::State::kRecomputed: row = tree.recomputed.distance_us.data(); break;
    case Tree::State::kSourceDown: break;
  }
  // Which distances may differ from the unfailed ones: those repaired (a
  // superset: a repair may find another path as short), or all.
  uint64_t* bits = &may_change_[static_cast<size_t>(from) * words_];
  const bool all = tree.state == Tree::State::kRecomputed || tree.state == Tree::State::kSourceDown;
  std::fill(bits, bits + words_, all ? ~uint64_t{0} : 0);
  if (tree.state == Tree::State::kRepaired) {
    for (int at : tree.repaired) bits[at >> 6] |= uint64_t{1} << (at & 63);
  }
  // Stable until the tree is decided again, which is under another failure.
  row_[from] = row;
  row_epoch_[from] = epoch_;
  return row;
}

int FailureDistances::PathId(int from, int to, ChainPathTable& paths) {
  if (paths.identity() != path_table_) {  // ids in another table: forget them
    for (auto& tree : trees_) {
      if (!tree) continue;
      for (Tree::Target& target : tree->target) {
        target.base_path_id = -1;
        target.path_epoch = 0;
      }
    }
    path_table_ = paths.identity();
  }
  if (from == to || to == exclusion_.facility) return 0;
  Tree& tree = TreeFrom(from);
  Tree::Target& target = tree.target[to];
  // The path's links, walked back from `to` (the unfailed path's when it
  // keeps it: so do the facilities on it).
  auto intern = [&] {
    path_scratch_.clear();
    for (int at = to;;) {
      const auto [link, before] = tree.Parent(epoch_, at);
      if (before < 0) break;
      path_scratch_.push_back(link);
      at = before;
    }
    std::reverse(path_scratch_.begin(), path_scratch_.end());
    return paths.Intern(path_scratch_);
  };
  if (tree.KeepsBasePath(epoch_, to)) {
    if (target.base_path_id < 0) target.base_path_id = intern();
    return target.base_path_id;
  }
  if (target.path_epoch == epoch_) return target.path_id;
  target.path_epoch = epoch_;
  return target.path_id = intern();
}

std::vector<int> FailureDistances::LinksTo(int from, int to) {
  if (to == exclusion_.facility) return {};
  Tree& tree = TreeFrom(from);
  if (tree.KeepsBasePath(epoch_, to)) {
    if (tree.base_links_known.empty()) {
      tree.base_links_known.assign(snapshot_.facility_count(), 0);
      tree.base_links.resize(snapshot_.facility_count());
    }
    if (!tree.base_links_known[to]) {
      tree.base_links[to] = tree.base.LinksTo(to);
      tree.base_links_known[to] = 1;
    }
    return tree.base_links[to];
  }
  size_t length = 0;
  for (int at = to;;) {
    const auto [link, before] = tree.Parent(epoch_, at);
    if (before < 0) break;
    ++length;
    at = before;
  }
  std::vector<int> links(length);
  for (int at = to; length > 0;) {
    const auto [link, before] = tree.Parent(epoch_, at);
    links[--length] = link;
    at = before;
  }
  return links;
}

int FailureDistances::AppendPath(int from, int to, std::vector<int>& facilities) {
  if (to == exclusion_.facility) return -1;
  const Tree& tree = TreeFrom(from);
  const size_t begin = facilities.size();
  int first = -1;
  for (int at = to;;) {  // a facility the failure leaves alone keeps its base parent (Tree::Parent)
    const auto [link, before] = tree.Parent(epoch_, at);
    if (before < 0) break;
    facilities.push_back(at);
    first = link;
    at = before;
  }
  if (facilities.size() == begin) return -1;
  facilities.push_back(from);
  std::reverse(facilities.begin() + static_cast<std::ptrdiff_t>(begin), facilities.end());
  return first;
}

FailureDistances::LastStep FailureDistances::LastStepTo(int from, int to) {
  if (to == exclusion_.facility) return {};
  const Tree& tree = TreeFrom(from);
  const auto [link, before] = tree.Parent(epoch_, to);
  return {.link = link, .before = before, .unfailed = tree.KeepsBasePath(epoch_, to)};
}

template <typename Root>
bool FailureDistances::AnyCutRoot(const Tree& tree, Root&& root) const {
  auto cut_link = [&](int link) {
    const int at = snapshot_.link_dst(link);
    return tree.base.parent_arc_link[at] == link && root(at);
  };
  if (exclusion_.link >= 0 && cut_link(exclusion_.link)) return true;
  if (exclusion_.srlg >= 0 && exclusion_.srlg < static_cast<int>(srlg_links_.size())) {
    for (int link : srlg_links_[exclusion_.srlg]) {
      if (cut_link(link)) return true;
    }
  }
  // A failed facility's own entry is never asked (Distance, LinksTo and
  // PathId answer it first): only a subtree below it needs repair.
  const int failed = exclusion_.facility;
  return failed >= 0 && tree.base.distance_us[failed] != kUnreachable && tree.end[failed] - tree.first[failed] > 1 &&
         root(failed);
}

FailureDistances::Tree& FailureDistances::TreeFrom(int source) {
  Tree& tree = BuiltTree(source);
  if (tree.epoch != epoch_) Decide(source, tree);
  return tree;
}

bool FailureDistances::CutOff(int from, int to) {
  if (exclusion_.link < 0 && exclusion_.srlg < 0 && exclusion_.facility < 0) return false;
  if (exclusion_.facility == from) return true;  // Decide: kSourceDown, every bit set
  const Tree& tree = BuiltTree(from);
  if (!tree.regular) return true;  // kRecomputed, every bit set
  // Repair marks the subtrees below the roots.
  const int at = tree.first[to];
  if (at < 0) return false;
  return AnyCutRoot(tree, [&](int root) { return tree.first[root] <= at && at < tree.end[root]; });
}

void FailureDistances::BuildTrees(const std::vector<int>& sources, int threads) {
  std::vector<int> missing;  // each once: a tree is built by one thread
  std::vector<char> listed(trees_.size(), 0);
  for (int source : sources) {
    if (source < 0 || static_cast<size_t>(source) >= trees_.size() || trees_[source] || listed[source]) continue;
    listed[source] = 1;
    missing.push_back(source);
  }
  // A tree writes only its own slot (and its irregular_ entry).
  constexpr size_t kTreesPerThread = 16;  // fewer are built before a thread would start
  const int used = static_cast<int>(
      std::clamp<size_t>(missing.size() / kTreesPerThread, 1, static_cast<size_t>(std::max(threads, 1))));
  internal::OnThreads(used, [&](int t) {
    for (size_t i = static_cast<size_t>(t); i < missing.size(); i += static_cast<size_t>(used)) BuiltTree(missing[i]);
  });
}

void FailureDistances::CopyUnfailedTrees(const FailureDistances& other) {
  for (size_t source = 0; source < trees_.size() && source < other.trees_.size(); ++source) {
    if (trees_[source] || !other.trees_[source]) continue;
    const Tree& built = *other.trees_[source];
    auto tree = std::make_unique<Tree>();
    tree->base = built.base;
    tree->regular = built.regular;
    tree->preorder = built.preorder;
    tree->first = built.first;
    tree->end = built.end;
    tree->target.resize(built.target.size());
    irregular_[source] = other.irregular_[source];
    if (irregular_[source]) any_irregular_.store(true, std::memory_order_relaxed);
    trees_[source] = std::move(tree);
  }
}

FailureDistances::Tree& FailureDistances::BuiltTree(int source) {
  std::unique_ptr<Tree>& slot = trees_[source];
  if (!slot) {
    const int n = snapshot_.facility_count();
    slot = std::make_unique<Tree>();
    Tree& tree = *slot;
    tree.base = ShortestPaths::Run(snapshot_, source, Exclusion{.allowed = allowed_});
    tree.target.resize(n);
    // Children lists, then a depth-first order so that every subtree is a range.
    std::vector<int> child_begin(n + 1, 0), children(n);
    int reachable = 0;
    for (int v = 0; v < n; ++v) {
      if (tree.base.distance_us[v] != kUnreachable) ++reachable;
      if (tree.base.parent[v] >= 0) ++child_begin[tree.base.parent[v] + 1];
    }
    for (int v = 0; v < n; ++v) child_begin[v + 1] += child_begin[v];
    std::vector<int> fill(child_begin.begin(), child_begin.end() - 1);
    for (int v = 0; v < n; ++v) {
      if (tree.base.parent[v] >= 0) children[fill[tree.base.parent[v]]++] = v;
    }
    tree.first.assign(n, -1);
    tree.end.assign(n, -1);
    tree.preorder.reserve(reachable);
    std::vector<std::pair<int, int>> stack = {{source, child_begin[source]}};
    tree.first[source] = 0;
    tree.preorder.push_back(source);
    while (!stack.empty()) {
      auto& [at, next] = stack.back();
      if (next == child_begin[at + 1]) {
        tree.end[at] = static_cast<int>(tree.preorder.size());
        stack.pop_back();
        continue;
      }
      const int child = children[next++];
      tree.first[child] = static_cast<int>(tree.preorder.size());
      tree.preorder.push_back(child);
      stack.emplace_back(child, child_begin[child]);
    }
    tree.regular = static_cast<int>(tree.preorder.size()) == reachable;
    irregular_[source] = !tree.regular;
    if (!tree.regular) any_irregular_.store(true, std::memory_order_relaxed);
  }
  return *slot;
}

void FailureDistances::Decide(int source, Tree& tree) {
  tree.epoch = epoch_;
  tree.state = Tree::State::kBase;
  if (exclusion_.link < 0 && exclusion_.srlg < 0 && exclusion_.facility < 0) return;
  if (exclusion_.facility == source) {
    tree.state = Tree::State::kSourceDown;
    return;
  }
  if (!tree.regular) {
    tree.recomputed = ShortestPaths::Run(snapshot_, source, exclusion_);
    tree.state = Tree::State::kRecomputed;
    return;
  }
  // The roots of the subtrees the failure cuts off.
  roots_.clear();
  AnyCutRoot(tree, [&](int root) {
    roots_.push_back(root);
    return false;
  });
  if (roots_.empty()) return;
  Repair(tree);
  tree.state = Tree::State::kRepaired;
}

void FailureDistances::ExcludedLinks() {
  if (excluded_epoch_ == epoch_) return;
  const int links = snapshot_.link_count();
  if (base_excluded_.empty() && links > 0) {  // what no failure brings back: links down, or out of the mask
    const Exclusion none{.allowed = allowed_};
    base_excluded_.resize(links);
    for (int link = 0; link < links; ++link) base_excluded_[link] = none.Excludes(snapshot_, link);
    excluded_ = base_excluded_;
  }
  // The last failure's links back, then this one's out: its link, its
  // SRLG's, its facility's (what Exclusion::Excludes says, without asking
  // every link: a site's detours set hundreds of failures).
  for (const int link : failed_links_) excluded_[link] = base_excluded_[link];
  failed_links_.clear();
  auto exclude = [&](int link) {
    if (excluded_[link]) return;
    excluded_[link] = 1;
    failed_links_.push_back(link);
  };
  if (exclusion_.link >= 0 && exclusion_.link < links) exclude(exclusion_.link);
  if (exclusion_.srlg >= 0 && exclusion_.srlg < static_cast<int>(srlg_links_.size())) {
    for (const int link : srlg_links_[exclusion_.srlg]) exclude(link);
  }
  if (exclusion_.facility >= 0 && exclusion_.facility < snapshot_.facility_count()) {
    const int failed = exclusion_.facility;
    for (uint32_t k = out_begin_[failed]; k < out_begin_[failed + 1]; ++k) exclude(out_arcs_[k].link);
    for (uint32_t k = in_begin_[failed]; k < in_begin_[failed + 1]; ++k) exclude(in_arcs_[k].link);
  }
  excluded_epoch_ = epoch_;
}

void FailureDistances::Repair(Tree& tree) {
  const int n = snapshot_.facility_count();
  ExcludedLinks();
  if (tree.parent.empty()) {
    tree.parent.assign(n, -1);
    tree.parent_arc_link.assign(n, -1);
  }
  // distance_us is a whole row (Row): the last repair's part back to base,
  // then this one's.
  if (tree.distance_us.empty()) tree.distance_us = tree.base.distance_us;
  for (int at : tree.repaired) tree.distance_us[at] = tree.base.distance_us[at];
  tree.repaired.clear();
  const uint32_t now = epoch_;
  const std::vector<int>& cut = tree.repaired;  // the facilities cut off, each once
  for (int root : roots_) {
    for (int i = tree.first[root]; i < tree.end[root]; ++i) {
      const int at = tree.preorder[i];
      if (tree.target[at].stamp == now) continue;
      tree.target[at].stamp = now;
      tree.repaired.push_back(at);
      tree.distance_us[at] = kUnreachable;
      tree.parent[at] = -1;
      tree.parent_arc_link[at] = -1;
    }
  }
  // The rest of the tree keeps its distances (they cannot shrink): seed the
  // cut facilities from it, then a Dijkstra among them. Parents as
  // ShortestPaths::Run leaves them: the lowest-index link on a shortest
  // path into the facility. Every link into a cut facility is weighed once
  // with its source's final distance (from the rest at the seeding, from a
  // cut one when the Dijkstra settles it), so keeping, per facility, the
  // lowest-index link among those that give its least distance is that.
  auto weigh = [&](int at, const Arc& arc, int from, uint64_t candidate) {
    uint64_t& distance = tree.distance_us[at];
    if (candidate > distance || (candidate == distance && arc.link > tree.parent_arc_link[at])) return false;
    const bool shorter = candidate < distance;
    distance = candidate;
    tree.parent_arc_link[at] = arc.link;
    tree.parent[at] = from;
    return shorter;
  };
  std::vector<std::pair<uint64_t, int>>& queue = queue_;
  queue.clear();
  for (int at : cut) {
    for (uint32_t k = in_begin_[at]; k < in_begin_[at + 1]; ++k) {
      const Arc& arc = in_arcs_[k];
      const int from = arc.other;
      if (tree.target[from].stamp == now || tree.base.distance_us[from] == kUnreachable || Excluded(arc.link)) continue;
      weigh(at, arc, from, tree.base.distance_us[from] + arc.cost_us);
    }
    if (tree.distance_us[at] != kUnreachable) queue.emplace_back(tree.distance_us[at], at);
  }
  std::make_heap(queue.begin(), queue.end(), std::greater<>());
  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end(), std::greater<>());
    const auto [distance, at] = queue.back();
    queue.pop_back();
    if (distance != tree.distance_us[at]) continue;
    for (uint32_t k = out_begin_[at]; k < out_begin_[at + 1]; ++k) {
      const Arc& arc = out_arcs_[k];
      const int next = arc.other;
      if (tree.target[next].stamp != now || Excluded(arc.link)) continue;
      const uint64_t candidate = distance + arc.cost_us;
      if (weigh(next, arc, at, candidate)) {
        queue.emplace_back(candidate, next);
        std::push_heap(queue.begin(), queue.end(), std::greater<>());
      }
    }
  }
}

}  // namespace geodesic::pathcomp
