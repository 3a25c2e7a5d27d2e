#include "sim/etcd_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/wait_until.h"

namespace geodesic::sim {
namespace {

constexpr char kEtcd[] = "/usr/bin/etcd";
constexpr char kEtcdctl[] = "/usr/bin/etcdctl";

}  // namespace

absl::Status EtcdAvailable() {
  for (const char* path : {kEtcd, kEtcdctl}) {
    if (access(path, X_OK) != 0) return absl::NotFoundError(absl::StrCat(path, " is missing (Debian etcd-server, etcd-client)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(const std::string& work_dir, int members,
                                                                const std::string& pki_dir) {
  if (auto status = EtcdAvailable(); !status.ok()) return status;
  if (members < 1) return absl::InvalidArgumentError("an etcd cluster needs a member");
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster(work_dir, pki_dir));
  std::filesystem::create_directories(work_dir);
  std::vector<std::string> peers;
  for (int i = 0; i < members; ++i) {
    Member member;
    member.name = MemberName(i);
    auto client_port = FreePort(SOCK_STREAM);
    auto peer_port = FreePort(SOCK_STREAM);
    if (!client_port.ok()) return client_port.status();
    if (!peer_port.ok()) return peer_port.status();
    member.client_port = *client_port;
    member.peer_port = *peer_port;
    peers.push_back(absl::StrCat(member.name, "=", cluster->Scheme(), "://127.0.0.1:", member.peer_port));
    cluster->members_.push_back(std::move(member));
  }
  cluster->initial_cluster_ = absl::StrJoin(peers, ",");
  for (int i = 0; i < members; ++i) {
    if (auto status = cluster->Spawn(i, true); !status.ok()) return status;
  }
  absl::Status health = absl::UnknownError("not asked yet");
  const absl::Status healthy = WaitUntil("etcd to become healthy", std::chrono::seconds(30), [&] {
    health = cluster->Etcdctl({"endpoint", "health", "--cluster"}).status();
    return health.ok();
  }, std::chrono::milliseconds(100));
  if (!healthy.ok()) {
    return absl::DeadlineExceededError(
        absl::StrCat(healthy.message(), ": ", health.message(), "; see ", work_dir, "/etcd*.log"));
  }
  return cluster;
}

absl::Status EtcdCluster::Spawn(int index, bool initial) {
  Member& member = members_[index];
  const std::string data_dir = absl::StrCat(work_dir_, "/", member.name, ".data");
  const std::string scheme = Scheme();
  std::vector<std::string> argv = {
      kEtcd, "--name", member.name, "--data-dir", data_dir,
      "--listen-client-urls", absl::StrCat(scheme, "://127.0.0.1:", member.client_port),
      "--advertise-client-urls", absl::StrCat(scheme, "://127.0.0.1:", member.client_port),
      "--listen-peer-urls", absl::StrCat(scheme, "://127.0.0.1:", member.peer_port),
      "--initial-advertise-peer-urls", absl::StrCat(scheme, "://127.0.0.1:", member.peer_port),
      "--initial-cluster", initial_cluster_, "--initial-cluster-token", "geodesic-test",
      "--initial-cluster-state", initial ? "new" : "existing",
      // Loopback: fast heartbeats and elections.
      "--heartbeat-interval", "50", "--election-timeout", "500", "--log-level", "warn"};
  if (!pki_dir_.empty()) {
    const std::string stem = absl::StrCat(pki_dir_, "/etcd-", member.name);
    for (const char* side : {"", "peer-"}) {
      argv.insert(argv.end(), {absl::StrCat("--", side, "cert-file"), stem + ".crt", absl::StrCat("--", side, "key-file"),
                               stem + ".key", absl::StrCat("--", side, "trusted-ca-file"), pki_dir_ + "/ca.crt",
                               absl::StrCat("--", side, "client-cert-auth")});
    }
  }
  auto process = ChildProcess::Spawn(argv, absl::StrCat(work_dir_, "/", member.name, ".log"));
  if (!process.ok()) return process.status();
  member.process = *std::move(process);
  return absl::OkStatus();
}

EtcdCluster::~EtcdCluster() {
  for (Member& member : members_) {
    if (member.process) member.process->Stop(2000);
  }
}

std::vector<std::string> EtcdCluster::endpoints() const {
  std::vector<std::string> endpoints;
  for (const Member& member : members_) endpoints.push_back(absl::StrCat("127.0.0.1:", member.client_port));
  return endpoints;
}

void EtcdCluster::Kill(int member, int signal_number) {
  if (members_[member].process) {
    members_[member].process->Signal(signal_number);
    if (signal_number == SIGKILL || signal_number == SIGTERM) members_[member].process->Wait(10'000);
  }
}

absl::Status EtcdCluster::Restart(int member) {
  if (members_[member].process && members_[member].process->running()) {
    return absl::FailedPreconditionError(members_[member].name + " is still running");
  }
  return Spawn(member, false);
}

absl::StatusOr<std::string> EtcdCluster::Etcdctl(const std::vector<std::string>& args) const {
  std::vector<std::string> urls;
  for (const std::string& endpoint : endpoints()) urls.push_back(absl::StrCat(Scheme(), "://", endpoint));
  std::vector<std::string> argv = {kEtcdctl, "--endpoints", absl::StrJoin(urls, ","), "--dial-timeout", "1s",
                                   "--command-timeout", "2s"};
  if (!pki_dir_.empty()) {
    const std::string stem = absl::StrCat(pki_dir_, "/etcd-", members_[0].name);
    argv.insert(argv.end(), {"--cacert", pki_dir_ + "/ca.crt", "--cert", stem + ".crt", "--key", stem + ".key"});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  auto result = RunCommand(argv);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) return absl::UnavailableError(absl::StrCat("etcdctl: ", result->output));
  return result->output;
}

}  // namespace geodesic::sim
