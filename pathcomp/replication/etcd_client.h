#pragma once
// A small client of etcd's v3 API (gRPC), for what replicated pathcomp needs:
// leases with keep-alive, the election API (campaign, leader, resign) and
// guarded transactions. One gRPC channel over every configured member, so a
// dead member is routed around. Every call has a deadline.
// Thread-safe (gRPC stubs are).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "etcd/etcd_election.grpc.pb.h"
#include "etcd/etcd_kv.grpc.pb.h"

namespace geodesic::pathcomp {

struct EtcdOptions {
  std::vector<std::string> endpoints;  // host:port of every member
  // null: plaintext (loopback tests); else e.g. tls::MakeChannelCredentials
  // with Identity::Kind::kEtcd, which checks the members' identity instead of host names.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  std::chrono::milliseconds call_timeout{2000};
};

// The key a campaign won: its revision is the leader's epoch (fencing token).
struct LeaderKey {
  std::string name;
  std::string key;
  int64_t revision = 0;
  int64_t lease = 0;
};

class EtcdClient {
 public:
  // InvalidArgument for an empty or malformed endpoint list. Does not connect yet.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<EtcdClient>> Create(EtcdOptions options);

  [[nodiscard]] absl::StatusOr<int64_t> GrantLease(std::chrono::seconds ttl);
  [[nodiscard]] absl::Status RevokeLease(int64_t lease);
  // One keep-alive round trip: the TTL etcd reset the lease to, in seconds;
  // NotFound when the lease has expired or was revoked.
  [[nodiscard]] absl::StatusOr<int64_t> KeepAlive(int64_t lease);

  // Blocks until this candidate leads `election` (or `context` is cancelled,
  // or the lease goes away). `value` tells the others who leads.
  [[nodiscard]] absl::StatusOr<LeaderKey> Campaign(grpc::ClientContext& context, const std::string& election,
                                                   int64_t lease, const std::string& value);
  // The current leader's value and key revision; NotFound when nobody leads.
  [[nodiscard]] absl::StatusOr<std::pair<std::string, int64_t>> Leader(const std::string& election);
  [[nodiscard]] absl::Status Resign(const LeaderKey& leader);

  // Puts `key` only while `leader` still holds its election key (the fencing
  // guard of every write a leader makes). FailedPrecondition when it does not.
  [[nodiscard]] absl::Status PutIfLeader(const LeaderKey& leader, const std::string& key, const std::string& value);
  // Puts every (key, value) in one transaction, only while `leader` holds its
  // election key and `absent_key` does not exist. FailedPrecondition otherwise.
  [[nodiscard]] absl::Status PutAllIfLeaderAndAbsent(const LeaderKey& leader, const std::string& absent_key,
                                                     const std::vector<std::pair<std::string, std::string>>& puts);
  // Deletes `key` only while `leader` holds its election key.
  [[nodiscard]] absl::Status DeleteIfLeader(const LeaderKey& leader, const std::string& key);
  // Puts (a value) or deletes (nullopt) every key in one transaction, only
  // while `leader` holds its election key.
  [[nodiscard]] absl::Status TxnIfLeader(const LeaderKey& leader,
                                         const std::vector<std::pair<std::string, std::optional<std::string>>>& writes);
  // Deletes every key in [key, range_end) only while `leader` holds its election key.
  [[nodiscard]] absl::Status DeleteRangeIfLeader(const LeaderKey& leader, const std::string& key,
                                                 const std::string& range_end);
  [[nodiscard]] absl::StatusOr<std::optional<std::string>> Get(const std::string& key);

  // Every key under `prefix`, and the revision they were read at.
  struct PrefixRange {
    std::vector<etcdserverpb::KeyValue> kvs;
    int64_t revision = 0;
  };
  [[nodiscard]] absl::StatusOr<PrefixRange> RangePrefix(const std::string& prefix);
  // At most `limit` keys (0: all) under `prefix`: from `from_key` on in key
  // order, or, when `newest_first`, the last ones in reverse key order.
  struct RangeOptions {
    std::string from_key;
    int64_t limit = 0;
    bool newest_first = false;
    int64_t revision = 0;  // read as of this revision (0: the newest)
  };
  [[nodiscard]] absl::StatusOr<PrefixRange> RangePrefix(const std::string& prefix, const RangeOptions& options);
  // The range end that makes [prefix, end) every key starting with `prefix`.
  static std::string PrefixEnd(std::string prefix);
  // Streams the changes under `prefix` from `start_revision` to `on_events`,
  // as etcd answers them (one transaction's changes together)
  // until `context` is cancelled or the stream ends (also when the revision
  // was compacted away); why it ended.
  [[nodiscard]] absl::Status WatchPrefix(grpc::ClientContext& context, const std::string& prefix,
                                         int64_t start_revision,
                                         const std::function<void(const google::protobuf::RepeatedPtrField<
                                                                  etcdserverpb::Event>&)>& on_events);

 private:
  explicit EtcdClient(EtcdOptions options);
  std::unique_ptr<grpc::ClientContext> CallContext() const;
  // Runs a transaction whose compares guard it; FailedPrecondition(`refused`) when they fail.
  absl::Status CommitGuarded(const etcdserverpb::TxnRequest& request, const std::string& refused);

  EtcdOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<etcdserverpb::KV::Stub> kv_;
  std::unique_ptr<etcdserverpb::Lease::Stub> lease_;
  std::unique_ptr<v3electionpb::Election::Stub> election_;
  std::unique_ptr<etcdserverpb::Watch::Stub> watch_;
};

}  // namespace geodesic::pathcomp
