#pragma once
// Leader election among pathcomp replicas through etcd: each replica holds a
// lease (kept alive every ttl/3) and campaigns with it; the winner's election
// key revision is its epoch, the fencing token routerd compares.
//
// Safety: a leader counts itself leader only until the lease could have
// expired on etcd's side — the send time of the last keep-alive etcd
// answered, plus the TTL it answered with. So a leader that is partitioned or
// paused (SIGSTOP) stops leading by its own clock before etcd can let another
// replica win, and on return it campaigns again as a follower.
//
// Thread-safe. Owns two threads (campaign, keep-alive) between Start and Stop.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "pathcomp/replication/etcd_client.h"

namespace geodesic::pathcomp {

struct ElectionOptions {
  std::string election = "geodesic/pathcomp/leader";
  std::string candidate;  // this replica, as the others see it ("pc1 127.0.0.1:7443")
  std::chrono::seconds lease_ttl{5};
};

class LeaderElection {
 public:
  using Clock = std::chrono::steady_clock;
  // Told when this replica becomes leader (its epoch) and when it stops
  // leading (nullopt). Called from the election's threads, with no lock of
  // the election held; must not block long.
  using Listener = std::function<void(std::optional<uint64_t> epoch)>;

  LeaderElection(EtcdClient& etcd, ElectionOptions options, Listener listener);
  ~LeaderElection();

  void Start();
  // Resigns when leading (so another takes over at once) and revokes the lease.
  void Stop();

  // The epoch while this replica leads and its lease cannot have expired.
  std::optional<uint64_t> LeadingEpoch(Clock::time_point now = Clock::now()) const;
  std::optional<LeaderKey> leader_key() const;
  // Whether etcd answered this replica's lease keep-alive within the lease
  // TTL (leading or not): etcd is reachable and the lease alive.
  bool LeaseAlive(Clock::time_point now = Clock::now()) const;
  // Who leads, as etcd says ("" when nobody or etcd is unreachable).
  std::string CurrentLeader() const;

 private:
  void CampaignLoop();
  void KeepAliveLoop();
  void StepDown(const std::string& why);  // requires mu_; queues the listener call
  void Notify(std::unique_lock<std::mutex>& lock);  // runs queued listener calls unlocked

  EtcdClient& etcd_;
  const ElectionOptions options_;
  const Listener listener_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int64_t lease_ = 0;                  // 0: none
  Clock::time_point lease_valid_until_{};
  bool lease_lost_ = false;
  std::optional<LeaderKey> leading_;
  std::deque<std::optional<uint64_t>> pending_;  // listener calls not made yet
  grpc::ClientContext* campaign_context_ = nullptr;
  std::thread campaign_thread_;
  std::thread keepalive_thread_;
};

}  // namespace geodesic::pathcomp
