#include "state/internal/journal_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace geodesic::state::internal {
namespace {

using ::testing::HasSubstr;

JournalEntry SampleEntry() {
  JournalEntry entry;
  entry.seq = 42;
  entry.at_unix_ms = 1'700'000'000'123;
  entry.cause = "telemetry from spiffe://geodesic/site/iad/agent seq 42";
  entry.changes = {
      {Kind::kLink, "iad-ord-1", std::string("\0\x01\xff value", 9)},
      {Kind::kIntent, "drain-1", std::nullopt},
      {Kind::kAgentSession, "spiffe://geodesic/site/iad/agent", std::string()},
  };
  return entry;
}

TEST(JournalCodecTest, RoundTrips) {
  const JournalEntry entry = SampleEntry();
  absl::StatusOr<JournalEntry> decoded = DecodeJournalValue(42, EncodeJournalValue(entry));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, entry);

  JournalEntry negative_time;
  negative_time.at_unix_ms = -5;
  EXPECT_EQ(DecodeJournalValue(0, EncodeJournalValue(negative_time)).value(), negative_time);
}

TEST(JournalCodecTest, EveryTruncationIsDataLoss) {
  const std::string value = EncodeJournalValue(SampleEntry());
  for (size_t size = 0; size < value.size(); ++size) {
    absl::StatusOr<JournalEntry> decoded = DecodeJournalValue(7, value.substr(0, size));
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << "truncated to " << size;
    EXPECT_THAT(decoded.status().message(), HasSubstr("journal entry 7"));
  }
}

TEST(JournalCodecTest, RejectsTrailingBytesUnknownFormatKindAndOp) {
  const std::string value = EncodeJournalValue(SampleEntry());
  EXPECT_THAT(DecodeJournalValue(1, value + "x").status().message(), HasSubstr("trailing"));

  std::string format = value;
  format[0] = 2;
  EXPECT_THAT(DecodeJournalValue(1, format).status().message(), HasSubstr("unknown format 2"));

  JournalEntry one;
  one.changes = {{Kind::kLink, "l1", std::nullopt}};
  std::string kind = EncodeJournalValue(one);
  const size_t at = kind.find("link");
  ASSERT_NE(at, std::string::npos);
  kind.replace(at, 4, "lunk");
  EXPECT_THAT(DecodeJournalValue(1, kind).status().message(), HasSubstr("unknown kind \"lunk\""));

  std::string op = EncodeJournalValue(one);
  op.back() = 7;  // the delete's op byte is last
  EXPECT_THAT(DecodeJournalValue(1, op).status().message(), HasSubstr("unknown op 7"));
}

// A plan (plan_history) is journaled as its size and SHA-256, never its bytes.
TEST(JournalCodecTest, ValuesOfKindsJournaledByDigestAreWrittenAsTheirDigest) {
  const std::string plan(100'000, 'p');
  JournalEntry entry = SampleEntry();
  entry.changes.push_back({Kind::kPlanHistory, "00000000000000000007", plan});
  entry.changes.push_back({Kind::kPlan, "current-generation", std::string("7")});
  const std::string value = EncodeJournalValue(entry);
  EXPECT_LT(value.size(), 1'000u);
  absl::StatusOr<JournalEntry> decoded = DecodeJournalValue(42, value);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const Change& journaled = decoded->changes[3];
  EXPECT_EQ(journaled.kind, Kind::kPlanHistory);
  EXPECT_EQ(journaled.value, std::nullopt);
  ASSERT_TRUE(journaled.digest.has_value());
  EXPECT_EQ(journaled.digest->size, plan.size());
  EXPECT_EQ(journaled.digest, DigestOf(plan));
  EXPECT_FALSE(journaled.deleted());
  EXPECT_EQ(journaled, JournaledChange(entry.changes[3]));
  // Every other change as it was, and a decoded digest encodes the same.
  EXPECT_EQ(decoded->changes[4], entry.changes[4]);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(decoded->changes[i], entry.changes[i]);
  EXPECT_EQ(EncodeJournalValue(*decoded), value);
  // Its size, known without encoding: from the values and from the digests alike.
  EXPECT_EQ(JournalValueSize(entry.cause, entry.changes), value.size());
  EXPECT_EQ(JournalValueSize(decoded->cause, decoded->changes), value.size());
  // SHA-256 as everyone computes it (FIPS 180-2's "abc").
  const ValueDigest abc = DigestOf("abc");
  EXPECT_EQ(abc.size, 3u);
  EXPECT_EQ(abc.sha256[0], 0xba);
  EXPECT_EQ(abc.sha256[31], 0xad);
  EXPECT_NE(DigestOf("abd"), abc);

  // Schema 1 copied such values (op 1): they still decode as values.
  JournalEntry copied;
  copied.changes = {{Kind::kLink, "00000000000000000007", plan}};
  std::string old = EncodeJournalValue(copied);
  const size_t at = old.find("link");
  ASSERT_NE(at, std::string::npos);
  old.replace(at - 4, 8, std::string("\x0c\0\0\0plan_history", 16));
  absl::StatusOr<JournalEntry> read = DecodeJournalValue(3, old);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->changes[0].kind, Kind::kPlanHistory);
  EXPECT_EQ(read->changes[0].value, plan);
  // Every truncation of a digest is DataLoss too.
  JournalEntry digest_only;
  digest_only.changes = {{Kind::kPlanHistory, "1", plan}};
  const std::string short_value = EncodeJournalValue(digest_only);
  for (size_t size = 0; size < short_value.size(); ++size) {
    EXPECT_EQ(DecodeJournalValue(7, short_value.substr(0, size)).status().code(), absl::StatusCode::kDataLoss)
        << "truncated to " << size;
  }
}

TEST(JournalCodecTest, HugeChangeCountIsRejectedWithoutAllocating) {
  JournalEntry empty;
  std::string value = EncodeJournalValue(empty);
  value.replace(value.size() - 4, 4, "\xff\xff\xff\xff");
  EXPECT_THAT(DecodeJournalValue(1, value).status().message(), HasSubstr("exceeds the bytes left"));
}

TEST(JournalCodecTest, KeysSortBySeqAndRoundTrip) {
  EXPECT_LT(EncodeJournalKey(255), EncodeJournalKey(256));
  EXPECT_LT(EncodeJournalKey(1), EncodeJournalKey(uint64_t{1} << 56));
  for (uint64_t seq : {uint64_t{0}, uint64_t{1}, uint64_t{0x0102030405060708}, ~uint64_t{0}}) {
    EXPECT_EQ(DecodeJournalKey(EncodeJournalKey(seq)), seq);
  }
  EXPECT_EQ(DecodeJournalKey("short"), std::nullopt);
}

}  // namespace
}  // namespace geodesic::state::internal
