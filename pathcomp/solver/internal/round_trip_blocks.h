#pragma once
// The round trips chains' calls are made over, shared by every chain. A
// call is made from the chain's origin (its first call) or from a replica
// of the service called before it, to a replica of its service: per kind of
// call (origin and service, or the two services) a block holds the round
// trip of every pair of those facilities (rows: where the call is made
// from, in the previous service's replica order; columns: the service's
// replicas, in order) with no failure, and the failures (FailureIds) that
// may change any of them: a link or an SRLG on one of their unfailed paths,
// a facility on one (its ends included) or among the columns. A backup's search
// (SolveLayersOnBlocks) reads a chain's calls from these blocks: the layers
// before its first call in a block the failure may change keep their
// unfailed sums, and a block it may change is worked out once per failure
// by each worker (UnderFailure).
// Internal to pathcomp/solver (ChainBackupPlacer), for chains on the
// unpinned paths. Thread-compatible; once prepared, UnderFailure may read it
// from several threads. Prepare uses threads when asked (joined before it
// returns).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "pathcomp/solver/failure_distances.h"
#include "pathcomp/solver/internal/failure_ids.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp::internal {

class RoundTripBlocks {
 public:
  // A round trip with no way (the pair cannot reach each other): more than
  // any sum of a chain's real ones, and a sum with it does not overflow.
  static constexpr uint64_t kFar = uint64_t{1} << 62;

  // What the blocks may take at most (their marks and round trips, a few
  // workers' included): past it, the searches go without them.
  static constexpr size_t kMaxBytes = size_t{256} << 20;

  RoundTripBlocks(const Snapshot& snapshot, const FailureIds& ids, size_t max_bytes = kMaxBytes);

  // Whether the blocks are to be used: no chain of the snapshot can add up
  // to kFar (every link's cost twice, plus the slowest service, per call),
  // and, once Prepare has seen them, they fit in max_bytes. Else they are not
  // (any more) worked out, and must not be read.
  bool usable() const { return usable_; }

  // The block of a chain's first call, to `service` from `origin`; of a
  // later call, to `service` from `previous`'s replicas. Numbered on the
  // first ask; Prepare works them out.
  int FirstCall(int origin, int service);
  int LaterCall(int previous, int service);

  // Works out the blocks numbered since the last call: their unfailed round
  // trips, from `paths`' unfailed trees (which it builds for their
  // facilities, as the rest on up to `threads` threads), and the failures
  // that may change them.
  void Prepare(FailureDistances& paths, int threads);

  // Whether the failure with id `failure` may change any round trip of
  // `block` (false: all keep their unfailed values).
  bool MayChange(int block, int failure) const {
    const size_t word = static_cast<size_t>(failure) * block_words_ + static_cast<size_t>(block >> 6);
    return (by_failure_[word] >> (block & 63)) & 1;
  }
  // A prepared block's unfailed round trips, row by row (kFar: no way
  // between the pair; 0 within a facility).
  const uint64_t* Unfailed(int block) const { return &unfailed_us_[blocks_[block].values_at]; }

  // The blocks' round trips under one failure at a time, for one worker:
  // each block the failure may change worked out at most once per failure.
  class UnderFailure {
   public:
    // From now on, answers for the failure with id `failure` (failing
    // `failed_facility`, -1: none), which `paths` (on the unpinned paths)
    // is set to; `epoch` tells the worker's failures apart (never 0).
    void Start(const RoundTripBlocks& blocks, FailureDistances& paths, int failure, int failed_facility,
               uint32_t epoch) {
      blocks_ = &blocks;
      paths_ = &paths;
      failure_ = failure;
      failed_facility_ = failed_facility;
      epoch_ = epoch;
    }
    // Forgets every block's answer (when the worker's epochs wrap).
    void Forget() { std::fill(epoch_of_.begin(), epoch_of_.end(), 0); }

    bool MayChange(int block) const { return blocks_->MayChange(block, failure_); }
    // `block`'s round trips under the failure, laid out as Unfailed's; a
    // failed facility's are kFar, within it too (no call runs there).
    const uint64_t* RoundTrips(int block) {
      if (!MayChange(block)) return blocks_->Unfailed(block);
      if (static_cast<size_t>(block) < epoch_of_.size() && epoch_of_[block] == epoch_) {
        return &us_[blocks_->blocks_[block].values_at];
      }
      return Decide(block);
    }

   private:
    const uint64_t* Decide(int block);

    const RoundTripBlocks* blocks_ = nullptr;
    FailureDistances* paths_ = nullptr;
    int failure_ = -1;
    int failed_facility_ = -1;
    uint32_t epoch_ = 0;
    std::vector<uint32_t> epoch_of_;  // per block: its us_ are the failure's when == epoch_
    std::vector<uint64_t> us_;        // laid out as unfailed_us_
  };

 private:
  struct Block {
    int rows_at, rows;  // in facilities_
    int columns_at, columns;
    uint32_t values_at;  // in unfailed_us_: rows * columns
  };

  int Numbered(uint64_t key, int origin, int previous, int service);
  // Block `b`'s unfailed round trips and the failures that may change
  // them, with `links` and `facilities` as scratch.
  void PrepareBlock(int b, const FailureDistances& paths, std::vector<int>& links, std::vector<int>& facilities);

  const Snapshot& snapshot_;
  const FailureIds& ids_;
  size_t max_bytes_;
  size_t words_;  // of by_block_ per block
  absl::flat_hash_map<uint64_t, int> numbers_;
  std::vector<Block> blocks_;
  std::vector<int> facilities_;  // the blocks' rows' and columns' facilities
  std::vector<uint64_t> unfailed_us_;
  // Which failures may change which blocks: per block, a bit per failure
  // id; and the same per failure id, a bit per block (`block_words_` words
  // each), which is what a failure's backups read, over and over.
  std::vector<uint64_t> by_block_;
  std::vector<uint64_t> by_failure_;
  size_t block_words_ = 0;
  int prepared_ = 0;                  // blocks_[0 .. prepared_) are worked out
  bool usable_ = true;
};

}  // namespace geodesic::pathcomp::internal
