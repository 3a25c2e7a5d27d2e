#pragma once
// What the model import tests share: the REPETITA datasets, a model on a
// RocksDB store in a temp dir, importing a file as tectl does, comparing
// models, and a fixture whose store holds Abilene. Test-only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "pathcomp/model/model.h"
#include "state/rocks_store.h"
#include "tests/support/test_dirs.h"
#include "tests/topology/topology_testing.h"
#include "topology/import.h"
#include "topology/repetita.h"

namespace geodesic::pathcomp::model_testing {

using state::Kind;
using ::geodesic::testing::TempDir;
using topology::testing::RepetitaDir;

inline constexpr const char* kDatasets[] = {"Abilene", "Geant2009", "AttMpls",   "Esnet",
                                     "Deltacom", "GtsCe",    "UsCarrier", "Cogentco"};

inline std::string GraphPath(const std::string& name) { return RepetitaDir() + "/" + name + ".graph"; }
inline std::string DemandsPath(const std::string& name) {
  return RepetitaDir() + "/" + name + ".0000.demands";
}

inline absl::StatusOr<std::unique_ptr<Model>> OpenModel(const std::string& dir) {
  auto store = state::OpenRocksStore(dir);
  if (!store.ok()) return store.status();
  return Model::Open(*std::move(store));
}

// What `tectl import` and pathcomp's configured inventory do with a file:
// read it in whatever format it is, then import it.
inline absl::StatusOr<ImportResult> ImportFile(Model& model, const std::string& path,
                                        const ImportOptions& options = {}) {
  auto inventory = topology::ImportTopology(path);
  if (!inventory.ok()) return inventory.status();
  return model.ImportInventory(*inventory, absl::StrCat("import of ", path), options);
}

inline const ImportCount& CountOf(const ImportResult& result, Kind kind) {
  for (const auto& count : result.counts) {
    if (count.kind == kind) return count;
  }
  static const ImportCount kNone{kind};
  ADD_FAILURE() << "no count for kind " << static_cast<int>(kind);
  return kNone;
}

// Every entity of the model, in a form two models can be compared by.
inline std::string EntitiesText(const Model& model) {
  std::string out;
  auto add = [&out](const auto& items) {
    for (const auto& item : items) absl::StrAppend(&out, item.ShortDebugString(), "\n");
    absl::StrAppend(&out, "--\n");
  };
  add(model.Facilities());
  add(model.Nodes());
  add(model.Links());
  add(model.Fabrics());
  add(model.Services());
  add(model.Workloads());
  add(model.Intents());
  return out;
}

inline v1::Link LinkOf(const Model& model, const std::string& id) {
  for (const auto& link : model.Links()) {
    if (link.id() == id) return link;
  }
  ADD_FAILURE() << "no link " << id;
  return {};
}

// A store that holds Abilene, imported from the dataset.
class StoredAbileneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto abilene = topology::LoadRepetita(GraphPath("Abilene"), DemandsPath("Abilene"));
    ASSERT_TRUE(abilene.ok()) << abilene.status();
    abilene_ = *std::move(abilene);
    ASSERT_EQ(abilene_.links.size(), 28u);
    ASSERT_EQ(abilene_.links[0].id(), "edge_0");
    Reopen();
    auto imported = model_->ImportInventory(abilene_, "import of Abilene");
    ASSERT_TRUE(imported.ok()) << imported.status();
    ASSERT_TRUE(imported->changed());
  }

  // Closes the store and opens it again in a fresh Model.
  void Reopen() {
    model_.reset();
    auto model = OpenModel(dir_.Join("db"));
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
  }

  // Reports `link` (of `facility`) with the given health, as that facility's agent.
  void ReportHealth(const std::string& facility, const std::string& link, v1::OperState state,
                    uint64_t rtt_us) {
    uint64_t& seq = seqs_[facility];
    if (seq == 0) {
      ASSERT_TRUE(model_->OpenSession(facility, "agent", 1).ok());
    }
    v1::AgentMessage message;
    v1::Update& update = seq == 0 ? *message.mutable_snapshot() : *message.mutable_delta();
    update.set_seq(++seq);
    auto* report = update.add_links();
    report->set_link_id(link);
    report->mutable_health()->set_state(state);
    report->mutable_health()->set_rtt_us(rtt_us);
    auto applied = model_->ApplyReport(facility, "agent", 1, message, "test-agent");
    ASSERT_TRUE(applied.ok()) << applied.status();
    if (seq == 1) {
      v1::AgentMessage sync;
      sync.mutable_sync()->set_seq(++seq);
      ASSERT_TRUE(model_->ApplyReport(facility, "agent", 1, sync, "test-agent").ok());
    }
  }

  TempDir dir_;
  topology::Topology abilene_;
  std::unique_ptr<Model> model_;
  std::map<std::string, uint64_t> seqs_;
};


}  // namespace geodesic::pathcomp::model_testing
