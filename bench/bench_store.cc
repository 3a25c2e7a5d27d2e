// Ingest throughput of the RocksStore (state/) against RocksDB alone, measured
// in the same run on the same disk:
//
//   store_ingest_batched   link-health updates, kLinksPerBatch per ChangeSet
//                          (one agent Update's LinkReports), sync_writes=false;
//                          reference: the same puts in one rocksdb::WriteBatch
//                          into a plain DB (no journal, one column family).
//   store_ingest_batched_vs_target
//                          the same "ours" against the target of
//                          200,000 link updates per second.
//   store_ingest_single    one update per Commit, sync_writes=true; reference:
//                          one synced single-put WriteBatch.
//
// Both sides start from v1::Link messages and serialize them (the store in
// ChangeSet::Put, the reference explicitly). The ratio is what the store adds
// (key building, validation, the journal entry and its bytes) net of what its
// RocksDB tuning saves (per-key memtable insert hints, see rocks_store.cc),
// which the default-options reference does without. Every repetition writes
// into a fresh DB; the store and the reference alternate, and each result is
// the median of kRepetitions. No result is asserted: machines are shared and
// noisy. Prints one line per result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_report.h"
#include "bench/scratch_dir.h"
#include "geodesic/v1/model.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"
#include "state/change_set.h"
#include "state/kind.h"
#include "state/rocks_store.h"

namespace geodesic::bench {
namespace {

using state::ChangeSet;
using state::Kind;

constexpr int kLinks = 2000;           // links in the model, updated round robin
constexpr int kLinksPerBatch = 1000;   // link updates per ChangeSet (batched)
constexpr int kRepetitions = 5;
constexpr double kTargetUpdatesPerSecond = 200'000;

// One repetition: `max_updates`, or fewer when `budget` runs out first (a slow
// or busy machine, a slow disk for fsync), which keeps the whole run ~15 s.
struct Workload {
  int max_updates;
  std::chrono::milliseconds budget;
  int per_commit;
  bool sync_writes;
};
constexpr Workload kBatched = {100'000, std::chrono::milliseconds(1000), kLinksPerBatch, false};
constexpr Workload kSingle = {400, std::chrono::milliseconds(300), 1, true};

[[noreturn]] void Die(const std::string& what) {
  fprintf(stderr, "bench_store: %s\n", what.c_str());
  exit(1);
}

// The links of a two-facility-pair backbone slice, as the inventory loads them.
std::vector<v1::Link> MakeLinks() {
  std::vector<v1::Link> links;
  links.reserve(kLinks);
  for (int i = 0; i < kLinks; ++i) {
    v1::Link& link = links.emplace_back();
    link.set_id(absl::StrCat("iad-ord-", i));
    link.set_src_node_id(absl::StrCat("iad-br", i % 8));
    link.set_dst_node_id(absl::StrCat("ord-br", i % 8));
    link.set_src_facility_id("iad");
    link.set_dst_facility_id("ord");
    link.set_capacity_gbps(400);
    link.set_igp_metric(10 + i % 50);
    link.set_latency_us(8500);
    link.add_srlgs(absl::StrCat("conduit-iad-ord-", i % 4));
    link.add_srlgs("conduit-iad-metro");
    link.set_admin_state(v1::ADMIN_STATE_UP);
  }
  return links;
}

// What update `n` (0-based, over the whole run) measured on its link.
void ApplyReport(v1::Link& link, uint64_t n) {
  v1::LinkHealth& health = *link.mutable_health();
  health.set_state(n % 97 == 0 ? v1::OPER_STATE_DEGRADED : v1::OPER_STATE_UP);
  health.set_rtt_us(17000 + n % 900);
  health.set_jitter_us(40 + n % 60);
  health.set_loss_ratio(static_cast<double>(n % 7) / 10000);
  health.set_utilization_ratio(static_cast<double>(n % 100) / 100);
  health.set_measured_at_unix_ms(1'700'000'000'000 + static_cast<int64_t>(n));
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Link updates per second through the store.
double StoreIngest(std::vector<v1::Link> links, const Workload& work) {
  ScratchDir dir("bench_store");
  state::RocksStoreOptions opts;
  opts.sync_writes = work.sync_writes;
  absl::StatusOr<state::StorePtr> store = state::OpenRocksStore(dir.db(), opts);
  if (!store.ok()) Die(store.status().ToString());

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + work.budget;
  uint64_t n = 0;
  for (int commit = 0; n < static_cast<uint64_t>(work.max_updates) && std::chrono::steady_clock::now() < deadline;
       ++commit) {
    ChangeSet changes(absl::StrCat("telemetry from spiffe://geodesic/site/iad/agent seq ", commit + 1));
    for (int i = 0; i < work.per_commit; ++i, ++n) {
      v1::Link& link = links[n % links.size()];
      ApplyReport(link, n);
      changes.Put(Kind::kLink, link.id(), link);
    }
    absl::StatusOr<uint64_t> seq = (*store)->Commit(changes);
    if (!seq.ok()) Die(seq.status().ToString());
  }
  return static_cast<double>(n) / Seconds(std::chrono::steady_clock::now() - start);
}

// The same updates as StoreIngest, as plain RocksDB puts: one WriteBatch per
// commit into the default column family, keys "link/<id>", default options.
double RawRocksIngest(std::vector<v1::Link> links, const Workload& work) {
  ScratchDir dir("bench_store");
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir.db(), &raw);
  if (!s.ok()) Die(s.ToString());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::vector<std::string> keys;
  keys.reserve(links.size());
  for (const v1::Link& link : links) keys.push_back(state::EntityKey(Kind::kLink, link.id()));
  rocksdb::WriteOptions write_options;
  write_options.sync = work.sync_writes;

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + work.budget;
  uint64_t n = 0;
  std::string bytes;
  while (n < static_cast<uint64_t>(work.max_updates) && std::chrono::steady_clock::now() < deadline) {
    rocksdb::WriteBatch batch;
    for (int i = 0; i < work.per_commit; ++i, ++n) {
      v1::Link& link = links[n % links.size()];
      ApplyReport(link, n);
      if (!link.SerializeToString(&bytes)) Die("cannot serialize a link");
      s = batch.Put(keys[n % links.size()], bytes);
      if (!s.ok()) Die(s.ToString());
    }
    s = db->Write(write_options, &batch);
    if (!s.ok()) Die(s.ToString());
  }
  const double rate = static_cast<double>(n) / Seconds(std::chrono::steady_clock::now() - start);
  s = db->Close();
  if (!s.ok()) Die(s.ToString());
  return rate;
}

struct Comparison {
  double ours;
  double reference;
};

// Runs the store and the reference alternately, kRepetitions times each; the medians.
Comparison Compare(const std::vector<v1::Link>& links, const Workload& work) {
  std::vector<double> ours, reference;
  for (int i = 0; i < kRepetitions; ++i) {
    ours.push_back(StoreIngest(links, work));
    reference.push_back(RawRocksIngest(links, work));
  }
  return {Median(ours), Median(reference)};
}

}  // namespace
}  // namespace geodesic::bench

int main() {
  using namespace geodesic::bench;
  const std::vector<geodesic::v1::Link> links = MakeLinks();

  const Comparison batched = Compare(links, kBatched);
  PrintResult("store_ingest_batched", batched.ours, "raw_rocksdb", batched.reference, "updates/s");
  PrintResult("store_ingest_batched_vs_target", batched.ours, "target", kTargetUpdatesPerSecond,
              "updates/s");

  const Comparison single = Compare(links, kSingle);
  PrintResult("store_ingest_single", single.ours, "raw_rocksdb", single.reference, "updates/s");
  return 0;
}
