#pragma once
// One entry of the store's journal: the changes of one committed ChangeSet.
#include <cstdint>
#include <string>
#include <vector>

#include "state/change_set.h"

namespace geodesic::state {

struct JournalEntry {
  // Assigned by the store at commit: 1 for the first commit, then +1 per commit.
  uint64_t seq = 0;
  // Wall-clock time of the commit, milliseconds since the Unix epoch.
  int64_t at_unix_ms = 0;
  // ChangeSet::cause().
  std::string cause;
  // ChangeSet::changes(), in order.
  std::vector<Change> changes;

  friend bool operator==(const JournalEntry&, const JournalEntry&) = default;
};

}  // namespace geodesic::state
