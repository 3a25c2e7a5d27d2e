#pragma once
// How a write-heavy daemon wants the C allocator to behave.
#include <cstddef>

namespace geodesic::daemon {

// Large blocks (RocksDB memtable arenas, gRPC and protobuf buffers) come from
// the heap and stay there once freed, instead of being mapped and unmapped on
// every cycle: each fresh mapping is paid again in page faults, which on a
// 2-core VM cost pathcomp about a third of its telemetry ingest rate
// (bench_ingest). Keeps at most `retain_bytes` of freed memory.
// Call once at start, before the threads.
void KeepFreedMemoryForReuse(size_t retain_bytes = size_t{512} << 20);

}  // namespace geodesic::daemon
