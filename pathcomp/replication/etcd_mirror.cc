#include "pathcomp/replication/etcd_mirror.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"

#include "daemon/log.h"

namespace geodesic::pathcomp {

EtcdMirror::EtcdMirror(EtcdClient& etcd, std::string prefix, Model model, std::function<void(std::string)> changed)
    : etcd_(etcd),
      prefix_(std::move(prefix)),
      seed_key_(prefix_.substr(0, prefix_.size() - (prefix_.ends_with('/') ? 1 : 0)) + ".seeded"),
      model_(std::move(model)),
      changed_(std::move(changed)) {}

absl::Status EtcdMirror::SeedIfFirst(const LeaderKey& leader) {
  auto seeded = etcd_.Get(seed_key_);
  if (!seeded.ok()) return seeded.status();
  if (seeded->has_value()) return absl::OkStatus();
  std::vector<std::pair<std::string, std::string>> puts;
  for (const auto& [id, bytes] : model_.list()) puts.emplace_back(prefix_ + id, bytes);
  puts.emplace_back(seed_key_, std::to_string(leader.revision));
  const absl::Status status = etcd_.PutAllIfLeaderAndAbsent(leader, seed_key_, puts);
  if (status.ok()) {
    daemon::LogInfo("seeded etcd from this replica's model", {{"prefix", prefix_}, {"entries", std::to_string(puts.size() - 1)}});
    return status;
  }
  // Another leader may have seeded meanwhile: fine when the marker is there now.
  auto again = etcd_.Get(seed_key_);
  return again.ok() && again->has_value() ? absl::OkStatus() : status;
}

EtcdMirror::~EtcdMirror() { Stop(); }

void EtcdMirror::Start() { thread_ = std::thread([this] { Run(); }); }

void EtcdMirror::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (watch_context_ != nullptr) watch_context_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

void EtcdMirror::Resync() {
  std::lock_guard lock(mu_);
  resync_requested_ = true;
  if (watch_context_ != nullptr) watch_context_->TryCancel();
}

absl::Status EtcdMirror::Publish(const LeaderKey& leader, const std::string& id, const std::string& bytes) {
  return etcd_.PutIfLeader(leader, prefix_ + id, bytes);
}

absl::Status EtcdMirror::Retract(const LeaderKey& leader, const std::string& id) {
  return etcd_.DeleteIfLeader(leader, prefix_ + id);
}

absl::Status EtcdMirror::PublishAll(const LeaderKey& leader,
                                    const std::vector<std::pair<std::string, std::string>>& entries,
                                    const std::vector<std::string>& retracted) {
  std::vector<std::pair<std::string, std::optional<std::string>>> batch;
  size_t batch_bytes = 0;
  auto flush = [&]() -> absl::Status {
    if (batch.empty()) return absl::OkStatus();
    absl::Status status = etcd_.TxnIfLeader(leader, batch);
    batch.clear();
    batch_bytes = 0;
    return status;
  };
  auto add = [&](std::string key, std::optional<std::string> value) -> absl::Status {
    const size_t bytes = key.size() + (value ? value->size() : 0);
    if (batch.size() == kBatchOps || (!batch.empty() && batch_bytes + bytes > kBatchBytes)) {
      if (absl::Status status = flush(); !status.ok()) return status;
    }
    batch_bytes += bytes;
    batch.emplace_back(std::move(key), std::move(value));
    return absl::OkStatus();
  };
  for (const auto& id : retracted) {
    if (absl::Status status = add(prefix_ + id, std::nullopt); !status.ok()) return status;
  }
  for (const auto& [id, bytes] : entries) {
    if (absl::Status status = add(prefix_ + id, bytes); !status.ok()) return status;
  }
  return flush();
}

size_t EtcdMirror::Apply(const Changes& changes) {
  // What differs from the model, in the order etcd gave it.
  std::vector<std::string> put, remove;
  std::map<std::string, std::optional<std::string>> last;  // an id changed twice: its last state
  for (const auto& [id, bytes] : changes) last[id] = bytes;
  for (const auto& [id, bytes] : last) {
    const std::optional<std::string> held = model_.get(id);
    if (bytes && held != bytes) put.push_back(*bytes);
    if (!bytes && held) remove.push_back(id);
  }
  if (put.empty() && remove.empty()) return 0;
  const EntryRefusals refused = model_.apply(put, remove);
  for (const auto& [id, why] : refused) {
    daemon::LogError("entry from etcd refused by the model (kept for the next resync)",
                     {{"key", prefix_ + id}, {"error", why.ToString()}});
  }
  return put.size() + remove.size() - refused.size();
}

void EtcdMirror::Run() {
  auto backoff = std::chrono::milliseconds(200);
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      resync_requested_ = false;  // the read below answers every request made so far
    }
    auto seeded = etcd_.Get(seed_key_);
    auto range = etcd_.RangePrefix(prefix_);
    if (!seeded.ok() || !range.ok()) {
      daemon::LogWarn("cannot read from etcd; keeping the model's", {{"prefix", prefix_}, {"error", (seeded.ok() ? range.status() : seeded.status()).ToString()}});
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
      continue;
    }
    backoff = std::chrono::milliseconds(200);
    // Resync: the model holds exactly what etcd holds.
    Changes changes;
    std::set<std::string> in_etcd;
    for (const auto& kv : range->kvs) {
      const std::string id = kv.key().substr(prefix_.size());
      if (model_.id_of(kv.value()) != id) {
        daemon::LogError("malformed entry in etcd ignored", {{"key", kv.key()}});
        continue;
      }
      in_etcd.insert(id);
      changes.emplace_back(id, kv.value());
    }
    if (seeded->has_value()) {  // before the first leader seeded etcd, keep our own
      for (const auto& [id, bytes] : model_.list()) {
        if (!in_etcd.contains(id)) changes.emplace_back(id, std::nullopt);
      }
    }
    if (Apply(changes) > 0 && changed_) changed_(prefix_ + " resynced from etcd");

    grpc::ClientContext context;
    bool again = false;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      again = resync_requested_;  // asked while reading: read again before watching
      if (!again) watch_context_ = &context;
    }
    if (again) continue;
    const absl::Status ended =
        etcd_.WatchPrefix(context, prefix_, range->revision + 1, [&](const auto& events) {
          Changes changes;
          for (const etcdserverpb::Event& event : events) {
            std::string id = event.kv().key().substr(prefix_.size());
            if (event.type() == etcdserverpb::Event::DELETE) {
              changes.emplace_back(std::move(id), std::nullopt);
            } else if (model_.id_of(event.kv().value()) != id) {
              daemon::LogError("malformed entry in etcd ignored", {{"key", event.kv().key()}});
            } else {
              changes.emplace_back(std::move(id), event.kv().value());
            }
          }
          const size_t applied = Apply(changes);
          if (applied == 0 || !changed_) return;
          changed_(applied == 1 && changes.size() == 1
                       ? absl::StrCat(prefix_, changes[0].first, changes[0].second ? "" : " removed", " (etcd)")
                       : absl::StrCat(applied, " entries of ", prefix_, " (etcd)"));
        });
    {
      std::lock_guard lock(mu_);
      watch_context_ = nullptr;
      if (stopping_) return;
      again = resync_requested_;
    }
    if (again) {
      daemon::LogInfo("resyncing the model from etcd on request", {{"prefix", prefix_}});
      continue;
    }
    daemon::LogWarn("etcd watch ended; resyncing", {{"prefix", prefix_}, {"why", ended.ToString()}});
    std::this_thread::sleep_for(backoff);
  }
}

}  // namespace geodesic::pathcomp
