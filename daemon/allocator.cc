#include "daemon/allocator.h"

#include <malloc.h>

#include <climits>

namespace geodesic::daemon {

void KeepFreedMemoryForReuse(size_t retain_bytes) {
  // Allocations below this come from the heap (glibc's default moves between
  // 128 KiB and 32 MiB; memtable arena blocks are up to 8 MiB).
  constexpr int kHeapUpTo = 64 << 20;
  const int retain = retain_bytes > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(retain_bytes);
  mallopt(M_MMAP_THRESHOLD, kHeapUpTo);
  mallopt(M_TRIM_THRESHOLD, retain);
}

}  // namespace geodesic::daemon
