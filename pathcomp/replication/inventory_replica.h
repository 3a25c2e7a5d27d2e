#pragma once
// The inventory as replicated pathcomp keeps it in etcd: one release at a
// time, written by the leader and applied by every replica (the leader too).
//
//   <prefix>/release                 v1::InventoryRelease, the current one
//   <prefix>/chunks/<version>/<n>    its serialized v1::Inventory, cut into chunks
//
// The leader writes the chunks of the next version, then the header (each
// write fenced by its election key), then removes older versions' chunks. A
// reader takes the header, then its chunks, and checks them against it; a
// release whose chunks went away meanwhile is superseded, so the reader
// starts over from the newer header. Chunks stay under etcd's default
// request limit (1.5 MiB), so an inventory of any size goes through.
//
// Thread-safe; owns one thread between Start and Stop, which applies each new
// release (and retries one the model refused, e.g. because a workload it no
// longer supports is still being removed through the workloads' mirror).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"
#include "pathcomp/replication/etcd_client.h"

namespace geodesic::pathcomp {

struct InventoryReleaseContent {
  v1::InventoryRelease header;
  // The release, and, when the replica was given a workloads prefix, the
  // workloads etcd held at the same revision: what a replica applies in one
  // step, so that it never has to hold workloads its new inventory lacks.
  v1::Inventory inventory;
  bool with_workloads = false;  // false before the first leader seeded the workloads into etcd
};

class InventoryReplica {
 public:
  // Applies a release to the model; an error leaves it pending (retried).
  using Apply = std::function<absl::Status(const InventoryReleaseContent&)>;

  static constexpr size_t kChunkBytes = 1 << 20;

  // `prefix` like "geodesic/inventory"; `workloads_prefix` (may be empty)
  // where etcd keeps the workloads (EtcdMirror's, "geodesic/workloads/");
  // `chunk_bytes` at most kChunkBytes.
  InventoryReplica(EtcdClient& etcd, std::string prefix, std::string workloads_prefix, Apply apply,
                   size_t chunk_bytes = kChunkBytes);
  ~InventoryReplica();

  // The current release; nullopt when etcd holds none (an unseeded cluster).
  [[nodiscard]] absl::StatusOr<std::optional<InventoryReleaseContent>> Fetch();

  // The leader publishes `inventory` (its workloads are left out) as the next
  // release, then runs `apply_locally` (the leader's own model) before the
  // watch thread could apply the same release; returns the new version.
  // FailedPrecondition when `leader` no longer leads; nothing is applied then.
  [[nodiscard]] absl::StatusOr<uint64_t> Publish(const LeaderKey& leader, v1::Inventory inventory,
                                                 const std::string& cause,
                                                 const std::function<absl::Status()>& apply_locally);
  // On election: publishes `inventory` as version 1 unless etcd holds a release.
  [[nodiscard]] absl::Status SeedIfFirst(const LeaderKey& leader, v1::Inventory inventory, const std::string& cause);

  // Reads the current release and applies it now, on the caller's thread
  // (a no-op when it is applied already). OK too when etcd holds none.
  [[nodiscard]] absl::Status SyncNow();
  // Asks the thread to try a refused release again (the model changed).
  void RetryPending();
  // The version last applied to the model (0: none).
  uint64_t applied_version() const;

  void Start();
  void Stop();

 private:
  absl::Status WriteRelease(const LeaderKey& leader, uint64_t version, const v1::Inventory& inventory,
                            const std::string& cause);
  // The header and the etcd revision it was read at.
  absl::StatusOr<std::optional<std::pair<v1::InventoryRelease, int64_t>>> ReadHeader();
  absl::StatusOr<InventoryReleaseContent> ReadContent(const v1::InventoryRelease& header, int64_t revision);
  // Applies `content` unless a version at least as new is applied; the caller holds apply_mu_.
  absl::Status ApplyLocked(const InventoryReleaseContent& content);
  void Run();

  EtcdClient& etcd_;
  const std::string header_key_;
  const std::string chunks_prefix_;
  const std::string workloads_prefix_;
  const Apply apply_;
  const size_t chunk_bytes_;

  std::mutex apply_mu_;  // one release published or applied at a time
  std::atomic<uint64_t> applied_version_{0};  // written under apply_mu_

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool retry_ = false;
  grpc::ClientContext* watch_context_ = nullptr;
  std::thread thread_;
};

}  // namespace geodesic::pathcomp
