#pragma once
// A real etcd cluster (Debian's etcd-server) on loopback for tests and the
// lab: N members with their own data directories and ephemeral ports,
// on 127.0.0.1, plaintext or TLS with the project's PKI. Members can be
// killed and restarted with their data.
// Stopped when the handle goes away. Thread-compatible.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/process.h"

namespace geodesic::sim {

class EtcdCluster {
 public:
  // Starts `members` members (etcd1, etcd2, ...) under `work_dir` and waits
  // until they answer. With `pki_dir` (make-pki.sh --etcd etcd1,...), clients
  // and peers talk TLS and clients must show a certificate of that CA.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<EtcdCluster>> Start(const std::string& work_dir, int members,
                                                                         const std::string& pki_dir = "");
  static std::string MemberName(int member) { return "etcd" + std::to_string(member + 1); }
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
  EtcdCluster(std::string work_dir, std::string pki_dir)
      : work_dir_(std::move(work_dir)), pki_dir_(std::move(pki_dir)) {}
  std::string Scheme() const { return pki_dir_.empty() ? "http" : "https"; }
  absl::Status Spawn(int member, bool initial);

  std::string work_dir_;
  std::string pki_dir_;  // empty: plaintext
  std::vector<Member> members_;
  std::string initial_cluster_;
};

// NotFound when etcd is not installed.
[[nodiscard]] absl::Status EtcdAvailable();

}  // namespace geodesic::sim
