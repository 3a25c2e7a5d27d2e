#pragma once
// Large arrays a solver reads or writes all over (a chain plan's backups,
// the chains' layered graphs) in 2 MiB pages where the kernel allows it
// (transparent huge pages in "madvise" mode): walking them then costs far
// fewer TLB misses, and writing them first far fewer page faults.
// Advice only: where the kernel declines, nothing changes.
#include <cstddef>
#include <vector>

namespace geodesic::pathcomp::internal {

// Advises the whole 2 MiB pages inside [data, data + bytes) (the rest of the
// range shares its pages with other allocations). Below a few huge pages,
// nothing.
void AdviseHugePages(const void* data, size_t bytes);

// reserve(capacity), then the advice for the vector's storage.
template <typename T>
void ReserveInHugePages(std::vector<T>& array, size_t capacity) {
  array.reserve(capacity);
  AdviseHugePages(array.data(), array.capacity() * sizeof(T));
}

}  // namespace geodesic::pathcomp::internal
