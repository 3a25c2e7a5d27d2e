#pragma once
// The layered graph of a chain's replicas, searched for the least
// latency-sum placement (chain_placer.h says what a placement is): one
// layer per call, an entry per replica the call can run at, each with the
// least sum up to it and the entry it is called from. SolveLayers searches
// it whole; SolveLayersAfter again under a failure, from the unfailed graph
// a plan keeps per chain (LayerChain, LayerCall, LayerEntry).
// Internal to pathcomp/solver (ChainPlacer). Pure; thread-compatible.
#include <cstdint>
#include <vector>

#include "pathcomp/solver/chain_plan.h"
#include "pathcomp/solver/failure_distances.h"
#include "pathcomp/solver/internal/round_trip_blocks.h"
#include "pathcomp/solver/shortest_paths.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp::internal {

// One entry of the layered graph: a replica a call can run at, the least
// latency sum up to and including the call, the entry of the previous layer
// it is called from (its position there), and the distances from the
// replica's facility under the failure (a row by destination).
struct SearchEntry {
  int facility;
  int position;  // of the replica in the service's list (the origin: 0)
  uint64_t total_us;
  int from;
  const uint64_t* row;
};

// The layers of one placement, one after another, and the answer they lead
// to; reused between placements.
struct LayerScratch {
  std::vector<SearchEntry> entries;
  std::vector<size_t> begin;  // layer i: entries[begin[i] .. begin[i + 1])
  // When placed, per call: the replica, the facility it is called from, the
  // round trip between them (at least as many entries as calls).
  std::vector<int> replica, from;
  std::vector<uint64_t> rtt_us;
  uint64_t total_us = 0;
  // SolveLayersAfter's layers, per replica position (after the origin's).
  std::vector<uint64_t> sum_us;
  std::vector<int> called_from;
  std::vector<uint32_t> kept;  // not char: stores to it would alias every load
  // The arrays per replica position (sum_us, called_from, kept) made at
  // least this long: only ever grown, so a search sizes nothing per use.
  void GrowLayers(size_t positions) {
    if (sum_us.size() >= positions) return;
    sum_us.resize(positions);
    called_from.resize(positions);
    kept.resize(positions);
  }
  // The arrays per call (replica, from, rtt_us) made at least this long,
  // likewise: sized for the longest chain yet.
  void GrowCalls(size_t calls) {
    if (rtt_us.size() >= calls) return;
    replica.resize(calls);
    from.resize(calls);
    rtt_us.resize(calls);
  }
};

// A placed chain's unfailed layered graph, kept for its backups
// (SolveLayersAfter) where they read it together: per chain a LayerChain;
// per call a LayerCall (with the primary's hop); per replica position, the
// origin first, then each call's replicas in the service's order, a
// LayerEntry: its facility, the least sum up to and including the call
// (kUnreachable: no entry) and the position in the previous layer it is
// called from.
struct LayerEntry {
  uint64_t total_us = kUnreachable;
  // The least sum of the calls after this one from here (kUnreachable: the
  // chain cannot be finished from here): total_us + to_go_us is the least
  // sum of a placement through the entry, and no failure makes it less.
  uint64_t to_go_us = kUnreachable;
  int from = -1;
  int facility = -1;
};
struct LayerCall {
  uint64_t service_time_us = 0;
  int count = 0;  // replica positions
  int service = -1;
  // The primary's hop: where it runs, where it is called from, its paths
  // and their round trip.
  int replica = -1, from = -1, path_there = 0, path_back = 0;
  uint64_t rtt_us = 0;
  // The number of the primary's hop (replica, from) among all primaries'
  // (ChainBackupPlacer; -1: within one facility).
  int hop = -1;
  // The RoundTripBlocks block the call is made over (-1: a pinned chain's).
  int block = -1;
  // The least unfailed sum of a placement that does not make this call
  // the primary's way (from the primary's entry before it to the primary's
  // replica; kUnreachable: none). No failure makes such a placement cheaper
  // than this; every other placement makes the call as the primary does, and
  // pays at least what the failure adds to its round trip.
  uint64_t others_us = kUnreachable;
};
struct LayerChain {
  static constexpr uint32_t kNone = ~uint32_t{0};
  uint64_t budget_us = 0;
  uint64_t primary_us = 0;  // the primary's latency sum (when kept)
  int origin = -1;
  int calls = 0;
  uint32_t calls_at = kNone;  // its LayerCalls from here (kNone: not kept)
  uint32_t entries_at = 0;    // its LayerEntries from here
  uint32_t entry_count = 0;
  bool pinned = false;        // pinned replicas or an allowed set
};

// What placing a chain reads of it, from wherever it is kept.
struct ChainView {
  int origin;
  const int* services;  // in call order
  int calls;
  const Chain* pins;  // the chain when it has a pin (pinned replicas or an allowed set), else null

  static ChainView Of(const Chain& chain) {
    return {chain.origin, chain.services.data(), static_cast<int>(chain.services.size()),
            chain.pinned_replicas.empty() && chain.allowed.empty() ? nullptr : &chain};
  }
};

// Why call `call` (of `service`) of a chain with these pins has no replica
// left under the failure of `failed_facility` (-1: none), in `unplaced`;
// true when it is kUnreachable (the caller lists the facilities it could
// have been called from).
bool Unplaced(const Snapshot& snapshot, const Chain& pins, int call, int service, int failed_facility,
              ChainPlacement& unplaced);

// Whether `failed_facility` is the chain's `origin`: then nothing is
// placed, which `unplaced` says.
inline bool OriginDown(int origin, int failed_facility, ChainPlacement& unplaced) {
  if (failed_facility != origin) return false;
  unplaced.failed_call = 0;
  unplaced.why = ChainUnplacedWhy::kOriginDown;
  unplaced.failed_facility = origin;
  return true;
}

// The least latency-sum placement of `chain` avoiding `failed_facility`
// (-1: none), with one-way distances from `row(a)` (distances from a by
// destination, which must already avoid the failure and keep to the chain's
// pin mask; a failed facility's entry is never read). Fills `scratch`'s
// answer and returns true when placed; otherwise fills why it is not in
// `unplaced`. Shared by Place() and the plans, so both place alike.
template <typename RowFn>
bool SolveLayers(const Snapshot& snapshot, const ChainView& chain, int failed_facility, RowFn&& row,
                 LayerScratch& scratch, ChainPlacement& unplaced) {
  static const Chain kNoPins{};
  const Chain& pins = chain.pins != nullptr ? *chain.pins : kNoPins;
  if (OriginDown(chain.origin, failed_facility, unplaced)) return false;
  std::vector<SearchEntry>& entries = scratch.entries;
  std::vector<size_t>& begin = scratch.begin;
  entries.clear();
  begin.clear();
  begin.push_back(0);
  entries.push_back(SearchEntry{chain.origin, 0, 0, -1, row(chain.origin)});
  begin.push_back(1);
  for (int call = 0; call < chain.calls; ++call) {
    const int service = chain.services[call];
    const ServiceReplicas& replicas = snapshot.service(service);
    const size_t previous = begin[call];
    const int previous_size = static_cast<int>(begin[call + 1] - previous);
    for (int position = 0; position < static_cast<int>(replicas.facilities.size()); ++position) {
      const int replica = replicas.facilities[position];
      if (replica == failed_facility) continue;
      if (chain.pins != nullptr) {
        if (!pins.pinned_replicas.empty() && replica != pins.pinned_replicas[call]) continue;
        if (!pins.allowed.empty() && !pins.allowed[replica]) continue;
      }
      const uint64_t* replica_row = row(replica);
      SearchEntry best{replica, position, kUnreachable, -1, replica_row};
      for (int j = 0; j < previous_size; ++j) {
        const SearchEntry& from = entries[previous + j];
        uint64_t network = 0;
        if (from.facility != replica) {
          const uint64_t there = from.row[replica];
          const uint64_t back = replica_row[from.facility];
          if (there == kUnreachable || back == kUnreachable) continue;
          network = there + back;
        }
        const uint64_t total = from.total_us + network;
        if (total < best.total_us) {  // ties: lowest index
          best.total_us = total;
          best.from = j;
        }
      }
      if (best.from < 0) continue;
      best.total_us += replicas.service_time_us;
      entries.push_back(best);
    }
    if (entries.size() == begin.back()) {
      if (Unplaced(snapshot, pins, call, service, failed_facility, unplaced)) {
        for (int j = 0; j < previous_size; ++j) unplaced.unreached_from.push_back(entries[previous + j].facility);
      }
      return false;
    }
    begin.push_back(entries.size());
  }

  // The best last entry, then back through the layers.
  const size_t calls = chain.calls;
  const size_t last = begin[calls];
  const int last_size = static_cast<int>(begin[calls + 1] - last);
  int at = 0;
  for (int j = 1; j < last_size; ++j) {
    if (entries[last + j].total_us < entries[last + at].total_us) at = j;
  }
  scratch.total_us = entries[last + at].total_us;
  scratch.replica.resize(calls);
  scratch.from.resize(calls);
  scratch.rtt_us.resize(calls);
  for (size_t call = calls; call-- > 0;) {
    const SearchEntry& entry = entries[begin[call + 1] + at];
    const SearchEntry& from = entries[begin[call] + entry.from];
    scratch.replica[call] = entry.facility;
    scratch.from[call] = from.facility;
    scratch.rtt_us[call] =
        entry.total_us - snapshot.service(chain.services[call]).service_time_us - from.total_us;
    at = entry.from;
  }
  return true;
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
                      FailureDistances& paths, LayerScratch& scratch, ChainPlacement& unplaced);

// SolveLayers for an unpinned `chain` under the failure `round_trips` is
// started on (failing `failed_facility`, -1: none), from `unfailed`, the
// chain's layered graph with no failure, each call made over its block
// (LayerCall::block). The layers up to the first call whose block the
// failure may change keep their unfailed sums and predecessors (every round
// trip before it is the same); from there each layer is solved as
// SolveLayers does it, from the blocks' round trips under the failure, so
// the answer is the same, tie-breaks and unplaced answers included.
bool SolveLayersOnBlocks(const Snapshot& snapshot, const LayerChain& chain, const LayerCall* calls,
                         const LayerEntry* unfailed, int failed_facility, RoundTripBlocks::UnderFailure& round_trips,
                         LayerScratch& scratch, ChainPlacement& unplaced);

// The placement SolveLayers found, whole, with paths from `links(a, b)`.
template <typename LinksFn>
ChainPlacement FullPlacement(const Snapshot& snapshot, const Chain& chain, const LayerScratch& scratch,
                             LinksFn&& links) {
  ChainPlacement result;
  result.placed = true;
  result.total_us = scratch.total_us;
  result.within_budget = result.total_us <= chain.budget_us;
  result.hops.resize(chain.services.size());
  for (size_t call = 0; call < chain.services.size(); ++call) {
    ChainHop& hop = result.hops[call];
    hop.service = chain.services[call];
    hop.replica = scratch.replica[call];
    hop.service_time_us = snapshot.service(hop.service).service_time_us;
    const int from = scratch.from[call];
    if (from != hop.replica) {
      hop.links_there = links(from, hop.replica);
      hop.links_back = links(hop.replica, from);
      hop.network_rtt_us = scratch.rtt_us[call];
    }
  }
  return result;
}

}  // namespace geodesic::pathcomp::internal
