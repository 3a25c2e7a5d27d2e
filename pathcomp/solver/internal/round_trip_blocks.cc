#include "pathcomp/solver/internal/round_trip_blocks.h"

#include <algorithm>
#include <bit>

#include "pathcomp/solver/internal/on_threads.h"

namespace geodesic::pathcomp::internal {
namespace {

// Blocks a thread works out at the least: fewer are done before it starts.
constexpr int kBlocksPerThread = 256;

uint64_t RoundTripOf(uint64_t there, uint64_t back) {
  return there == kUnreachable || back == kUnreachable ? RoundTripBlocks::kFar : there + back;
}

}  // namespace

RoundTripBlocks::RoundTripBlocks(const Snapshot& snapshot, const FailureIds& ids, size_t max_bytes)
    : snapshot_(snapshot), ids_(ids), max_bytes_(max_bytes), words_((static_cast<size_t>(ids.size()) + 63) / 64) {
  // A path's latency is at most every link's cost; checked in long double
  // so that the check itself cannot overflow.
  long double links = 0, slowest = 0, calls = 0;
  for (int link = 0; link < snapshot.link_count(); ++link) links += snapshot.link_state(link).cost_us;
  for (int service = 0; service < snapshot.service_count(); ++service) {
    slowest = std::max<long double>(slowest, snapshot.service(service).service_time_us);
  }
  for (const Chain& chain : snapshot.chains()) calls = std::max<long double>(calls, chain.services.size());
  usable_ = (calls + 1) * (2 * links + slowest) < static_cast<long double>(kFar);
}

int RoundTripBlocks::FirstCall(int origin, int service) {
  return Numbered(static_cast<uint64_t>(origin) << 32 | static_cast<uint32_t>(service), origin, -1, service);
}

int RoundTripBlocks::LaterCall(int previous, int service) {
  return Numbered(uint64_t{1} << 63 | static_cast<uint64_t>(previous) << 32 | static_cast<uint32_t>(service), -1,
                  previous, service);
}

int RoundTripBlocks::Numbered(uint64_t key, int origin, int previous, int service) {
  const auto [it, added] = numbers_.try_emplace(key, static_cast<int>(blocks_.size()));
  if (!added) return it->second;
  Block block{};
  block.rows_at = static_cast<int>(facilities_.size());
  if (previous < 0) {
    facilities_.push_back(origin);
  } else {
    const auto& from = snapshot_.service(previous).facilities;
    facilities_.insert(facilities_.end(), from.begin(), from.end());
  }
  block.rows = static_cast<int>(facilities_.size()) - block.rows_at;
  block.columns_at = static_cast<int>(facilities_.size());
  const auto& to = snapshot_.service(service).facilities;
  facilities_.insert(facilities_.end(), to.begin(), to.end());
  block.columns = static_cast<int>(to.size());
  block.values_at = static_cast<uint32_t>(unfailed_us_.size());
  unfailed_us_.resize(unfailed_us_.size() + static_cast<size_t>(block.rows) * static_cast<size_t>(block.columns));
  blocks_.push_back(block);
  return it->second;
}

void RoundTripBlocks::Prepare(FailureDistances& paths, int threads) {
  const int count = static_cast<int>(blocks_.size());
  if (prepared_ == count || !usable_) return;
  // The failures' marks twice (by block, by failure) and the round trips
  // (unfailed, and each worker's under a failure).
  const size_t bytes = (2 * static_cast<size_t>(count) * words_ + 3 * unfailed_us_.size()) * sizeof(uint64_t);
  if (bytes > max_bytes_) {
    usable_ = false;
    return;
  }
  std::vector<int> sources;
  for (int b = prepared_; b < count; ++b) {
    const Block& block = blocks_[b];
    sources.insert(sources.end(), facilities_.begin() + block.rows_at,
                   facilities_.begin() + block.columns_at + block.columns);
  }
  paths.BuildTrees(sources, threads);
  by_block_.resize(static_cast<size_t>(count) * words_, 0);
  // Each block written by one thread, reading only built trees.
  const int used = std::clamp((count - prepared_) / kBlocksPerThread, 1, std::max(threads, 1));
  OnThreads(used, [&](int t) {
    std::vector<int> links, facilities;
    for (int b = prepared_ + t; b < count; b += used) PrepareBlock(b, paths, links, facilities);
  });
  prepared_ = count;
  // By failure, all blocks again (a block number's word moves when the
  // words per failure grow).
  block_words_ = (static_cast<size_t>(count) + 63) / 64;
  by_failure_.assign(static_cast<size_t>(ids_.size()) * block_words_, 0);
  for (int b = 0; b < count; ++b) {
    const uint64_t* bits = &by_block_[static_cast<size_t>(b) * words_];
    for (size_t word = 0; word < words_; ++word) {
      for (uint64_t left = bits[word]; left != 0; left &= left - 1) {
        const size_t failure = word * 64 + static_cast<size_t>(std::countr_zero(left));
        if (failure >= static_cast<size_t>(ids_.size())) break;
        by_failure_[failure * block_words_ + static_cast<size_t>(b >> 6)] |= uint64_t{1} << (b & 63);
      }
    }
  }
}

void RoundTripBlocks::PrepareBlock(int b, const FailureDistances& paths, std::vector<int>& links,
                                   std::vector<int>& facilities) {
  const Block& block = blocks_[b];
  uint64_t* bits = &by_block_[static_cast<size_t>(b) * words_];
  auto mark = [&](int id) { bits[id >> 6] |= uint64_t{1} << (id & 63); };
  auto mark_facility = [&](int facility) { mark(ids_.Id({ChainFailure::Kind::kFacility, facility})); };
  uint64_t* out = &unfailed_us_[block.values_at];
  const int* rows = &facilities_[block.rows_at];
  const int* columns = &facilities_[block.columns_at];
  // A replica failing takes its entries out of the layer: its column's
  // round trips are no way then, within it too (UnderFailure). (Its rows
  // are the columns of the block before, or the origin.)
  for (int j = 0; j < block.columns; ++j) mark_facility(columns[j]);
  for (int i = 0; i < block.rows; ++i) {
    for (int j = 0; j < block.columns; ++j) {
      const int from = rows[i], to = columns[j];
      uint64_t& us = out[i * block.columns + j];
      if (from == to) {
        us = 0;
        continue;
      }
      links.clear();
      facilities.clear();
      bool regular_there = true, regular_back = true;
      const uint64_t there = paths.UnfailedPath(from, to, links, facilities, regular_there);
      const uint64_t back = paths.UnfailedPath(to, from, links, facilities, regular_back);
      us = RoundTripOf(there, back);
      if (!regular_there || !regular_back) {  // any failure may move these paths
        std::fill(bits, bits + words_, ~uint64_t{0});
        continue;
      }
      for (int link : links) {
        mark(ids_.Id({ChainFailure::Kind::kLink, link}));
        for (int srlg : snapshot_.link_srlgs(link)) mark(ids_.Id({ChainFailure::Kind::kSrlg, srlg}));
      }
      for (int facility : facilities) mark_facility(facility);
    }
  }
}

const uint64_t* RoundTripBlocks::UnderFailure::Decide(int block) {
  const RoundTripBlocks& blocks = *blocks_;
  if (epoch_of_.size() < blocks.blocks_.size()) {
    epoch_of_.resize(blocks.blocks_.size(), 0);
    us_.resize(blocks.unfailed_us_.size());
  }
  const Block& at = blocks.blocks_[block];
  epoch_of_[block] = epoch_;
  uint64_t* out = &us_[at.values_at];
  const uint64_t* unfailed = blocks.Unfailed(block);
  const int* rows = &blocks.facilities_[at.rows_at];
  const int* columns = &blocks.facilities_[at.columns_at];
  FailureDistances& paths = *paths_;
  for (int i = 0; i < at.rows; ++i) {
    for (int j = 0; j < at.columns; ++j) {
      const int k = i * at.columns + j;
      const int from = rows[i], to = columns[j];
      // A failed facility's row is all unreachable, so a pair with it is.
      if (from == to) {
        out[k] = from == failed_facility_ ? kFar : 0;
      } else if (paths.MayChange(from, to) || paths.MayChange(to, from)) {
        out[k] = RoundTripOf(paths.Row(from)[to], paths.Row(to)[from]);
      } else {
        out[k] = unfailed[k];
      }
    }
  }
  return out;
}

}  // namespace geodesic::pathcomp::internal
