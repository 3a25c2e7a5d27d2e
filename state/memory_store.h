#pragma once
// A Store kept in memory, for unit tests and tools. Same contract as
// OpenRocksStore, without durability: everything is gone with the object.
#include "state/store.h"

namespace geodesic::state {

// Returns an empty store (LastJournalSeq() == 0). Thread-safe.
StorePtr NewMemoryStore();

}  // namespace geodesic::state
