#include "pathcomp/solver/internal/chain_layers.h"

#include <algorithm>

namespace geodesic::pathcomp::internal {

// Why call `call` (of `service`) of a chain with these pins has no replica
// left under the failure of `failed_facility` (-1: none), in `unplaced`;
// true when it is kUnreachable (the caller lists the facilities it could
// have been called from).
bool Unplaced(const Snapshot& snapshot, const Chain& pins, int call, int service, int failed_facility,
              ChainPlacement& unplaced) {
  const ServiceReplicas& replicas = snapshot.service(service);
  unplaced.failed_call = call;
  if (failed_facility >= 0 && !pins.pinned_replicas.empty() && pins.pinned_replicas[call] == failed_facility) {
    unplaced.why = ChainUnplacedWhy::kPinnedToFailed;
    unplaced.failed_facility = failed_facility;
  } else if (!pins.pinned_replicas.empty() || !pins.allowed.empty()) {
    unplaced.why = ChainUnplacedWhy::kPinBlocks;
  } else if (replicas.facilities.empty()) {
    unplaced.why = ChainUnplacedWhy::kNoKnownReplica;
  } else if (failed_facility >= 0 && std::all_of(replicas.facilities.begin(), replicas.facilities.end(),
                                                 [&](int f) { return f == failed_facility; })) {
    unplaced.why = ChainUnplacedWhy::kOneReplica;
    unplaced.failed_facility = failed_facility;
  } else {
    unplaced.why = ChainUnplacedWhy::kUnreachable;
    return true;
  }
  return false;
}

// SolveLayers for `chain` under the failure `paths` is set to (failing
// `failed_facility`, -1: none), from `unfailed`, the chain's layered graph
// with no failure (LayerEntry, on the same paths). Sums only grow under a
// failure, so an entry keeps its unfailed sum and predecessor when that
// predecessor kept its sum and the failure cannot change the round trip
// between them (FailureDistances::MayChange): any other predecessor gives at
// least as much, and those before it in order gave more. The other entries
// are solved as SolveLayers does them, so the answer is the same, tie-breaks
// included.
// `bound_us`: the sum of a placement that survives the failure (kUnreachable:
// none known). An entry through which every placement takes more is left
// out: it cannot be on the best placement, nor tie with an entry of it (that
// would make a placement through it as good), so the answer stays the same;
// the entries of the best placement keep their sums and predecessors (their
// predecessors left out gave more), which is all the answer reads. With no
// bound nothing is left out, so an unplaced answer is SolveLayers' too.
bool SolveLayersAfter(const Snapshot& snapshot, const LayerChain& chain, const LayerCall* calls,
                      const LayerEntry* unfailed, const Chain* pinned, int failed_facility, uint64_t bound_us,
                      FailureDistances& paths, LayerScratch& scratch, ChainPlacement& unplaced) {
  if (failed_facility == chain.origin) {
    unplaced.failed_call = 0;
    unplaced.why = ChainUnplacedWhy::kOriginDown;
    unplaced.failed_facility = chain.origin;
    return false;
  }
  // Layer i's positions from begin[i]; every scratch array sized once, only
  // ever grown (no per-search bookkeeping beyond what is written).
  const size_t positions = chain.entry_count;
  if (scratch.begin.size() < static_cast<size_t>(chain.calls) + 2) scratch.begin.resize(chain.calls + 2);
  if (scratch.sum_us.size() < positions) {
    scratch.sum_us.resize(positions);
    scratch.called_from.resize(positions);
    scratch.kept.resize(positions);
  }
  size_t* begin = scratch.begin.data();
  begin[0] = 0;
  begin[1] = 1;
  for (int call = 1; call < chain.calls; ++call) begin[call + 1] = begin[call] + calls[call - 1].count;
  uint64_t* sum = scratch.sum_us.data();
  int* from = scratch.called_from.data();
  uint32_t* kept = scratch.kept.data();
  sum[0] = 0;
  from[0] = -1;
  kept[0] = 1;
  int previous_count = 1;
  for (int call = 0; call < chain.calls; ++call) {
    const int count = calls[call].count;
    const size_t previous = begin[call], at = begin[call + 1];
    const LayerEntry* previous_entries = unfailed + previous;
    bool any = false;
    for (int position = 0; position < count; ++position) {
      const size_t k = at + position;
      const LayerEntry& was = unfailed[k];
      const int replica = was.facility;
      if (was.total_us == kUnreachable || replica == failed_facility ||
          (bound_us != kUnreachable && (was.to_go_us == kUnreachable || was.total_us + was.to_go_us > bound_us))) {
        sum[k] = kUnreachable;
        kept[k] = 0;
        continue;
      }
      const int caller = previous_entries[was.from].facility;
      if (kept[previous + was.from] &&
          (caller == replica || (!paths.MayChange(caller, replica) && !paths.MayChange(replica, caller)))) {
        sum[k] = was.total_us;
        from[k] = was.from;
        kept[k] = 1;
        any = true;
        continue;
      }
      const uint64_t* replica_row = paths.Row(replica);
      uint64_t best = kUnreachable;
      int best_from = -1;
      for (int j = 0; j < previous_count; ++j) {
        const uint64_t before = sum[previous + j];
        if (before == kUnreachable) continue;
        const int facility = previous_entries[j].facility;
        uint64_t network = 0;
        if (facility != replica) {
          const uint64_t there = paths.Row(facility)[replica];
          const uint64_t back = replica_row[facility];
          if (there == kUnreachable || back == kUnreachable) continue;
          network = there + back;
        }
        if (before + network < best) {  // ties: lowest position
          best = before + network;
          best_from = j;
        }
      }
      if (best_from < 0 || (bound_us != kUnreachable && best + calls[call].service_time_us + was.to_go_us > bound_us)) {
        sum[k] = kUnreachable;
        kept[k] = 0;
        continue;
      }
      sum[k] = best + calls[call].service_time_us;
      from[k] = best_from;
      kept[k] = sum[k] == was.total_us;
      any = true;
    }
    if (!any) {
      static const Chain kNoPins{};
      if (Unplaced(snapshot, pinned != nullptr ? *pinned : kNoPins, call, calls[call].service, failed_facility,
                   unplaced)) {
        for (int j = 0; j < previous_count; ++j) {
          if (sum[previous + j] != kUnreachable) unplaced.unreached_from.push_back(previous_entries[j].facility);
        }
      }
      return false;
    }
    previous_count = count;
  }

  // The best last entry, then back through the layers.
  const size_t count = chain.calls;
  const size_t last = begin[count];
  int position = -1;
  for (int j = 0; j < previous_count; ++j) {
    if (sum[last + j] != kUnreachable && (position < 0 || sum[last + j] < sum[last + position])) position = j;
  }
  scratch.total_us = sum[last + position];
  if (scratch.replica.size() < count) {  // only grown: sized for the longest chain yet
    scratch.replica.resize(count);
    scratch.from.resize(count);
  }
  if (scratch.rtt_us.size() < count) scratch.rtt_us.resize(count);
  for (size_t call = count; call-- > 0;) {
    const size_t k = begin[call + 1] + position;
    const int caller = from[k];
    scratch.replica[call] = unfailed[k].facility;
    scratch.from[call] = unfailed[begin[call] + caller].facility;
    scratch.rtt_us[call] = sum[k] - calls[call].service_time_us - sum[begin[call] + caller];
    position = caller;
  }
  return true;
}

}  // namespace geodesic::pathcomp::internal
