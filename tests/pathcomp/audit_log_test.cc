// The operators' audit log: numbered records, windows of them, its depth, and
// numbering that continues after a restart.
#include "pathcomp/model/audit_log.h"

#include <gtest/gtest.h>

#include "state/memory_store.h"

namespace geodesic::pathcomp {
namespace {

v1::AuditRecord Record(const std::string& action) {
  v1::AuditRecord record;
  record.set_action(action);
  record.set_identity("spiffe://geodesic/operator/alice");
  record.set_ok(true);
  return record;
}

v1::ListAuditLogRequest Window(uint64_t from_seq, uint32_t limit) {
  v1::ListAuditLogRequest request;
  request.set_from_seq(from_seq);
  request.set_limit(limit);
  return request;
}

TEST(AuditLogTest, NumbersRecordsAndListsWindows) {
  state::StorePtr store = state::NewMemoryStore();
  AuditLog log(*store);
  ASSERT_TRUE(log.Load().ok());
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(*log.Append(Record("drain " + std::to_string(i))), static_cast<uint64_t>(i));
  auto newest = log.List(Window(0, 2));
  ASSERT_TRUE(newest.ok());
  EXPECT_EQ(newest->last_seq(), 5u);
  ASSERT_EQ(newest->records_size(), 2);
  EXPECT_EQ(newest->records(0).seq(), 4u);
  EXPECT_EQ(newest->records(1).action(), "drain 5");
  auto from = log.List(Window(2, 2));
  ASSERT_TRUE(from.ok());
  ASSERT_EQ(from->records_size(), 2);
  EXPECT_EQ(from->records(0).seq(), 2u);
  EXPECT_EQ(log.List(Window(0, 10'001)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(AuditLogTest, KeepsTheNewestDepthRecords) {
  state::StorePtr store = state::NewMemoryStore();
  AuditLog log(*store);
  ASSERT_TRUE(log.Load().ok());
  for (size_t i = 0; i < AuditLog::kDepth + 3; ++i) ASSERT_TRUE(log.Append(Record("x")).ok());
  auto first = log.List(Window(1, 10));
  ASSERT_TRUE(first.ok());
  ASSERT_GT(first->records_size(), 0);
  EXPECT_EQ(first->records(0).seq(), 4u);  // 1..3 were dropped
  AuditLog reopened(*store);
  ASSERT_TRUE(reopened.Load().ok());
  auto again = reopened.List(Window(1, 10'000));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->records_size(), static_cast<int>(AuditLog::kDepth));
}

TEST(AuditLogTest, NumberingContinuesAfterARestart) {
  state::StorePtr store = state::NewMemoryStore();
  {
    AuditLog log(*store);
    ASSERT_TRUE(log.Load().ok());
    ASSERT_TRUE(log.Append(Record("a")).ok());
    ASSERT_TRUE(log.Append(Record("b")).ok());
  }
  AuditLog reopened(*store);
  ASSERT_TRUE(reopened.Load().ok());
  EXPECT_EQ(*reopened.Append(Record("c")), 3u);
}

}  // namespace
}  // namespace geodesic::pathcomp
