// The model's import path and its snapshot on Cogentco (197 facilities, 490
// links, 38,612 demand rows of which 37,805 carry traffic), against references
// measured in the same run:
//
//   cogentco_import_snapshot   LoadRepetita (graph + demands), ImportInventory
//                              into a fresh RocksStore, the store closed and
//                              reopened in a fresh Model, CurrentSnapshot();
//                              reference: reading the two files' bytes
//                              (read_files), i.e. what any use of the data costs.
//   snapshot_build_from_store  Model::Open of the stored Cogentco (store open
//                              included) + CurrentSnapshot(), i.e. a pathcomp
//                              restart; the store was reopened once before, so
//                              its WAL is already replayed into table files.
//                              Reference: read_files.
//   snapshot_incremental_update
//                              Snapshot::WithLinkHealth for one link's health
//                              change, chained on the latest snapshot;
//                              reference: Snapshot::Build from a ModelView
//                              copied beforehand (full_rebuild); the model's
//                              own rebuild also copies that view first.
//
// The data is $GEODESIC_SOURCE_DIR/../shared/data/repetita (the checkout this
// was built from when unset). Ours and the reference alternate; each result is
// a median. No result is asserted: machines are shared and noisy. Prints one
// line per result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_report.h"
#include "bench/scratch_dir.h"
#include "geodesic/v1/model.pb.h"
#include "pathcomp/model/model.h"
#include "pathcomp/solver/snapshot.h"
#include "state/rocks_store.h"
#include "topology/repetita.h"

namespace geodesic::bench {
namespace {

using Clock = std::chrono::steady_clock;
using pathcomp::Model;
using pathcomp::Snapshot;

constexpr int kRepetitions = 7;        // import + snapshot, and reopen + snapshot
constexpr int kRebuilds = 31;          // full rebuilds timed one by one
constexpr int kUpdateBatches = 31;     // incremental updates: batches timed...
constexpr int kUpdatesPerBatch = 200;  // ...of this many updates each

// What Cogentco must come out as; anything else means the benchmark measured something else.
constexpr int kCogentcoLinks = 490;
constexpr size_t kCogentcoDemandsWithTraffic = 37'805;

[[noreturn]] void Die(const std::string& what) {
  fprintf(stderr, "bench_model: %s\n", what.c_str());
  exit(1);
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

struct Files {
  std::string graph, demands;
};

// The reference: both files' bytes in memory. Returns the byte count, which
// the caller checks, so the read is not optimized away.
size_t ReadFiles(const Files& files) {
  size_t bytes = 0;
  for (const std::string* path : {&files.graph, &files.demands}) {
    std::ifstream in(*path, std::ios::binary);
    if (!in) Die("cannot read " + *path);
    std::ostringstream content;
    content << in.rdbuf();
    bytes += content.str().size();
  }
  return bytes;
}

std::unique_ptr<Model> OpenModel(const std::string& dir) {
  auto store = state::OpenRocksStore(dir);
  if (!store.ok()) Die(store.status().ToString());
  auto model = Model::Open(*std::move(store));
  if (!model.ok()) Die(model.status().ToString());
  return *std::move(model);
}

void CheckCogentco(const Snapshot& snapshot) {
  if (snapshot.link_count() != kCogentcoLinks ||
      snapshot.demands().size() != kCogentcoDemandsWithTraffic) {
    Die("the Cogentco snapshot has " + std::to_string(snapshot.link_count()) + " links and " +
        std::to_string(snapshot.demands().size()) + " demands");
  }
}

// Files to snapshot through a fresh store in `dir`, in ms.
double ImportAndSnapshotMs(const Files& files, const std::string& dir) {
  const auto start = Clock::now();
  auto inventory = topology::LoadRepetita(files.graph, files.demands);
  if (!inventory.ok()) Die(inventory.status().ToString());
  {
    std::unique_ptr<Model> model = OpenModel(dir);
    auto imported = model->ImportInventory(*inventory, "bench import of Cogentco");
    if (!imported.ok()) Die(imported.status().ToString());
  }
  std::unique_ptr<Model> reopened = OpenModel(dir);
  const std::shared_ptr<const Snapshot> snapshot = reopened->CurrentSnapshot();
  const double ms = Ms(Clock::now() - start);
  CheckCogentco(*snapshot);
  return ms;
}

// The stored model to snapshot, in ms.
double OpenAndSnapshotMs(const std::string& dir) {
  const auto start = Clock::now();
  std::unique_ptr<Model> model = OpenModel(dir);
  const std::shared_ptr<const Snapshot> snapshot = model->CurrentSnapshot();
  const double ms = Ms(Clock::now() - start);
  CheckCogentco(*snapshot);
  return ms;
}

double ReadFilesMs(const Files& files, size_t expected_bytes) {
  const auto start = Clock::now();
  const size_t bytes = ReadFiles(files);
  const double ms = Ms(Clock::now() - start);
  if (bytes != expected_bytes) Die("the files changed while the benchmark ran");
  return ms;
}

// The health a site agent would report for `link` in update `n`: up and
// down in turn, so every update changes the link's state.
std::vector<std::pair<std::string, v1::LinkHealth>> HealthUpdate(const std::string& link, int n) {
  v1::LinkHealth health;
  health.set_state(n % 2 == 0 ? v1::OPER_STATE_DOWN : v1::OPER_STATE_UP);
  health.set_rtt_us(10'000 + static_cast<uint64_t>(n % 1000));
  return {{link, health}};
}

}  // namespace
}  // namespace geodesic::bench

int main() {
  using namespace geodesic::bench;
  const std::string data = RepetitaDir(GEODESIC_DEFAULT_SOURCE_DIR);
  const Files files{data + "/Cogentco.graph", data + "/Cogentco.0000.demands"};
  const size_t bytes = ReadFiles(files);  // also warms the page cache for both sides

  // Import + snapshot against reading the files; every repetition into a fresh store.
  std::vector<double> import_ms, read_ms;
  ImportAndSnapshotMs(files, ScratchDir("bench_model").db());  // warm-up
  for (int i = 0; i < kRepetitions; ++i) {
    ScratchDir dir("bench_model");
    import_ms.push_back(ImportAndSnapshotMs(files, dir.db()));
    read_ms.push_back(ReadFilesMs(files, bytes));
  }
  PrintResult("cogentco_import_snapshot", Median(import_ms), "read_files", Median(read_ms), "ms", 3);

  // Reopen + snapshot of the stored model against reading the files.
  ScratchDir stored("bench_model");
  ImportAndSnapshotMs(files, stored.db());
  std::vector<double> open_ms;
  read_ms.clear();
  for (int i = 0; i < kRepetitions; ++i) {
    open_ms.push_back(OpenAndSnapshotMs(stored.db()));
    read_ms.push_back(ReadFilesMs(files, bytes));
  }
  PrintResult("snapshot_build_from_store", Median(open_ms), "read_files", Median(read_ms), "ms", 3);

  // One link's health change on the snapshot against a rebuild from the model's view.
  std::unique_ptr<Model> model = OpenModel(stored.db());
  const geodesic::pathcomp::ModelView view = model->View();
  Snapshot current = *model->CurrentSnapshot();
  std::vector<std::vector<std::pair<std::string, geodesic::v1::LinkHealth>>> updates;
  for (int n = 0; n < kUpdatesPerBatch; ++n) {
    // Spread over the links by a stride coprime to their count.
    updates.push_back(HealthUpdate(current.link_id((n * 7) % current.link_count()), n));
  }
  std::vector<double> update_us, rebuild_us;
  size_t sink = 0;
  for (int batch = 0; batch < std::max(kUpdateBatches, kRebuilds); ++batch) {
    if (batch < kUpdateBatches) {
      const auto start = Clock::now();
      for (const auto& update : updates) {
        auto next = current.WithLinkHealth(update);
        if (!next.ok()) Die(next.status().ToString());
        current = *std::move(next);
      }
      update_us.push_back(Us(Clock::now() - start) / kUpdatesPerBatch);
      sink += current.usable_link_count();
    }
    if (batch < kRebuilds) {
      const auto start = Clock::now();
      const Snapshot rebuilt = Snapshot::Build(view);
      rebuild_us.push_back(Us(Clock::now() - start));
      CheckCogentco(rebuilt);
      sink += rebuilt.usable_link_count();
    }
  }
  if (sink == static_cast<size_t>(-1)) printf("%zu\n", sink);  // keeps the work observable
  PrintResult("snapshot_incremental_update", Median(update_us), "full_rebuild", Median(rebuild_us),
              "us", 2);
  return 0;
}
