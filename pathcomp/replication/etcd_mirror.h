#pragma once
// Replicated pathcomp keeps what operators decide — intents (drains, pins,
// overrides) and workloads — in etcd, one prefix per kind: the leader writes
// an entry in a transaction guarded by its election key, and every replica,
// the leader too, watches the prefix and mirrors it into its model, so a new
// leader has all of it at once. etcd is the truth once it has been seeded:
// the first leader ever writes its model's entries (e.g. the workloads of
// the inventory file) together with a seed marker; from then on, at every
// (re)sync, model entries etcd does not hold are removed. Before the seed,
// replicas keep their own.
//
// The mirror knows entries only as id -> serialized message; `Model` access
// goes through the caller's functions. Thread-safe; owns one thread between
// Start and Stop.
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "pathcomp/replication/etcd_client.h"

namespace geodesic::pathcomp {

// The entries a model refused, by id, and why.
using EntryRefusals = std::vector<std::pair<std::string, absl::Status>>;

class EtcdMirror {
 public:
  struct Model {
    std::function<std::map<std::string, std::string>()> list;    // id -> serialized message
    std::function<std::optional<std::string>(const std::string& id)> get;  // one entry, serialized
    // Adds or replaces every entry of `put` (serialized; the ids are inside)
    // and removes every id of `remove`, together; each succeeds or is refused
    // on its own: the refusals, by id.
    std::function<EntryRefusals(const std::vector<std::string>& put, const std::vector<std::string>& remove)> apply;
    std::function<std::string(const std::string& bytes)> id_of;  // "" when the bytes do not parse
  };

  // `prefix` like "geodesic/intents/"; `changed` is told (with a reason)
  // whenever the model changed from etcd, so the planner re-plans.
  EtcdMirror(EtcdClient& etcd, std::string prefix, Model model, std::function<void(std::string)> changed);
  ~EtcdMirror();

  void Start();
  void Stop();

  // Makes the model hold exactly what etcd holds again, soon: the mirror's
  // thread re-reads the prefix (a resync, as after a lost watch) instead of
  // waiting for the next change. For a model changed behind etcd's back, e.g.
  // a rollback that failed after etcd refused a write. Returns at once.
  void Resync();

  // The leader stores an entry as its model holds it, or removes it;
  // FailedPrecondition when `leader` no longer leads.
  [[nodiscard]] absl::Status Publish(const LeaderKey& leader, const std::string& id, const std::string& bytes);
  [[nodiscard]] absl::Status Retract(const LeaderKey& leader, const std::string& id);
  // Many at once (an import's workloads): fenced transactions of at most
  // kBatchOps writes and about kBatchBytes each, within etcd's default limits.
  [[nodiscard]] absl::Status PublishAll(const LeaderKey& leader,
                                        const std::vector<std::pair<std::string, std::string>>& entries,
                                        const std::vector<std::string>& retracted);
  static constexpr size_t kBatchOps = 128;
  static constexpr size_t kBatchBytes = 1 << 20;
  // On election: seeds etcd from this replica's model unless etcd was seeded
  // before (OK then too).
  [[nodiscard]] absl::Status SeedIfFirst(const LeaderKey& leader);

 private:
  void Run();
  // id -> its bytes in etcd, or nullopt: removed from etcd.
  using Changes = std::vector<std::pair<std::string, std::optional<std::string>>>;
  // Makes the model hold `changes` (one call of Model::apply); how many entries changed.
  size_t Apply(const Changes& changes);

  EtcdClient& etcd_;
  const std::string prefix_;
  const std::string seed_key_;  // "<prefix without its last />.seeded", outside the prefix
  const Model model_;
  const std::function<void(std::string)> changed_;

  std::mutex mu_;
  bool stopping_ = false;
  bool resync_requested_ = false;  // Resync() since the last read of the prefix
  grpc::ClientContext* watch_context_ = nullptr;
  std::thread thread_;
};

}  // namespace geodesic::pathcomp
