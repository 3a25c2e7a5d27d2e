#include "pathcomp/service/intent_replication.h"

#include <set>

#include <google/protobuf/util/message_differencer.h>

#include "daemon/log.h"

namespace geodesic::pathcomp {

IntentReplication::IntentReplication(EtcdClient& etcd, Model& model, std::string prefix,
                                     std::function<void(std::string)> changed)
    : etcd_(etcd), model_(model), prefix_(std::move(prefix) + "/intents/"), changed_(std::move(changed)) {}

IntentReplication::~IntentReplication() { Stop(); }

void IntentReplication::Start() { thread_ = std::thread([this] { Run(); }); }

void IntentReplication::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (watch_context_ != nullptr) watch_context_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

absl::Status IntentReplication::Publish(const LeaderKey& leader, const v1::Intent& intent) {
  return etcd_.PutIfLeader(leader, Key(intent.id()), intent.SerializeAsString());
}

absl::Status IntentReplication::Retract(const LeaderKey& leader, const std::string& id) {
  return etcd_.DeleteIfLeader(leader, Key(id));
}

bool IntentReplication::Mirror(const v1::Intent& intent) {
  for (const v1::Intent& held : model_.Intents()) {
    if (held.id() != intent.id()) continue;
    if (google::protobuf::util::MessageDifferencer::Equals(held, intent)) return false;
    (void)model_.DeleteIntent(intent.id(), "etcd");  // replaced below
    break;
  }
  if (auto status = model_.AddIntent(intent, intent.created_by(), intent.created_at_unix_ms()); !status.ok()) {
    daemon::LogError("intent from etcd refused by the model", {{"intent", intent.id()}, {"error", status.ToString()}});
    return false;
  }
  return true;
}

bool IntentReplication::Forget(const std::string& id) { return model_.DeleteIntent(id, "etcd").ok(); }

void IntentReplication::Run() {
  auto backoff = std::chrono::milliseconds(200);
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    auto range = etcd_.RangePrefix(prefix_);
    if (!range.ok()) {
      daemon::LogWarn("cannot read intents from etcd; keeping the model's", {{"error", range.status().ToString()}});
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
      continue;
    }
    backoff = std::chrono::milliseconds(200);
    // Resync: the model holds exactly what etcd holds.
    bool changed = false;
    std::set<std::string> in_etcd;
    for (const auto& kv : range->kvs) {
      v1::Intent intent;
      if (!intent.ParseFromString(kv.value())) {
        daemon::LogError("malformed intent in etcd ignored", {{"key", kv.key()}});
        continue;
      }
      in_etcd.insert(intent.id());
      changed |= Mirror(intent);
    }
    for (const v1::Intent& held : model_.Intents()) {
      if (!in_etcd.contains(held.id())) changed |= Forget(held.id());
    }
    if (changed && changed_) changed_("intents resynced from etcd");

    grpc::ClientContext context;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      watch_context_ = &context;
    }
    const absl::Status ended = etcd_.WatchPrefix(context, prefix_, range->revision + 1, [&](const etcdserverpb::Event& event) {
      const std::string id = event.kv().key().substr(prefix_.size());
      if (event.type() == etcdserverpb::Event::DELETE) {
        if (Forget(id) && changed_) changed_("intent " + id + " removed (etcd)");
        return;
      }
      v1::Intent intent;
      if (!intent.ParseFromString(event.kv().value()) || intent.id() != id) {
        daemon::LogError("malformed intent in etcd ignored", {{"key", event.kv().key()}});
        return;
      }
      if (Mirror(intent) && changed_) changed_("intent " + id + " (etcd)");
    });
    {
      std::lock_guard lock(mu_);
      watch_context_ = nullptr;
      if (stopping_) return;
    }
    daemon::LogWarn("intent watch ended; resyncing from etcd", {{"why", ended.ToString()}});
    std::this_thread::sleep_for(backoff);
  }
}

}  // namespace geodesic::pathcomp
