#include "pathcomp/replication/inventory_replica.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/clock.h"
#include "daemon/log.h"

namespace geodesic::pathcomp {
namespace {

// FNV-1a, 64 bits, hex: stable across builds; enough to notice a chunk that
// is not the one the header was written with.
std::string Checksum(const std::string& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return absl::StrFormat("%016x", hash);
}

std::string Padded(uint64_t n, int width) { return absl::StrFormat("%0*d", width, n); }

constexpr auto kRetryEvery = std::chrono::seconds(2);

}  // namespace

InventoryReplica::InventoryReplica(EtcdClient& etcd, std::string prefix, std::string workloads_prefix, Apply apply,
                                   size_t chunk_bytes)
    : etcd_(etcd),
      header_key_(prefix + "/release"),
      chunks_prefix_(prefix + "/chunks/"),
      workloads_prefix_(std::move(workloads_prefix)),
      apply_(std::move(apply)),
      chunk_bytes_(std::clamp<size_t>(chunk_bytes, 1, kChunkBytes)) {}

InventoryReplica::~InventoryReplica() { Stop(); }

absl::StatusOr<std::optional<std::pair<v1::InventoryRelease, int64_t>>> InventoryReplica::ReadHeader() {
  auto stored = etcd_.RangePrefix(header_key_);
  if (!stored.ok()) return stored.status();
  for (const auto& kv : stored->kvs) {
    if (kv.key() != header_key_) continue;
    v1::InventoryRelease header;
    if (!header.ParseFromString(kv.value()) || header.version() == 0) {
      return absl::DataLossError(absl::StrCat("etcd key ", header_key_, " is not an inventory release"));
    }
    return std::optional<std::pair<v1::InventoryRelease, int64_t>>(std::make_pair(std::move(header), stored->revision));
  }
  return std::optional<std::pair<v1::InventoryRelease, int64_t>>();
}

absl::StatusOr<InventoryReleaseContent> InventoryReplica::ReadContent(const v1::InventoryRelease& header,
                                                                      int64_t revision) {
  std::string bytes;
  bytes.reserve(header.bytes());
  const std::string version_prefix = chunks_prefix_ + Padded(header.version(), 20) + "/";
  for (uint32_t n = 0; n < header.chunks(); ++n) {
    auto chunk = etcd_.Get(version_prefix + Padded(n, 6));
    if (!chunk.ok()) return chunk.status();
    if (!chunk->has_value()) {
      return absl::AbortedError(absl::StrCat("inventory release ", header.version(), " lost chunk ", n,
                                             " (superseded while read?)"));
    }
    bytes += **chunk;
  }
  if (bytes.size() != header.bytes() || Checksum(bytes) != header.checksum()) {
    return absl::DataLossError(absl::StrCat("inventory release ", header.version(), ": its chunks (", bytes.size(),
                                            " bytes) do not match its header (", header.bytes(), " bytes, checksum ",
                                            header.checksum(), ")"));
  }
  InventoryReleaseContent content{.header = header, .inventory = {}};
  if (!content.inventory.ParseFromString(bytes)) {
    return absl::DataLossError(absl::StrCat("inventory release ", header.version(), " does not parse"));
  }
  content.inventory.clear_workloads();
  if (!workloads_prefix_.empty()) {
    // EtcdMirror's seed marker: before it, etcd's workloads are not the truth yet.
    const std::string seed_key =
        workloads_prefix_.substr(0, workloads_prefix_.size() - (workloads_prefix_.ends_with('/') ? 1 : 0)) + ".seeded";
    auto seeded = etcd_.RangePrefix(seed_key, {.from_key = "", .limit = 1, .newest_first = false, .revision = revision});
    if (!seeded.ok()) return seeded.status();
    content.with_workloads = !seeded->kvs.empty();
  }
  if (content.with_workloads) {
    auto workloads = etcd_.RangePrefix(workloads_prefix_, {.from_key = "", .limit = 0, .newest_first = false,
                                                          .revision = revision});
    if (!workloads.ok()) return workloads.status();
    for (const auto& kv : workloads->kvs) {
      if (!content.inventory.add_workloads()->ParseFromString(kv.value())) {
        return absl::DataLossError(absl::StrCat("etcd key ", kv.key(), " is not a workload"));
      }
    }
  }
  return content;
}

absl::StatusOr<std::optional<InventoryReleaseContent>> InventoryReplica::Fetch() {
  auto header = ReadHeader();
  if (!header.ok()) return header.status();
  if (!header->has_value()) return std::optional<InventoryReleaseContent>();
  auto content = ReadContent((*header)->first, (*header)->second);
  if (!content.ok()) return content.status();
  return std::optional<InventoryReleaseContent>(*std::move(content));
}

absl::Status InventoryReplica::WriteRelease(const LeaderKey& leader, uint64_t version, const v1::Inventory& inventory,
                                            const std::string& cause) {
  const std::string bytes = inventory.SerializeAsString();
  const std::string version_prefix = chunks_prefix_ + Padded(version, 20) + "/";
  uint32_t chunks = 0;
  for (size_t offset = 0; offset < bytes.size() || chunks == 0; offset += chunk_bytes_, ++chunks) {
    const std::string chunk = bytes.substr(std::min(offset, bytes.size()), chunk_bytes_);
    if (auto status = etcd_.PutIfLeader(leader, version_prefix + Padded(chunks, 6), chunk); !status.ok()) {
      return status;
    }
  }
  v1::InventoryRelease header;
  header.set_version(version);
  header.set_chunks(chunks);
  header.set_bytes(bytes.size());
  header.set_checksum(Checksum(bytes));
  header.set_cause(cause);
  header.set_at_unix_ms(daemon::UnixNowMs());
  absl::Status written =
      version == 1 ? etcd_.PutAllIfLeaderAndAbsent(leader, header_key_, {{header_key_, header.SerializeAsString()}})
                   : etcd_.PutIfLeader(leader, header_key_, header.SerializeAsString());
  if (!written.ok()) return written;
  // The chunks of every older version go; a reader still at one starts over.
  if (auto removed = etcd_.DeleteRangeIfLeader(leader, chunks_prefix_, version_prefix); !removed.ok()) {
    daemon::LogWarn("older inventory releases not removed from etcd", {{"error", removed.ToString()}});
  }
  daemon::LogInfo("inventory release written to etcd",
                  {{"version", std::to_string(version)}, {"bytes", std::to_string(bytes.size())},
                   {"chunks", std::to_string(chunks)}, {"cause", cause}});
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> InventoryReplica::Publish(const LeaderKey& leader, v1::Inventory inventory,
                                                   const std::string& cause,
                                                   const std::function<absl::Status()>& apply_locally) {
  inventory.clear_workloads();
  std::lock_guard apply_lock(apply_mu_);
  auto header = ReadHeader();
  if (!header.ok()) return header.status();
  const uint64_t version = std::max(header->has_value() ? (*header)->first.version() : 0, applied_version_.load()) + 1;
  if (auto written = WriteRelease(leader, version, inventory, cause); !written.ok()) return written;
  if (absl::Status applied = apply_locally(); !applied.ok()) {
    return absl::Status(applied.code(), absl::StrCat("inventory release ", version,
                                                     " is in etcd but this replica could not apply it yet (it "
                                                     "retries): ",
                                                     applied.message()));
  }
  applied_version_ = version;
  return version;
}

absl::Status InventoryReplica::SeedIfFirst(const LeaderKey& leader, v1::Inventory inventory, const std::string& cause) {
  inventory.clear_workloads();
  std::lock_guard apply_lock(apply_mu_);
  auto header = ReadHeader();
  if (!header.ok()) return header.status();
  if (header->has_value()) return absl::OkStatus();
  absl::Status written = WriteRelease(leader, 1, inventory, cause);
  if (!written.ok()) {
    // Another leader may have seeded meanwhile: fine when a release is there now.
    auto again = ReadHeader();
    return again.ok() && again->has_value() ? absl::OkStatus() : written;
  }
  applied_version_ = 1;  // the model it came from holds it
  return absl::OkStatus();
}

absl::Status InventoryReplica::ApplyLocked(const InventoryReleaseContent& content) {
  if (content.header.version() <= applied_version_) return absl::OkStatus();
  if (absl::Status applied = apply_(content); !applied.ok()) return applied;
  applied_version_ = content.header.version();
  return absl::OkStatus();
}

absl::Status InventoryReplica::SyncNow() {
  auto content = Fetch();
  if (!content.ok()) return content.status();
  if (!content->has_value()) return absl::OkStatus();
  std::lock_guard apply_lock(apply_mu_);
  return ApplyLocked(**content);
}

uint64_t InventoryReplica::applied_version() const { return applied_version_; }

void InventoryReplica::RetryPending() {
  std::lock_guard lock(mu_);
  retry_ = true;
  wake_.notify_all();
}

void InventoryReplica::Start() { thread_ = std::thread([this] { Run(); }); }

void InventoryReplica::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (watch_context_ != nullptr) watch_context_->TryCancel();
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void InventoryReplica::Run() {
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      retry_ = false;  // the read below answers every request so far
    }
    // Read the header with the revision to watch from, then apply its release.
    auto range = etcd_.RangePrefix(header_key_);
    absl::Status outcome = range.status();
    v1::InventoryRelease header;
    const bool stored = range.ok() && !range->kvs.empty();
    if (stored && !header.ParseFromString(range->kvs[0].value())) {
      outcome = absl::DataLossError(absl::StrCat("etcd key ", header_key_, " is not an inventory release"));
    }
    if (outcome.ok() && stored && header.version() > applied_version_) {  // an applied release is not read again
      auto content = Fetch();
      outcome = content.status();
      if (content.ok() && content->has_value()) {
        std::lock_guard apply_lock(apply_mu_);
        outcome = ApplyLocked(**content);
      }
    }
    if (!outcome.ok()) {
      daemon::LogWarn("inventory release from etcd not applied yet; retrying",
                      {{"applied_version", std::to_string(applied_version_)}, {"why", outcome.ToString()}});
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, kRetryEvery, [this] { return stopping_ || retry_; });
      continue;
    }
    grpc::ClientContext context;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      watch_context_ = &context;
    }
    // Any change of the header: cancel the watch and read it again.
    const absl::Status ended = etcd_.WatchPrefix(context, header_key_, range->revision + 1,
                                                 [&](const auto&) { context.TryCancel(); });
    std::unique_lock lock(mu_);
    watch_context_ = nullptr;
    if (stopping_) return;
    if (!ended.ok() && !absl::IsCancelled(ended)) {
      daemon::LogWarn("etcd watch of the inventory ended; reading it again", {{"why", ended.ToString()}});
      wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; });
    }
  }
}

}  // namespace geodesic::pathcomp
