#include "site_agent/link_health_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/support/test_dirs.h"

namespace geodesic::site_agent {
namespace {

class LinkHealthSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("health.yaml");
    v1::LinkHealth up;
    up.set_state(v1::OPER_STATE_UP);
    up.set_rtt_us(4000);
    source_ = std::make_unique<LinkHealthSource>(
        std::vector<std::pair<std::string, v1::LinkHealth>>{{"iad-chi", up}, {"iad-nyc", up}},
        path_);
  }
  void Write(const std::string& content) { std::ofstream(path_) << content; }

  testing::TempDir dir_{"link-health"};
  std::string path_;
  std::unique_ptr<LinkHealthSource> source_;
};

TEST_F(LinkHealthSourceTest, FirstPollReportsEverythingThenOnlyChanges) {
  auto first = source_->Poll(1000);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].health().measured_at_unix_ms(), 1000);
  EXPECT_TRUE(source_->Poll(2000).empty());
  Write("links:\n  iad-chi: {state: down}\n");
  auto changed = source_->Poll(3000);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].link_id(), "iad-chi");
  EXPECT_EQ(changed[0].health().state(), v1::OPER_STATE_DOWN);
  EXPECT_EQ(changed[0].health().rtt_us(), 4000u);  // untouched fields keep their value
  Write("links: {}\n");
  changed = source_->Poll(4000);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].health().state(), v1::OPER_STATE_UP);
}

TEST_F(LinkHealthSourceTest, BadFilesChangeNothing) {
  source_->Poll(1000);
  Write("links:\n  iad-chi: {state: down}\n  chi-iad: {state: down}\n");  // not ours
  EXPECT_TRUE(source_->Poll(2000).empty());
  EXPECT_THAT(std::string(source_->file_status().message()),
              ::testing::HasSubstr("chi-iad: not a link of this facility"));
  Write("links:\n  iad-chi: {state: sideways}\n");
  EXPECT_TRUE(source_->Poll(3000).empty());
  Write("links: [unclosed\n");
  EXPECT_TRUE(source_->Poll(4000).empty());
  EXPECT_FALSE(source_->file_status().ok());
  for (const auto& report : source_->Current()) {
    EXPECT_EQ(report.health().state(), v1::OPER_STATE_UP);
  }
}

TEST_F(LinkHealthSourceTest, MeasurementsTravelWhenDueStateChangesAtOnce) {
  source_->Poll(1000);
  v1::LinkHealth measured;
  measured.set_state(v1::OPER_STATE_UP);
  measured.set_rtt_us(4100);
  measured.set_jitter_us(30);
  source_->SetMeasured("iad-chi", measured);
  source_->SetUtilization("iad-chi", 0.4);
  EXPECT_TRUE(source_->Poll(2000, /*measurements_due=*/false).empty());
  auto changed = source_->Poll(3000, /*measurements_due=*/true);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].health().rtt_us(), 4100u);
  EXPECT_EQ(changed[0].health().utilization_ratio(), 0.4);

  measured.set_state(v1::OPER_STATE_DOWN);
  source_->SetMeasured("iad-chi", measured);
  changed = source_->Poll(4000, /*measurements_due=*/false);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].health().state(), v1::OPER_STATE_DOWN);

  // The health file overrides what is measured, field by field.
  Write("links:\n  iad-chi: {state: degraded, loss_ratio: 0.3}\n");
  changed = source_->Poll(5000, false);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].health().state(), v1::OPER_STATE_DEGRADED);
  EXPECT_EQ(changed[0].health().loss_ratio(), 0.3);
  EXPECT_EQ(changed[0].health().rtt_us(), 4100u);
  source_->SetMeasured("unknown-link", measured);  // ignored
  EXPECT_EQ(source_->Current().size(), 2u);
}

}  // namespace
}  // namespace geodesic::site_agent
