#include "pathcomp/solver/wcmp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pathcomp/solver/shortest_paths.h"

namespace geodesic::pathcomp {
namespace {

// Flows below this share of the largest carried demand are float noise.
constexpr double kNoiseFloor = 1e-9;
// Forwarding may differ from the bound by this share of the largest carried
// demand (float noise, dropped noise-level flows).
constexpr double kCheckTolerance = 1e-6;

double LargestCarried(const McfAllocation& allocation) {
  double largest = 0;
  for (double gbps : allocation.carried_gbps) largest = std::max(largest, gbps);
  return std::max(1.0, largest);
}

absl::Status ValidateAllocation(const Snapshot& snapshot, const McfAllocation& allocation) {
  const std::vector<Demand>& demands = snapshot.demands();
  if (allocation.paths.size() != demands.size() || allocation.carried_gbps.size() != demands.size() ||
      allocation.arc_load_gbps.size() != static_cast<size_t>(snapshot.link_count())) {
    return absl::InvalidArgumentError(
        absl::StrCat("allocation has ", allocation.paths.size(), " commodities and ",
                     allocation.arc_load_gbps.size(), " arcs; the snapshot has ", demands.size(),
                     " demands and ", snapshot.link_count(), " links"));
  }
  for (size_t c = 0; c < demands.size(); ++c) {
    for (const McfPathFlow& path : allocation.paths[c]) {
      if (!std::isfinite(path.gbps) || path.gbps < 0) {
        return absl::InvalidArgumentError(absl::StrCat("commodity ", c, ": path flow ", path.gbps));
      }
      int at = demands[c].src;
      for (int link : path.arcs) {
        if (link < 0 || link >= snapshot.link_count() || snapshot.link_src(link) != at) {
          return absl::InvalidArgumentError(absl::StrCat("commodity ", c, ": path is not a walk over links"));
        }
        if (!snapshot.link_state(link).usable && path.gbps > 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("commodity ", c, ": flow on unusable link ", snapshot.link_id(link)));
        }
        at = snapshot.link_dst(link);
      }
      if (at != demands[c].dst) {
        return absl::InvalidArgumentError(absl::StrCat("commodity ", c, ": path ends at ", snapshot.facility_id(at),
                                                       ", not ", snapshot.facility_id(demands[c].dst)));
      }
    }
  }
  return absl::OkStatus();
}

// Cancels every directed cycle among the links with flow (> 0), subtracting
// each cycle's smallest flow from its links. One depth-first search whose
// stack is cut back to the first link a cancellation emptied; every
// cancellation empties a link, so it ends after at most link_count of them.
void CancelCycles(const Snapshot& snapshot, std::vector<double>& flow, double floor, int* cycles,
                  double* cancelled_gbps) {
  const int n = snapshot.facility_count();
  enum : char { kNew, kOnStack, kDone };
  std::vector<char> state(n, kNew);
  std::vector<size_t> next_out(n, 0);       // position in out_links() to look at next
  std::vector<int> stack_pos(n, -1);
  std::vector<int> stack;                   // facilities
  std::vector<int> entered_by;              // link into stack[i] (-1 for the root)
  for (int root = 0; root < n; ++root) {
    if (state[root] != kNew) continue;
    state[root] = kOnStack;
    stack_pos[root] = 0;
    stack = {root};
    entered_by = {-1};
    while (!stack.empty()) {
      const int at = stack.back();
      const auto out = snapshot.out_links(at);
      if (next_out[at] == out.size()) {
        state[at] = kDone;
        stack_pos[at] = -1;
        stack.pop_back();
        entered_by.pop_back();
        continue;
      }
      const int link = out[next_out[at]];
      const int to = snapshot.link_dst(link);
      if (flow[link] <= 0 || state[to] == kDone) {
        ++next_out[at];
        continue;
      }
      if (state[to] == kNew) {
        state[to] = kOnStack;
        stack_pos[to] = static_cast<int>(stack.size());
        stack.push_back(to);
        entered_by.push_back(link);
        continue;  // `link` is looked at again once `to` is done
      }
      // A cycle: stack[stack_pos[to]] -> ... -> at -> to. The link out of
      // stack[i] is entered_by[i + 1], and `link` out of `at`.
      const int first = stack_pos[to];
      auto out_of = [&](int i) { return i + 1 < static_cast<int>(stack.size()) ? entered_by[i + 1] : link; };
      double smallest = flow[link];
      for (int i = first; i < static_cast<int>(stack.size()); ++i) smallest = std::min(smallest, flow[out_of(i)]);
      int cut = -1;  // the first facility on the cycle whose link out emptied
      for (int i = first; i < static_cast<int>(stack.size()); ++i) {
        double& f = flow[out_of(i)];
        f -= smallest;
        if (f < floor) f = 0;
        if (f == 0 && cut < 0) cut = i;
      }
      ++*cycles;
      *cancelled_gbps += smallest * static_cast<double>(stack.size() - first);
      while (static_cast<int>(stack.size()) > cut + 1) {
        state[stack.back()] = kNew;  // its search resumes where it stopped when met again
        stack_pos[stack.back()] = -1;
        stack.pop_back();
        entered_by.pop_back();
      }
    }
  }
}

// Drops noise: flow below `floor`, flow out of `dst` (only possible as
// noise once cycles are gone) and flow into a facility other than `dst`
// with no flow out of it.
void DropDanglingFlow(const Snapshot& snapshot, const std::vector<std::vector<int>>& in_links, int dst,
                      double floor, std::vector<double>& flow) {
  const int n = snapshot.facility_count();
  for (double& f : flow) {
    if (f < floor) f = 0;
  }
  for (int link : snapshot.out_links(dst)) flow[link] = 0;
  std::vector<double> outflow(n, 0);
  for (int link = 0; link < snapshot.link_count(); ++link) outflow[snapshot.link_src(link)] += flow[link];
  std::vector<int> dead;
  for (int v = 0; v < n; ++v) {
    if (v != dst && outflow[v] == 0) dead.push_back(v);
  }
  while (!dead.empty()) {
    const int v = dead.back();
    dead.pop_back();
    for (int link : in_links[v]) {
      if (flow[link] == 0) continue;
      const int from = snapshot.link_src(link);
      outflow[from] -= flow[link];
      flow[link] = 0;
      bool any = false;
      for (int out : snapshot.out_links(from)) any = any || flow[out] > 0;
      if (!any && from != dst) {
        outflow[from] = 0;
        dead.push_back(from);
      }
    }
  }
}

// Integer weights for flows (all > 0): largest remainder to `resolution`
// (ties to the first), then at least 1 each.
std::vector<uint32_t> RoundShares(const std::vector<double>& flows, uint32_t resolution) {
  double total = 0;
  for (double f : flows) total += f;
  std::vector<uint32_t> weights(flows.size());
  std::vector<std::pair<double, size_t>> remainders;
  uint64_t assigned = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    const double exact = static_cast<double>(resolution) * flows[i] / total;
    const double whole = std::min(std::floor(exact), static_cast<double>(resolution));
    weights[i] = static_cast<uint32_t>(whole);
    assigned += weights[i];
    remainders.emplace_back(exact - whole, i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; assigned < resolution && k < remainders.size(); ++k, ++assigned) {
    ++weights[remainders[k].second];
  }
  for (uint32_t& w : weights) w = std::max<uint32_t>(w, 1);
  return weights;
}

// Per facility: the sum of F_v * eps_v over itself and the facilities
// upstream of it in the flow toward one destination (see wcmp.h).
std::vector<double> UpstreamRoundingError(const Snapshot& snapshot, const std::vector<double>& flow,
                                          const std::vector<double>& injected) {
  const int n = snapshot.facility_count();
  const int words = (n + 63) / 64;
  std::vector<uint64_t> upstream(static_cast<size_t>(n) * words, 0);  // bitsets, self included
  std::vector<int> indegree(n, 0);
  for (int link = 0; link < snapshot.link_count(); ++link) {
    if (flow[link] > 0) ++indegree[snapshot.link_dst(link)];
  }
  std::vector<int> ready;
  for (int v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push_back(v);
  }
  while (!ready.empty()) {
    const int v = ready.back();
    ready.pop_back();
    uint64_t* mine = &upstream[static_cast<size_t>(v) * words];
    mine[v / 64] |= uint64_t{1} << (v % 64);
    for (int link : snapshot.out_links(v)) {
      if (flow[link] <= 0) continue;
      const int to = snapshot.link_dst(link);
      uint64_t* theirs = &upstream[static_cast<size_t>(to) * words];
      for (int w = 0; w < words; ++w) theirs[w] |= mine[w];
      if (--indegree[to] == 0) ready.push_back(to);
    }
  }
  std::vector<double> error(n, 0);
  for (int v = 0; v < n; ++v) {
    const uint64_t* mine = &upstream[static_cast<size_t>(v) * words];
    for (int u = 0; u < n; ++u) {
      if (injected[u] > 0 && (mine[u / 64] >> (u % 64) & 1)) error[v] += injected[u];
    }
  }
  return error;
}

}  // namespace

absl::StatusOr<Wcmp> BuildWcmp(const Snapshot& snapshot, const McfAllocation& allocation, const WcmpConfig& config) {
  if (config.weight_resolution == 0) return absl::InvalidArgumentError("weight_resolution must be at least 1");
  if (absl::Status valid = ValidateAllocation(snapshot, allocation); !valid.ok()) return valid;
  const int n = snapshot.facility_count();
  const int m = snapshot.link_count();
  const double floor = kNoiseFloor * LargestCarried(allocation);

  Wcmp wcmp;
  wcmp.facility_count = n;
  wcmp.link_count = m;
  wcmp.weight_resolution = config.weight_resolution;
  wcmp.routes.assign(n, std::vector<WcmpRoute>(n));
  wcmp.flow_gbps.assign(n, std::vector<double>(m, 0));
  wcmp.arc_load_gbps.assign(m, 0);
  wcmp.rounding_bound_gbps.assign(m, 0);

  const std::vector<Demand>& demands = snapshot.demands();
  for (size_t c = 0; c < demands.size(); ++c) {
    std::vector<double>& flow = wcmp.flow_gbps[demands[c].dst];
    for (const McfPathFlow& path : allocation.paths[c]) {
      for (int link : path.arcs) flow[link] += path.gbps;
    }
  }
  std::vector<std::vector<int>> in_links(n);
  for (int link = 0; link < m; ++link) in_links[snapshot.link_dst(link)].push_back(link);
  // Lowest latency from every facility to every other, for the fallback.
  std::vector<ShortestPaths> from;
  from.reserve(n);
  for (int v = 0; v < n; ++v) from.push_back(ShortestPaths::Run(snapshot, v, Exclusion{}));

  for (int dst = 0; dst < n; ++dst) {
    std::vector<double>& flow = wcmp.flow_gbps[dst];
    CancelCycles(snapshot, flow, floor, &wcmp.cancelled_cycles, &wcmp.cancelled_gbps);
    DropDanglingFlow(snapshot, in_links, dst, floor, flow);

    std::vector<double> injected(n, 0);  // F_v * eps_v
    for (int v = 0; v < n; ++v) {
      if (v == dst || from[v].distance_us[dst] == kUnreachable) continue;
      WcmpRoute& route = wcmp.routes[dst][v];
      std::vector<int> links;
      std::vector<double> flows;
      for (int link : snapshot.out_links(v)) {
        if (flow[link] > 0) {
          links.push_back(link);
          flows.push_back(flow[link]);
        }
      }
      if (!links.empty()) {
        route.follows_allocation = true;
        const std::vector<uint32_t> weights = RoundShares(flows, config.weight_resolution);
        double total_flow = 0, total_weight = 0;
        for (size_t i = 0; i < links.size(); ++i) {
          total_flow += flows[i];
          total_weight += weights[i];
        }
        double share_error = 0;
        for (size_t i = 0; i < links.size(); ++i) {
          route.next_hops.push_back({links[i], weights[i]});
          share_error += std::abs(weights[i] / total_weight - flows[i] / total_flow);
        }
        injected[v] = total_flow * share_error;
        continue;
      }
      // No flow toward dst here: every first link of a lowest-latency path.
      for (int link : snapshot.out_links(v)) {
        if (!snapshot.link_state(link).usable) continue;
        const uint64_t rest = from[snapshot.link_dst(link)].distance_us[dst];
        if (rest != kUnreachable && snapshot.link_state(link).cost_us + rest == from[v].distance_us[dst]) {
          route.next_hops.push_back({link, 1});
        }
      }
    }
    for (int v = 0; v < n; ++v) {
      std::sort(wcmp.routes[dst][v].next_hops.begin(), wcmp.routes[dst][v].next_hops.end(),
                [](const WeightedNextHop& a, const WeightedNextHop& b) { return a.link < b.link; });
    }
    if (std::none_of(flow.begin(), flow.end(), [](double f) { return f > 0; })) continue;
    const std::vector<double> upstream = UpstreamRoundingError(snapshot, flow, injected);
    for (int link = 0; link < m; ++link) {
      if (flow[link] <= 0) continue;
      wcmp.arc_load_gbps[link] += flow[link];
      wcmp.rounding_bound_gbps[link] += upstream[snapshot.link_src(link)];
    }
  }
  return wcmp;
}

ForwardingCheck CheckWcmpForwarding(const Snapshot& snapshot, const Wcmp& wcmp, const McfAllocation& allocation) {
  const int n = snapshot.facility_count();
  const int m = snapshot.link_count();
  ForwardingCheck check;
  check.arc_load_gbps.assign(m, 0);
  check.tolerance_gbps = kCheckTolerance * LargestCarried(allocation);
  if (wcmp.facility_count != n || wcmp.link_count != m || wcmp.routes.size() != static_cast<size_t>(n)) {
    check.loop = "the weights were not built from this snapshot";
    return check;
  }

  std::vector<std::vector<double>> supply(n);  // [dst][facility]
  const std::vector<Demand>& demands = snapshot.demands();
  for (size_t c = 0; c < demands.size() && c < allocation.carried_gbps.size(); ++c) {
    if (allocation.carried_gbps[c] <= 0) continue;
    auto& toward = supply[demands[c].dst];
    if (toward.empty()) toward.assign(n, 0);
    toward[demands[c].src] += allocation.carried_gbps[c];
  }

  for (int dst = 0; dst < n; ++dst) {
    // Depth-first over every facility's next hops toward dst: a link to a
    // facility still on the stack closes a loop; finishing order reversed
    // is a forwarding order.
    enum : char { kNew, kOnStack, kDone };
    std::vector<char> state(n, kNew);
    std::vector<size_t> next_hop(n, 0);
    std::vector<int> finished;
    std::vector<int> stack;
    std::string loop;
    for (int root = 0; root < n && loop.empty(); ++root) {
      if (state[root] != kNew) continue;
      state[root] = kOnStack;
      stack = {root};
      while (!stack.empty() && loop.empty()) {
        const int at = stack.back();
        const auto& hops = wcmp.route(at, dst).next_hops;
        if (at == dst || next_hop[at] == hops.size()) {
          state[at] = kDone;
          finished.push_back(at);
          stack.pop_back();
          continue;
        }
        const int to = snapshot.link_dst(hops[next_hop[at]++].link);
        if (state[to] == kNew) {
          state[to] = kOnStack;
          stack.push_back(to);
        } else if (state[to] == kOnStack) {
          loop = absl::StrCat("toward ", snapshot.facility_id(dst), ": ");
          const auto start = std::find(stack.begin(), stack.end(), to);
          for (auto it = start; it != stack.end(); ++it) absl::StrAppend(&loop, snapshot.facility_id(*it), " -> ");
          absl::StrAppend(&loop, snapshot.facility_id(to));
        }
      }
    }
    if (!loop.empty()) {
      if (check.loop.empty()) check.loop = loop;
      for (double gbps : supply[dst]) check.undelivered_gbps += gbps;
      continue;
    }
    if (supply[dst].empty()) continue;
    std::vector<double> through = supply[dst];
    for (auto it = finished.rbegin(); it != finished.rend(); ++it) {
      const int at = *it;
      if (at == dst || through[at] == 0) continue;
      const auto& hops = wcmp.route(at, dst).next_hops;
      if (hops.empty()) {
        check.undelivered_gbps += through[at];
        continue;
      }
      double total_weight = 0;
      for (const WeightedNextHop& hop : hops) total_weight += hop.weight;
      for (const WeightedNextHop& hop : hops) {
        const double gbps = through[at] * hop.weight / total_weight;
        check.arc_load_gbps[hop.link] += gbps;
        through[snapshot.link_dst(hop.link)] += gbps;
      }
    }
  }

  check.max_excess_over_bound_gbps = -std::numeric_limits<double>::infinity();
  for (int link = 0; link < m; ++link) {
    const double expected = link < static_cast<int>(wcmp.arc_load_gbps.size()) ? wcmp.arc_load_gbps[link] : 0;
    const double bound = link < static_cast<int>(wcmp.rounding_bound_gbps.size()) ? wcmp.rounding_bound_gbps[link] : 0;
    const double diff = std::abs(check.arc_load_gbps[link] - expected);
    if (diff > check.max_abs_diff_gbps) {
      check.max_abs_diff_gbps = diff;
      check.worst_link = link;
    }
    if (expected > check.tolerance_gbps) check.max_rel_diff = std::max(check.max_rel_diff, diff / expected);
    check.max_excess_over_bound_gbps = std::max(check.max_excess_over_bound_gbps, diff - bound);
    const double capacity = snapshot.link_capacity_gbps(link);
    if (capacity > 0) check.max_utilization = std::max(check.max_utilization, check.arc_load_gbps[link] / capacity);
  }
  if (m == 0) check.max_excess_over_bound_gbps = 0;
  check.ok = check.loop.empty() && check.undelivered_gbps <= check.tolerance_gbps &&
             check.max_excess_over_bound_gbps <= check.tolerance_gbps;
  return check;
}

}  // namespace geodesic::pathcomp
