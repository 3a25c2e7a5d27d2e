// The Store contract, checked against every implementation: MemoryStore and
// RocksStore must be interchangeable for pathcomp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "geodesic/v1/model.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "state/change_set.h"
#include "state/memory_store.h"
#include "state/replay.h"
#include "state/rocks_store.h"
#include "state/store.h"
#include "state/typed_access.h"
#include "tests/support/test_dirs.h"

namespace geodesic::state {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::geodesic::testing::TempDir;

v1::Facility MakeFacility(const std::string& id, const std::string& region) {
  v1::Facility facility;
  facility.set_id(id);
  facility.set_region(region);
  facility.mutable_position()->set_latitude_deg(38.95);
  facility.mutable_position()->set_longitude_deg(-77.45);
  facility.add_prefixes("10.1.0.0/16");
  return facility;
}

v1::Link MakeLink(const std::string& id, double capacity_gbps) {
  v1::Link link;
  link.set_id(id);
  link.set_src_node_id("iad-br1");
  link.set_dst_node_id("ord-br1");
  link.set_src_facility_id("iad");
  link.set_dst_facility_id("ord");
  link.set_capacity_gbps(capacity_gbps);
  link.set_igp_metric(10);
  link.set_latency_us(8500);
  link.add_srlgs("conduit-iad-ord-a");
  link.set_admin_state(v1::ADMIN_STATE_UP);
  link.mutable_health()->set_state(v1::OPER_STATE_UP);
  link.mutable_health()->set_rtt_us(17100);
  return link;
}

MATCHER_P(ProtoEq, expected, "") { return MessageDifferencer::Equals(arg, expected); }

struct MemoryStoreFactory {
  StorePtr Make() { return NewMemoryStore(); }
};

struct RocksStoreFactory {
  TempDir dir;
  int opened = 0;
  StorePtr Make() {
    absl::StatusOr<StorePtr> store = OpenRocksStore(dir.Join(absl::StrCat("db", opened++)));
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
};

template <typename Factory>
class StoreContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = factory_.Make();
    ASSERT_NE(store_, nullptr);
  }

  Factory factory_;
  StorePtr store_;
};

using Factories = ::testing::Types<MemoryStoreFactory, RocksStoreFactory>;
class FactoryNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, MemoryStoreFactory> ? "MemoryStore" : "RocksStore";
  }
};
TYPED_TEST_SUITE(StoreContractTest, Factories, FactoryNames);

TYPED_TEST(StoreContractTest, PutGetListDeleteRoundTrip) {
  Store& store = *this->store_;
  EXPECT_EQ(store.LastJournalSeq(), 0u);

  ChangeSet put("inventory load");
  put.Put(Kind::kFacility, "iad", MakeFacility("iad", "us-east"));
  put.Put(Kind::kFacility, "ord", MakeFacility("ord", "us-central"));
  put.Put(Kind::kLink, "iad-ord-1", MakeLink("iad-ord-1", 400));
  ASSERT_EQ(store.Commit(put).value(), 1u);

  EXPECT_THAT(Get<v1::Facility>(store, Kind::kFacility, "iad").value(), ProtoEq(MakeFacility("iad", "us-east")));
  EXPECT_THAT(Get<v1::Link>(store, Kind::kLink, "iad-ord-1").value(), ProtoEq(MakeLink("iad-ord-1", 400)));
  // Kinds are separate namespaces.
  EXPECT_EQ(store.GetRaw(Kind::kLink, "iad").status().code(), absl::StatusCode::kNotFound);

  absl::StatusOr<std::vector<v1::Facility>> facilities = List<v1::Facility>(store, Kind::kFacility);
  ASSERT_TRUE(facilities.ok()) << facilities.status();
  EXPECT_THAT(*facilities,
              ElementsAre(ProtoEq(MakeFacility("iad", "us-east")), ProtoEq(MakeFacility("ord", "us-central"))));
  EXPECT_TRUE(store.ListRaw(Kind::kNode).value().empty());

  ChangeSet remove("decommission iad");
  remove.Delete(Kind::kFacility, "iad");
  remove.Delete(Kind::kFacility, "never-existed");
  ASSERT_EQ(store.Commit(remove).value(), 2u);

  absl::StatusOr<v1::Facility> gone = Get<v1::Facility>(store, Kind::kFacility, "iad");
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(gone.status().message(), HasSubstr("facility/iad"));
  EXPECT_THAT(List<v1::Facility>(store, Kind::kFacility).value(),
              ElementsAre(ProtoEq(MakeFacility("ord", "us-central"))));
}

TYPED_TEST(StoreContractTest, ListIsOrderedByIdAndIdsMayContainSlashes) {
  Store& store = *this->store_;
  ChangeSet changes("agents connect");
  changes.PutRaw(Kind::kAgentSession, "spiffe://geodesic/site/ord/agent", "b");
  changes.PutRaw(Kind::kAgentSession, "spiffe://geodesic/site/iad/agent", "a");
  changes.PutRaw(Kind::kAgentSession, "z", "");
  ASSERT_TRUE(store.Commit(changes).ok());
  EXPECT_THAT(store.ListRaw(Kind::kAgentSession).value(),
              ElementsAre(Pair("spiffe://geodesic/site/iad/agent", "a"), Pair("spiffe://geodesic/site/ord/agent", "b"),
                          Pair("z", "")));
  EXPECT_EQ(store.GetRaw(Kind::kAgentSession, "spiffe://geodesic/site/ord/agent").value(), "b");
}

TYPED_TEST(StoreContractTest, LaterChangeOfTheSameEntityWins) {
  Store& store = *this->store_;
  ChangeSet changes("flap");
  changes.Put(Kind::kLink, "l1", MakeLink("l1", 100));
  changes.Put(Kind::kLink, "l1", MakeLink("l1", 200));
  changes.Delete(Kind::kLink, "l2");
  changes.PutRaw(Kind::kLink, "l2", "x");
  changes.PutRaw(Kind::kLink, "l3", "y");
  changes.Delete(Kind::kLink, "l3");
  ASSERT_TRUE(store.Commit(changes).ok());
  EXPECT_EQ(Get<v1::Link>(store, Kind::kLink, "l1").value().capacity_gbps(), 200);
  EXPECT_EQ(store.GetRaw(Kind::kLink, "l2").value(), "x");
  EXPECT_EQ(store.GetRaw(Kind::kLink, "l3").status().code(), absl::StatusCode::kNotFound);
}

TYPED_TEST(StoreContractTest, InvalidChangeSetAppliesNothingAndUsesNoSeq) {
  Store& store = *this->store_;
  ChangeSet first("first");
  first.PutRaw(Kind::kMeta, "k", "v");
  ASSERT_EQ(store.Commit(first).value(), 1u);

  ChangeSet half_bad("intent drain-1 by operator alice");
  half_bad.Put(Kind::kLink, "l1", MakeLink("l1", 100));
  half_bad.Delete(Kind::kMeta, "k");
  half_bad.Put(Kind::kLink, "", MakeLink("", 100));
  absl::StatusOr<uint64_t> seq = store.Commit(half_bad);
  EXPECT_EQ(seq.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(seq.status().message(), HasSubstr("empty id"));

  EXPECT_EQ(store.Commit(ChangeSet("nothing")).status().code(), absl::StatusCode::kInvalidArgument);
  ChangeSet no_cause("");
  no_cause.PutRaw(Kind::kMeta, "k", "w");
  EXPECT_EQ(store.Commit(no_cause).status().code(), absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(store.GetRaw(Kind::kLink, "l1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.GetRaw(Kind::kMeta, "k").value(), "v");
  EXPECT_EQ(store.LastJournalSeq(), 1u);
  EXPECT_EQ(store.ReadJournal(1, 10).value().size(), 1u);

  ChangeSet next("next");
  next.PutRaw(Kind::kMeta, "k", "w");
  EXPECT_EQ(store.Commit(next).value(), 2u);
}

TYPED_TEST(StoreContractTest, AnUnsyncedCommitIsSeenAtOnceAndTakesTheNextSeq) {
  Store& store = *this->store_;
  ChangeSet telemetry("telemetry from spiffe://geodesic/site/iad/agent seq 1");
  telemetry.Put(Kind::kLink, "l1", MakeLink("l1", 100));
  ASSERT_EQ(store.CommitUnsynced(telemetry).value(), 1u);
  EXPECT_EQ(Get<v1::Link>(store, Kind::kLink, "l1").value().capacity_gbps(), 100);
  ASSERT_TRUE(store.Sync().ok());
  ChangeSet intent("intent drain-1 by operator alice");
  intent.PutRaw(Kind::kMeta, "k", "v");
  EXPECT_EQ(store.Commit(intent).value(), 2u);
  EXPECT_TRUE(store.Sync().ok());  // nothing left to sync
  ASSERT_EQ(store.ReadJournal(1, 10).value().size(), 2u);
  // Bad input is refused as by Commit.
  EXPECT_EQ(store.CommitUnsynced(ChangeSet("nothing")).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store.LastJournalSeq(), 2u);
}

TYPED_TEST(StoreContractTest, ReadersSeeAWholeCommitOrNone) {
  Store& store = *this->store_;
  // Every commit sets both ends of a link pair to the same generation; a reader
  // listing the kind must never see the two disagree, nor only one of them.
  // The writer keeps committing until the reader has listed kReads times.
  constexpr int kReads = 500;
  std::atomic<bool> reader_done = false;
  std::atomic<int> torn = 0;
  std::thread reader([&] {
    for (int i = 0; i < kReads; ++i) {
      auto links = store.ListRaw(Kind::kLink);
      if (!links.ok() || links->size() == 1 || (links->size() == 2 && (*links)[0].second != (*links)[1].second)) {
        ++torn;
      }
    }
    reader_done = true;
  });
  int generation = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!reader_done.load() && absl::Now() < deadline) {
    ChangeSet changes(absl::StrCat("generation ", generation));
    const v1::Link both_ends = MakeLink("pair", generation++);
    changes.Put(Kind::kLink, "a-to-b", both_ends);
    changes.Put(Kind::kLink, "b-to-a", both_ends);
    if (absl::StatusOr<uint64_t> seq = store.Commit(changes); !seq.ok()) {
      ADD_FAILURE() << seq.status();
      break;
    }
  }
  reader.join();
  EXPECT_TRUE(reader_done.load());
  EXPECT_EQ(torn.load(), 0) << "of " << kReads << " reads during " << generation << " commits";
}

TYPED_TEST(StoreContractTest, JournalRecordsCauseAndChangesInOrder) {
  Store& store = *this->store_;
  const int64_t before_ms = absl::ToUnixMillis(absl::Now());
  ChangeSet telemetry("telemetry from spiffe://geodesic/site/iad/agent seq 42");
  telemetry.Put(Kind::kLink, "l2", MakeLink("l2", 100));
  telemetry.Put(Kind::kLink, "l1", MakeLink("l1", 100));
  telemetry.PutRaw(Kind::kAgentSession, "iad", std::string("\0\xff", 2));
  ASSERT_EQ(store.Commit(telemetry).value(), 1u);
  ChangeSet intent("intent drain-1 by operator alice");
  intent.Delete(Kind::kLink, "l2");
  intent.PutRaw(Kind::kIntent, "drain-1", "drain");
  ASSERT_EQ(store.Commit(intent).value(), 2u);
  const int64_t after_ms = absl::ToUnixMillis(absl::Now());

  absl::StatusOr<std::vector<JournalEntry>> journal = store.ReadJournal(1, 100);
  ASSERT_TRUE(journal.ok()) << journal.status();
  ASSERT_EQ(journal->size(), 2u);
  const JournalEntry& e1 = (*journal)[0];
  EXPECT_EQ(e1.seq, 1u);
  EXPECT_EQ(e1.cause, "telemetry from spiffe://geodesic/site/iad/agent seq 42");
  EXPECT_EQ(e1.changes, telemetry.changes());
  EXPECT_THAT(e1.changes, ElementsAre(::testing::Field(&Change::id, "l2"), ::testing::Field(&Change::id, "l1"),
                                      ::testing::Field(&Change::id, "iad")));
  const JournalEntry& e2 = (*journal)[1];
  EXPECT_EQ(e2.seq, 2u);
  EXPECT_EQ(e2.cause, "intent drain-1 by operator alice");
  EXPECT_EQ(e2.changes, (std::vector<Change>{{Kind::kLink, "l2", std::nullopt}, {Kind::kIntent, "drain-1", "drain"}}));
  for (const JournalEntry& entry : *journal) {
    EXPECT_GE(entry.at_unix_ms, before_ms);
    EXPECT_LE(entry.at_unix_ms, after_ms);
  }
  EXPECT_EQ(store.LastJournalSeq(), 2u);
}

TYPED_TEST(StoreContractTest, ReadJournalHonorsFromSeqAndLimit) {
  Store& store = *this->store_;
  for (int i = 1; i <= 5; ++i) {
    ChangeSet changes(absl::StrCat("commit ", i));
    changes.PutRaw(Kind::kMeta, "counter", absl::StrCat(i));
    ASSERT_EQ(store.Commit(changes).value(), static_cast<uint64_t>(i));
  }
  auto seqs = [&](uint64_t from, size_t limit) {
    std::vector<uint64_t> out;
    const std::vector<JournalEntry> journal = store.ReadJournal(from, limit).value();
    for (const JournalEntry& entry : journal) out.push_back(entry.seq);
    return out;
  };
  EXPECT_THAT(seqs(2, 2), ElementsAre(2, 3));
  EXPECT_THAT(seqs(0, 100), ElementsAre(1, 2, 3, 4, 5));
  EXPECT_THAT(seqs(4, 100), ElementsAre(4, 5));
  EXPECT_THAT(seqs(6, 100), ElementsAre());
  EXPECT_THAT(seqs(1, 0), ElementsAre());
}

TYPED_TEST(StoreContractTest, ReplayToAPastSeqReproducesThePastState) {
  Store& store = *this->store_;
  ChangeSet c1("inventory load");
  c1.Put(Kind::kFacility, "iad", MakeFacility("iad", "us-east"));
  c1.Put(Kind::kLink, "l1", MakeLink("l1", 100));
  ASSERT_EQ(store.Commit(c1).value(), 1u);
  ChangeSet c2("telemetry from spiffe://geodesic/site/iad/agent seq 7");
  c2.Put(Kind::kLink, "l1", MakeLink("l1", 400));
  c2.Put(Kind::kLink, "l2", MakeLink("l2", 100));
  ASSERT_EQ(store.Commit(c2).value(), 2u);
  ChangeSet c3("decommission iad");
  c3.Delete(Kind::kFacility, "iad");
  c3.Delete(Kind::kLink, "l1");
  c3.Put(Kind::kFacility, "ord", MakeFacility("ord", "us-central"));
  ASSERT_EQ(store.Commit(c3).value(), 3u);

  StorePtr past = this->factory_.Make();
  ASSERT_NE(past, nullptr);
  ASSERT_TRUE(ReplayJournal(store, 2, *past).ok());

  EXPECT_THAT(List<v1::Facility>(*past, Kind::kFacility).value(), ElementsAre(ProtoEq(MakeFacility("iad", "us-east"))));
  EXPECT_THAT(List<v1::Link>(*past, Kind::kLink).value(),
              ElementsAre(ProtoEq(MakeLink("l1", 400)), ProtoEq(MakeLink("l2", 100))));
  EXPECT_EQ(past->LastJournalSeq(), 2u);
  std::vector<JournalEntry> original = store.ReadJournal(1, 2).value();
  std::vector<JournalEntry> replayed = past->ReadJournal(1, 100).value();
  ASSERT_EQ(replayed.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(replayed[i].seq, original[i].seq);
    EXPECT_EQ(replayed[i].cause, original[i].cause);
    EXPECT_EQ(replayed[i].changes, original[i].changes);
  }

  // Replaying everything reproduces the present.
  StorePtr present = this->factory_.Make();
  ASSERT_NE(present, nullptr);
  ASSERT_TRUE(ReplayJournal(store, store.LastJournalSeq(), *present).ok());
  for (Kind kind : kAllKinds) EXPECT_EQ(present->ListRaw(kind).value(), store.ListRaw(kind).value()) << KindName(kind);

  // Refusals: a non-empty target, a seq past the end.
  absl::Status again = ReplayJournal(store, 1, *past);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition) << again;
  StorePtr empty = this->factory_.Make();
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(ReplayJournal(store, 4, *empty).code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(ReplayJournal(store, 0, *empty).ok());
  EXPECT_EQ(empty->LastJournalSeq(), 0u);
}

// Plans (plan_history) are journaled by digest: the journal names each
// plan put, and a replay takes the plans the store still holds.
TYPED_TEST(StoreContractTest, ValuesJournaledByDigestReplayWhileTheStoreHoldsThem) {
  Store& store = *this->store_;
  auto commit_plan = [&](const std::string& generation, const std::string& bytes, const std::string& drop = "") {
    ChangeSet plan(absl::StrCat("plan generation ", generation));
    plan.PutRaw(Kind::kPlan, "current-generation", generation);
    plan.PutRaw(Kind::kPlanHistory, generation, bytes);
    if (!drop.empty()) plan.Delete(Kind::kPlanHistory, drop);
    return store.Commit(plan);
  };
  ASSERT_EQ(commit_plan("1", "plan one").value(), 1u);
  ASSERT_EQ(commit_plan("2", "plan two").value(), 2u);
  ASSERT_EQ(commit_plan("3", "plan three", "1").value(), 3u);
  ASSERT_EQ(commit_plan("3", "plan three, again").value(), 4u);

  const std::vector<JournalEntry> journal = store.ReadJournal(1, 10).value();
  ASSERT_EQ(journal.size(), 4u);
  ASSERT_EQ(journal[0].changes.size(), 2u);
  EXPECT_EQ(journal[0].changes[0], (Change{Kind::kPlan, "current-generation", "1"}));
  const Change& plan = journal[0].changes[1];
  EXPECT_EQ(plan.kind, Kind::kPlanHistory);
  EXPECT_EQ(plan.id, "1");
  EXPECT_EQ(plan.value, std::nullopt) << "the journal holds no copy of a plan";
  ASSERT_TRUE(plan.digest.has_value());
  EXPECT_EQ(plan.digest->size, 8u);
  EXPECT_NE(journal[1].changes[1].digest, plan.digest);
  EXPECT_FALSE(plan.deleted());
  EXPECT_TRUE(journal[2].changes[2].deleted());

  // As of seq 2: plan 1 was dropped since, so the past lacks it; plan 2 is there.
  StorePtr past = this->factory_.Make();
  ASSERT_NE(past, nullptr);
  ASSERT_TRUE(ReplayJournal(store, 2, *past).ok());
  EXPECT_THAT(past->ListRaw(Kind::kPlanHistory).value(), ElementsAre(Pair("2", "plan two")));
  EXPECT_EQ(past->GetRaw(Kind::kPlan, "current-generation").value(), "2");
  EXPECT_EQ(past->LastJournalSeq(), 2u);
  // As of seq 3: plan 3 was put again since with other bytes: not the ones of seq 3.
  StorePtr before_again = this->factory_.Make();
  ASSERT_NE(before_again, nullptr);
  ASSERT_TRUE(ReplayJournal(store, 3, *before_again).ok());
  EXPECT_THAT(before_again->ListRaw(Kind::kPlanHistory).value(), ElementsAre(Pair("2", "plan two")));
  // Up to the last seq: the present, exactly, and the same journal.
  StorePtr present = this->factory_.Make();
  ASSERT_NE(present, nullptr);
  ASSERT_TRUE(ReplayJournal(store, 4, *present).ok());
  for (Kind kind : kAllKinds) EXPECT_EQ(present->ListRaw(kind).value(), store.ListRaw(kind).value()) << KindName(kind);
  const std::vector<JournalEntry> replayed = present->ReadJournal(1, 10).value();
  ASSERT_EQ(replayed.size(), 4u);
  EXPECT_EQ(replayed[3].changes, journal[3].changes);

  // An entry of nothing but a plan no longer held cannot be replayed: said, naming it.
  ChangeSet lone("a lone plan");
  lone.PutRaw(Kind::kPlanHistory, "9", "plan nine");
  ASSERT_EQ(store.Commit(lone).value(), 5u);
  ChangeSet drop("drop it");
  drop.Delete(Kind::kPlanHistory, "9");
  ASSERT_EQ(store.Commit(drop).value(), 6u);
  StorePtr gap = this->factory_.Make();
  ASSERT_NE(gap, nullptr);
  const absl::Status refused = ReplayJournal(store, 6, *gap);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("journal seq 5 (\"a lone plan\")"));
  EXPECT_EQ(gap->LastJournalSeq(), 4u);
}

// A journal bounded by its retention: the oldest entries go, the newest
// stays (the next seq goes on from it), the entities keep what they did.
TYPED_TEST(StoreContractTest, TrimJournalDropsTheOldestEntriesButNeverTheNewest) {
  Store& store = *this->store_;
  EXPECT_EQ(store.FirstJournalSeq(), 1u);
  EXPECT_EQ(store.TrimJournal(10).value(), 0u) << "an empty journal has nothing to drop";
  for (int i = 1; i <= 5; ++i) {
    ChangeSet link(absl::StrCat("commit ", i));
    link.Put(Kind::kLink, absl::StrCat("l", i), MakeLink(absl::StrCat("l", i), 100 * i));
    ASSERT_EQ(store.Commit(link).value(), static_cast<uint64_t>(i));
  }
  EXPECT_EQ(store.FirstJournalSeq(), 1u);
  EXPECT_GT(store.JournalBytes(1, 5), 0u);
  EXPECT_GE(store.JournalBytes(1, 5), store.JournalBytes(3, 5));
  auto seqs = [&](uint64_t from) {
    std::vector<uint64_t> out;
    const std::vector<JournalEntry> journal = store.ReadJournal(from, 100).value();
    for (const JournalEntry& entry : journal) out.push_back(entry.seq);
    return out;
  };

  EXPECT_EQ(store.TrimJournal(3).value(), 2u);
  EXPECT_EQ(store.FirstJournalSeq(), 3u);
  EXPECT_EQ(store.LastJournalSeq(), 5u);
  EXPECT_THAT(seqs(1), ElementsAre(3, 4, 5));
  EXPECT_THAT(seqs(4), ElementsAre(4, 5));
  EXPECT_EQ(store.ReadJournal(3, 1).value().front().cause, "commit 3");
  EXPECT_EQ(store.ListRaw(Kind::kLink).value().size(), 5u) << "the entities keep every change";
  EXPECT_EQ(store.TrimJournal(3).value(), 0u);
  EXPECT_EQ(store.TrimJournal(2).value(), 0u);

  // Never the newest: a trim past it stops there.
  EXPECT_EQ(store.TrimJournal(1'000).value(), 2u);
  EXPECT_EQ(store.FirstJournalSeq(), 5u);
  EXPECT_THAT(seqs(1), ElementsAre(5));
  ChangeSet next("commit 6");
  next.Delete(Kind::kLink, "l1");
  EXPECT_EQ(store.Commit(next).value(), 6u);
  EXPECT_THAT(seqs(1), ElementsAre(5, 6));

  // The state before the first entry kept is not in the journal: no replay.
  StorePtr into = this->factory_.Make();
  ASSERT_NE(into, nullptr);
  const absl::Status replay = ReplayJournal(store, 6, *into);
  EXPECT_EQ(replay.code(), absl::StatusCode::kFailedPrecondition) << replay;
  EXPECT_THAT(replay.message(), HasSubstr("the journal starts at seq 5"));
  EXPECT_EQ(into->LastJournalSeq(), 0u);
}

TYPED_TEST(StoreContractTest, CorruptValueIsDataLossNamingTheEntity) {
  Store& store = *this->store_;
  ChangeSet changes("bad writer");
  // Field 1, length-delimited, claims 16 bytes but only 3 follow.
  changes.PutRaw(Kind::kLink, "l-bad",
                 std::string("\x0a\x10"
                             "abc"));
  changes.Put(Kind::kLink, "l-good", MakeLink("l-good", 100));
  ASSERT_TRUE(store.Commit(changes).ok());

  absl::StatusOr<v1::Link> bad = Get<v1::Link>(store, Kind::kLink, "l-bad");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(bad.status().message(), HasSubstr("link/l-bad"));
  EXPECT_THAT(bad.status().message(), HasSubstr("geodesic.v1.Link"));
  EXPECT_TRUE(Get<v1::Link>(store, Kind::kLink, "l-good").ok());
  absl::StatusOr<std::vector<v1::Link>> all = List<v1::Link>(store, Kind::kLink);
  EXPECT_EQ(all.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(all.status().message(), HasSubstr("link/l-bad"));
}

TYPED_TEST(StoreContractTest, ConcurrentCommitsAllLandWithDistinctAscendingSeqs) {
  Store& store = *this->store_;
  constexpr int kThreads = 8;
  constexpr int kCommitsPerThread = 50;
  std::vector<std::vector<uint64_t>> seqs(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommitsPerThread; ++i) {
        ChangeSet changes(absl::StrCat("thread ", t, " commit ", i));
        const std::string id = absl::StrCat("t", t, "-", i);
        changes.Put(Kind::kLink, id, MakeLink(id, i));
        changes.PutRaw(Kind::kMeta, absl::StrCat("last-of-thread-", t), absl::StrCat(i));
        absl::StatusOr<uint64_t> seq = store.Commit(changes);
        ASSERT_TRUE(seq.ok()) << seq.status();
        seqs[t].push_back(*seq);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  constexpr uint64_t kTotal = kThreads * kCommitsPerThread;
  std::map<uint64_t, std::string> cause_by_seq;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seqs[t].size(), static_cast<size_t>(kCommitsPerThread));
    EXPECT_TRUE(std::is_sorted(seqs[t].begin(), seqs[t].end()));
    for (int i = 0; i < kCommitsPerThread; ++i) {
      EXPECT_TRUE(cause_by_seq.emplace(seqs[t][i], absl::StrCat("thread ", t, " commit ", i)).second)
          << "seq " << seqs[t][i] << " returned twice";
    }
  }
  ASSERT_EQ(cause_by_seq.size(), kTotal);
  EXPECT_EQ(cause_by_seq.begin()->first, 1u);
  EXPECT_EQ(cause_by_seq.rbegin()->first, kTotal);
  EXPECT_EQ(store.LastJournalSeq(), kTotal);
  EXPECT_EQ(store.ListRaw(Kind::kLink).value().size(), kTotal);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(store.GetRaw(Kind::kMeta, absl::StrCat("last-of-thread-", t)).value(),
              absl::StrCat(kCommitsPerThread - 1));
  }
  std::vector<JournalEntry> journal = store.ReadJournal(1, kTotal + 1).value();
  ASSERT_EQ(journal.size(), kTotal);
  for (const JournalEntry& entry : journal) EXPECT_EQ(entry.cause, cause_by_seq[entry.seq]);
}

}  // namespace
}  // namespace geodesic::state
