#include "site_agent/link_health_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace geodesic::site_agent {
namespace {

class LinkHealthSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "health-" + std::to_string(::getpid()) + ".yaml";
    std::remove(path_.c_str());
    v1::LinkHealth up;
    up.set_state(v1::OPER_STATE_UP);
    up.set_rtt_us(4000);
    source_ = std::make_unique<LinkHealthSource>(
        std::vector<std::pair<std::string, v1::LinkHealth>>{{"iad-chi", up}, {"iad-nyc", up}},
        path_);
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void Write(const std::string& content) { std::ofstream(path_) << content; }

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

}  // namespace
}  // namespace geodesic::site_agent
