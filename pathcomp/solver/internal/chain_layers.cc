#include "pathcomp/solver/internal/chain_layers.h"

#include <algorithm>
#include <array>

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

namespace {

// `chain`'s layers laid out in `scratch` (layer i's positions from
// begin[i]: the origin's, then each call's replicas), every array grown to
// fit, never shrunk (no per-search bookkeeping beyond what is written).
// Returns begin.
size_t* LayOutLayers(const LayerChain& chain, const LayerCall* calls, LayerScratch& scratch) {
  if (scratch.begin.size() < static_cast<size_t>(chain.calls) + 2) scratch.begin.resize(chain.calls + 2);
  scratch.GrowLayers(chain.entry_count);
  size_t* begin = scratch.begin.data();
  begin[0] = 0;
  begin[1] = 1;
  for (int call = 1; call < chain.calls; ++call) begin[call + 1] = begin[call] + calls[call - 1].count;
  return begin;
}

// One layer of SolveLayersOnBlocks: each of the `count` entries called from
// the lowest of the `previous` positions giving its least sum (`before` by
// position, then the round trip, row by row from there), its service time
// added (RoundTripBlocks::kFar or more: no way to it). Returns whether any
// entry has a way. Sums of kFar or more stay below 2^64: a sum is at most
// kFar plus a chain's real ones (RoundTripBlocks::usable) before a round
// trip of at most kFar is added.
template <int kPrevious, int kCount>
bool RelaxLayer(const uint64_t* before, const uint64_t* round_trip, uint64_t service_us, uint64_t* now,
                int* called_from) {
  constexpr uint64_t kFar = RoundTripBlocks::kFar;
  uint64_t best[kCount];
  int by[kCount];
#pragma GCC unroll 4
  for (int position = 0; position < kCount; ++position) {
    best[position] = kFar;
    by[position] = -1;
  }
#pragma GCC unroll 4
  for (int j = 0; j < kPrevious; ++j) {
#pragma GCC unroll 4
    for (int position = 0; position < kCount; ++position) {
      const uint64_t through = before[j] + round_trip[j * kCount + position];
      by[position] = through < best[position] ? j : by[position];  // ties: lowest position
      best[position] = std::min(best[position], through);
    }
  }
  bool any = false;
#pragma GCC unroll 4
  for (int position = 0; position < kCount; ++position) {
    any |= best[position] < kFar;
    now[position] = best[position] + service_us;
    called_from[position] = by[position];
  }
  return any;
}

// RelaxLayer for layers of any size.
bool RelaxAnyLayer(int previous, int count, const uint64_t* before, const uint64_t* round_trip, uint64_t service_us,
                   uint64_t* now, int* called_from) {
  constexpr uint64_t kFar = RoundTripBlocks::kFar;
  for (int position = 0; position < count; ++position) {
    now[position] = kFar;
    called_from[position] = -1;
  }
  for (int j = 0; j < previous; ++j) {
    const uint64_t* row = round_trip + static_cast<size_t>(j) * count;
    for (int position = 0; position < count; ++position) {
      const uint64_t through = before[j] + row[position];
      if (through < now[position]) {
        now[position] = through;
        called_from[position] = j;
      }
    }
  }
  bool any = false;
  for (int position = 0; position < count; ++position) {
    any |= now[position] < kFar;
    now[position] += service_us;
  }
  return any;
}

using RelaxFn = bool (*)(const uint64_t*, const uint64_t*, uint64_t, uint64_t*, int*);
// RelaxLayer by layer sizes, for up to this many positions a layer (most
// services have a few replicas).
constexpr int kRelaxed = 4;
template <int kPrevious>
constexpr std::array<RelaxFn, kRelaxed> RelaxRow() {
  return {&RelaxLayer<kPrevious, 1>, &RelaxLayer<kPrevious, 2>, &RelaxLayer<kPrevious, 3>, &RelaxLayer<kPrevious, 4>};
}
constexpr std::array<std::array<RelaxFn, kRelaxed>, kRelaxed> kRelax = {RelaxRow<1>(), RelaxRow<2>(), RelaxRow<3>(),
                                                                        RelaxRow<4>()};

}  // namespace

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
  if (OriginDown(chain.origin, failed_facility, unplaced)) return false;
  size_t* begin = LayOutLayers(chain, calls, scratch);
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
  scratch.GrowCalls(count);
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

bool SolveLayersOnBlocks(const Snapshot& snapshot, const LayerChain& chain, const LayerCall* calls,
                         const LayerEntry* unfailed, int failed_facility, RoundTripBlocks::UnderFailure& round_trips,
                         LayerScratch& scratch, ChainPlacement& unplaced) {
  if (OriginDown(chain.origin, failed_facility, unplaced)) return false;
  // Sums with no way are RoundTripBlocks::kFar or more (a failed
  // facility's round trips are, even within it, so its entries need no test).
  // Layers as SolveLayersAfter lays them out, their offsets counted as the
  // loops go: layer i + 1 (call i's replicas) after layer i's `size(i)`.
  constexpr uint64_t kFar = RoundTripBlocks::kFar;
  auto size = [&](int layer) { return layer == 0 ? 1 : calls[layer - 1].count; };
  scratch.GrowLayers(chain.entry_count);
  uint64_t* sum = scratch.sum_us.data();
  int* from = scratch.called_from.data();
  // The layers up to the first call made over a block the failure may
  // change keep their unfailed sums and predecessors (layer `first`'s sums
  // copied, the ones before it read where they are).
  int first = 0;
  size_t at = 0;  // layer first's offset
  for (; first < chain.calls && !round_trips.MayChange(calls[first].block); ++first) at += size(first);
  int previous_count = size(first);
  for (int j = 0; j < previous_count; ++j) {
    const uint64_t was = unfailed[at + j].total_us;
    sum[at + j] = was == kUnreachable ? kFar : was;
  }
  for (int call = first; call < chain.calls; ++call) {
    const LayerCall& made = calls[call];
    const uint64_t* round_trip = round_trips.RoundTrips(made.block);  // previous positions by this call's
    const int count = made.count;
    const uint64_t* before = sum + at;
    const size_t next = at + static_cast<size_t>(previous_count);
    const bool any =
        previous_count <= kRelaxed && count <= kRelaxed
            ? kRelax[previous_count - 1][count - 1](before, round_trip, made.service_time_us, sum + next, from + next)
            : RelaxAnyLayer(previous_count, count, before, round_trip, made.service_time_us, sum + next, from + next);
    if (!any) {
      static const Chain kNoPins{};
      if (Unplaced(snapshot, kNoPins, call, made.service, failed_facility, unplaced)) {
        for (int j = 0; j < previous_count; ++j) {
          if (before[j] < kFar) unplaced.unreached_from.push_back(unfailed[at + j].facility);
        }
      }
      return false;
    }
    at = next;
    previous_count = count;
  }

  // The best last entry (at `at`), then back through the layers: those
  // after `first` as solved here, the others as they were.
  const int count = chain.calls;
  int position = 0;
  for (int j = 1; j < previous_count; ++j) {
    if (sum[at + j] < sum[at + position]) position = j;
  }
  scratch.total_us = sum[at + position];
  scratch.GrowCalls(count);
  auto total_at = [&](int layer, size_t k) { return layer >= first ? sum[k] : unfailed[k].total_us; };
  for (int call = count; call-- > 0;) {
    const size_t k = at + position;
    const size_t before = at - size(call);  // layer call's offset
    const int caller = call + 1 > first ? from[k] : unfailed[k].from;
    const size_t called_from = before + caller;
    scratch.replica[call] = unfailed[k].facility;
    scratch.from[call] = unfailed[called_from].facility;
    scratch.rtt_us[call] = total_at(call + 1, k) - calls[call].service_time_us - total_at(call, called_from);
    position = caller;
    at = before;
  }
  return true;
}

}  // namespace geodesic::pathcomp::internal
