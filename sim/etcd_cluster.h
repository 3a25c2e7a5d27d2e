#pragma once
// A real etcd cluster (Debian's etcd-server) on loopback for tests and the
// lab: N members with their own data directories and ephemeral ports,
// plaintext on 127.0.0.1. Members can be killed and restarted with their data.
// Stopped when the handle goes away. Thread-compatible.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/process.h"

namespace geodesic::sim {

class EtcdCluster {
 public:
  // Starts `members` members under `work_dir` and waits until they answer.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<EtcdCluster>> Start(const std::string& work_dir, int members);
  ~EtcdCluster();

  // host:port of every member's client endpoint.
  std::vector<std::string> endpoints() const;
  void Kill(int member, int signal_number);
  [[nodiscard]] absl::Status Restart(int member);
  // Runs etcdctl against the cluster; its output.
  [[nodiscard]] absl::StatusOr<std::string> Etcdctl(const std::vector<std::string>& args) const;

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    ChildProcessPtr process;
  };
  EtcdCluster(std::string work_dir) : work_dir_(std::move(work_dir)) {}
  absl::Status Spawn(int member, bool initial);

  std::string work_dir_;
  std::vector<Member> members_;
  std::string initial_cluster_;
};

// NotFound when etcd is not installed.
[[nodiscard]] absl::Status EtcdAvailable();

}  // namespace geodesic::sim
