#pragma once
// Replicated pathcomp keeps the operators' intents (drains, pins, overrides)
// in etcd under one prefix: the leader writes them in transactions guarded by
// its election key, and every replica, the leader too, watches the prefix and
// mirrors it into its model, so a new leader has every intent at once. etcd is
// the truth: at every (re)sync, model intents etcd does not hold are removed.
// Thread-safe. Owns one thread between Start and Stop.
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "geodesic/v1/model.pb.h"
#include "pathcomp/replication/etcd_client.h"
#include "pathcomp/service/model.h"

namespace geodesic::pathcomp {

class IntentReplication {
 public:
  // `changed` is told (with a reason) whenever the model's intents changed
  // from etcd, so the planner re-plans.
  IntentReplication(EtcdClient& etcd, Model& model, std::string prefix, std::function<void(std::string)> changed);
  ~IntentReplication();

  void Start();
  void Stop();

  // The leader stores `intent` as its model holds it, or removes it;
  // FailedPrecondition when `leader` no longer leads.
  [[nodiscard]] absl::Status Publish(const LeaderKey& leader, const v1::Intent& intent);
  [[nodiscard]] absl::Status Retract(const LeaderKey& leader, const std::string& id);

 private:
  void Run();
  // Makes the model hold `intent` exactly; true when it changed anything.
  bool Mirror(const v1::Intent& intent);
  bool Forget(const std::string& id);
  std::string Key(const std::string& id) const { return prefix_ + id; }

  EtcdClient& etcd_;
  Model& model_;
  const std::string prefix_;  // "<prefix>/intents/"
  const std::function<void(std::string)> changed_;

  std::mutex mu_;
  bool stopping_ = false;
  grpc::ClientContext* watch_context_ = nullptr;
  std::thread thread_;
};

}  // namespace geodesic::pathcomp
