#include "pathcomp/replication/etcd_client.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "config/shared_keys.h"

namespace geodesic::pathcomp {
namespace {

absl::Status FromGrpc(const grpc::Status& status, const std::string& what) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat("etcd ", what, ": ", status.error_message()));
}

etcdserverpb::Compare LeaderGuard(const LeaderKey& leader) {
  etcdserverpb::Compare guard;
  guard.set_key(leader.key);
  guard.set_target(etcdserverpb::Compare::CREATE);
  guard.set_result(etcdserverpb::Compare::EQUAL);
  guard.set_create_revision(leader.revision);
  return guard;
}

}  // namespace

std::string EtcdClient::PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    if (static_cast<unsigned char>(prefix.back()) < 0xff) {
      prefix.back() = static_cast<char>(prefix.back() + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(EtcdOptions options) {
  if (options.endpoints.empty()) return absl::InvalidArgumentError("etcd: no endpoints");
  for (const std::string& endpoint : options.endpoints) {
    if (!config::IsValidHostPort(endpoint)) {
      return absl::InvalidArgumentError(absl::StrCat("etcd endpoint \"", endpoint, "\" is not host:port"));
    }
  }
  return std::unique_ptr<EtcdClient>(new EtcdClient(std::move(options)));
}

EtcdClient::EtcdClient(EtcdOptions options) : options_(std::move(options)) {
  // Every member behind one channel; round robin moves past a dead one.
  grpc::ChannelArguments arguments;
  arguments.SetLoadBalancingPolicyName("round_robin");
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // A page of the audit log or an inventory chunk may pass gRPC's 4 MiB default.
  arguments.SetMaxReceiveMessageSize(64 << 20);
  const std::string target = absl::StrCat("ipv4:", absl::StrJoin(options_.endpoints, ","));
  auto credentials = options_.credentials ? options_.credentials : grpc::InsecureChannelCredentials();
  channel_ = grpc::CreateCustomChannel(target, credentials, arguments);
  kv_ = etcdserverpb::KV::NewStub(channel_);
  lease_ = etcdserverpb::Lease::NewStub(channel_);
  election_ = v3electionpb::Election::NewStub(channel_);
  watch_ = etcdserverpb::Watch::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> EtcdClient::CallContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + options_.call_timeout);
  return context;
}

absl::StatusOr<int64_t> EtcdClient::GrantLease(std::chrono::seconds ttl) {
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(ttl.count());
  etcdserverpb::LeaseGrantResponse response;
  auto context = CallContext();
  if (auto status = FromGrpc(lease_->LeaseGrant(context.get(), request, &response), "lease grant"); !status.ok()) {
    return status;
  }
  if (!response.error().empty()) return absl::UnavailableError(absl::StrCat("etcd lease grant: ", response.error()));
  return response.id();
}

absl::Status EtcdClient::RevokeLease(int64_t lease) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease);
  etcdserverpb::LeaseRevokeResponse response;
  auto context = CallContext();
  return FromGrpc(lease_->LeaseRevoke(context.get(), request, &response), "lease revoke");
}

absl::StatusOr<int64_t> EtcdClient::KeepAlive(int64_t lease) {
  auto context = CallContext();
  auto stream = lease_->LeaseKeepAlive(context.get());
  etcdserverpb::LeaseKeepAliveRequest request;
  request.set_id(lease);
  etcdserverpb::LeaseKeepAliveResponse response;
  if (!stream->Write(request) || !stream->Read(&response)) {
    const absl::Status status = FromGrpc(stream->Finish(), "lease keep-alive");
    return status.ok() ? absl::UnavailableError("etcd lease keep-alive: stream closed") : status;
  }
  stream->WritesDone();
  context->TryCancel();
  (void)stream->Finish();  // cancelled: the one answer is all we wanted
  if (response.ttl() <= 0) return absl::NotFoundError(absl::StrCat("etcd lease ", lease, " has expired"));
  return response.ttl();
}

absl::StatusOr<LeaderKey> EtcdClient::Campaign(grpc::ClientContext& context, const std::string& election,
                                               int64_t lease, const std::string& value) {
  v3electionpb::CampaignRequest request;
  request.set_name(election);
  request.set_lease(lease);
  request.set_value(value);
  v3electionpb::CampaignResponse response;
  if (auto status = FromGrpc(election_->Campaign(&context, request, &response), "campaign"); !status.ok()) {
    return status;
  }
  return LeaderKey{.name = response.leader().name(), .key = response.leader().key(),
                   .revision = response.leader().rev(), .lease = response.leader().lease()};
}

absl::StatusOr<std::pair<std::string, int64_t>> EtcdClient::Leader(const std::string& election) {
  v3electionpb::LeaderRequest request;
  request.set_name(election);
  v3electionpb::LeaderResponse response;
  auto context = CallContext();
  if (auto status = FromGrpc(election_->Leader(context.get(), request, &response), "leader"); !status.ok()) {
    return status;
  }
  if (response.kv().key().empty()) return absl::NotFoundError("no leader elected");
  return std::make_pair(response.kv().value(), response.kv().create_revision());
}

absl::Status EtcdClient::Resign(const LeaderKey& leader) {
  v3electionpb::ResignRequest request;
  request.mutable_leader()->set_name(leader.name);
  request.mutable_leader()->set_key(leader.key);
  request.mutable_leader()->set_rev(leader.revision);
  request.mutable_leader()->set_lease(leader.lease);
  v3electionpb::ResignResponse response;
  auto context = CallContext();
  return FromGrpc(election_->Resign(context.get(), request, &response), "resign");
}

absl::Status EtcdClient::CommitGuarded(const etcdserverpb::TxnRequest& request, const std::string& refused) {
  etcdserverpb::TxnResponse response;
  auto context = CallContext();
  if (auto status = FromGrpc(kv_->Txn(context.get(), request, &response), "txn"); !status.ok()) return status;
  if (!response.succeeded()) return absl::FailedPreconditionError(refused);
  return absl::OkStatus();
}

absl::Status EtcdClient::PutIfLeader(const LeaderKey& leader, const std::string& key, const std::string& value) {
  etcdserverpb::TxnRequest request;
  *request.add_compare() = LeaderGuard(leader);
  etcdserverpb::PutRequest* put = request.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  return CommitGuarded(request, absl::StrCat("not the leader any more (election key ", leader.key, " of revision ",
                                            leader.revision, " is gone)"));
}

absl::Status EtcdClient::PutAllIfLeaderAndAbsent(const LeaderKey& leader, const std::string& absent_key,
                                                 const std::vector<std::pair<std::string, std::string>>& puts) {
  etcdserverpb::TxnRequest request;
  *request.add_compare() = LeaderGuard(leader);
  etcdserverpb::Compare* absent = request.add_compare();
  absent->set_key(absent_key);
  absent->set_target(etcdserverpb::Compare::VERSION);
  absent->set_result(etcdserverpb::Compare::EQUAL);
  absent->set_version(0);
  for (const auto& [key, value] : puts) {
    etcdserverpb::PutRequest* put = request.add_success()->mutable_request_put();
    put->set_key(key);
    put->set_value(value);
  }
  return CommitGuarded(request, "not the leader any more, or already there");
}

absl::Status EtcdClient::DeleteIfLeader(const LeaderKey& leader, const std::string& key) {
  etcdserverpb::TxnRequest request;
  *request.add_compare() = LeaderGuard(leader);
  request.add_success()->mutable_request_delete_range()->set_key(key);
  return CommitGuarded(request, "not the leader any more");
}

absl::Status EtcdClient::TxnIfLeader(const LeaderKey& leader,
                                     const std::vector<std::pair<std::string, std::optional<std::string>>>& writes) {
  etcdserverpb::TxnRequest request;
  *request.add_compare() = LeaderGuard(leader);
  for (const auto& [key, value] : writes) {
    if (value) {
      etcdserverpb::PutRequest* put = request.add_success()->mutable_request_put();
      put->set_key(key);
      put->set_value(*value);
    } else {
      request.add_success()->mutable_request_delete_range()->set_key(key);
    }
  }
  return CommitGuarded(request, "not the leader any more");
}

absl::Status EtcdClient::DeleteRangeIfLeader(const LeaderKey& leader, const std::string& key,
                                             const std::string& range_end) {
  etcdserverpb::TxnRequest request;
  *request.add_compare() = LeaderGuard(leader);
  etcdserverpb::DeleteRangeRequest* range = request.add_success()->mutable_request_delete_range();
  range->set_key(key);
  range->set_range_end(range_end);
  return CommitGuarded(request, "not the leader any more");
}

absl::StatusOr<EtcdClient::PrefixRange> EtcdClient::RangePrefix(const std::string& prefix) {
  return RangePrefix(prefix, RangeOptions{});
}

absl::StatusOr<EtcdClient::PrefixRange> EtcdClient::RangePrefix(const std::string& prefix,
                                                                const RangeOptions& options) {
  etcdserverpb::RangeRequest request;
  request.set_key(options.from_key.empty() ? prefix : options.from_key);
  request.set_range_end(PrefixEnd(prefix));
  request.set_limit(options.limit);
  request.set_revision(options.revision);
  if (options.newest_first) {
    request.set_sort_target(etcdserverpb::RangeRequest::KEY);
    request.set_sort_order(etcdserverpb::RangeRequest::DESCEND);
  }
  etcdserverpb::RangeResponse response;
  auto context = CallContext();
  if (auto status = FromGrpc(kv_->Range(context.get(), request, &response), "range"); !status.ok()) return status;
  PrefixRange range;
  range.revision = response.header().revision();
  range.kvs.assign(response.kvs().begin(), response.kvs().end());
  return range;
}

absl::Status EtcdClient::WatchPrefix(grpc::ClientContext& context, const std::string& prefix, int64_t start_revision,
                                     const std::function<void(const google::protobuf::RepeatedPtrField<
                                                              etcdserverpb::Event>&)>& on_events) {
  auto stream = watch_->Watch(&context);
  etcdserverpb::WatchRequest request;
  request.mutable_create_request()->set_key(prefix);
  request.mutable_create_request()->set_range_end(PrefixEnd(prefix));
  request.mutable_create_request()->set_start_revision(start_revision);
  if (!stream->Write(request)) return FromGrpc(stream->Finish(), "watch");
  etcdserverpb::WatchResponse response;
  while (stream->Read(&response)) {
    if (response.canceled() || response.compact_revision() != 0) {
      context.TryCancel();
      (void)stream->Finish();
      return absl::AbortedError(absl::StrCat("etcd watch cancelled: ", response.cancel_reason(),
                                             response.compact_revision() != 0 ? " (compacted)" : ""));
    }
    if (!response.events().empty()) on_events(response.events());
  }
  return FromGrpc(stream->Finish(), "watch");
}

absl::StatusOr<std::optional<std::string>> EtcdClient::Get(const std::string& key) {
  etcdserverpb::RangeRequest request;
  request.set_key(key);
  etcdserverpb::RangeResponse response;
  auto context = CallContext();
  if (auto status = FromGrpc(kv_->Range(context.get(), request, &response), "range"); !status.ok()) return status;
  if (response.kvs().empty()) return std::optional<std::string>();
  return std::optional<std::string>(response.kvs(0).value());
}

}  // namespace geodesic::pathcomp
