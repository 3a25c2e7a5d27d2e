#include "pathcomp/solver/internal/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace geodesic::pathcomp::internal {

void AdviseHugePages(const void* data, size_t bytes) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  if (bytes < 4 * kHugePage) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  if (end <= begin) return;
  // Refused (a kernel without THP, or THP "never"): the 4 KiB pages stay.
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace geodesic::pathcomp::internal
