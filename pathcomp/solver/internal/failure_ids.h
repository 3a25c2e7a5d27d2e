#pragma once
// Dense numbers for the failures chains' backups are placed under
// (ChainBackupPlacer, RoundTripBlocks). Internal to pathcomp/solver.
// Immutable once built.
#include <algorithm>

#include "pathcomp/solver/chain_plan.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp::internal {

// Dense numbers for failures, in ChainFailure order: facilities, links, SRLGs.
class FailureIds {
 public:
  explicit FailureIds(const Snapshot& snapshot)
      : facilities_(snapshot.facility_count()), links_(snapshot.link_count()) {
    for (int link = 0; link < links_; ++link) {
      for (int srlg : snapshot.link_srlgs(link)) srlgs_ = std::max(srlgs_, srlg + 1);
    }
  }
  int size() const { return facilities_ + links_ + srlgs_; }
  int Id(const ChainFailure& failure) const {
    switch (failure.kind) {
      case ChainFailure::Kind::kFacility: return failure.index;
      case ChainFailure::Kind::kLink: return facilities_ + failure.index;
      case ChainFailure::Kind::kSrlg: return facilities_ + links_ + failure.index;
    }
    return -1;
  }
  ChainFailure At(int id) const {
    if (id < facilities_) return {ChainFailure::Kind::kFacility, id};
    if (id < facilities_ + links_) return {ChainFailure::Kind::kLink, id - facilities_};
    return {ChainFailure::Kind::kSrlg, id - facilities_ - links_};
  }

 private:
  int facilities_, links_, srlgs_ = 0;
};

}  // namespace geodesic::pathcomp::internal
