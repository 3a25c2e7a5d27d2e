// FailureDistances answers as ShortestPaths::Run under the same failure
// (distances, paths, tie-breaks): every (source, destination) pair of
// generated backbones with parallel links, links down and shared-risk
// groups, under every facility, link and SRLG failure in turn; and
// MayChange alike whether or not the source's tree was repaired yet.
#include "pathcomp/solver/failure_distances.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/pathcomp/backbone_testing.h"

namespace geodesic::pathcomp {
namespace {

Snapshot Backbone(uint64_t seed) { return Snapshot::Build(testing::GeneratedBackbone(seed, 24)); }

// Every failure a plan protects against: each facility, link and SRLG.
std::vector<Exclusion> Failures(const Snapshot& snapshot) {
  std::vector<Exclusion> failures;
  for (int f = 0; f < snapshot.facility_count(); ++f) failures.push_back(Exclusion{.facility = f});
  for (int l = 0; l < snapshot.link_count(); ++l) failures.push_back(Exclusion{.link = l});
  int srlgs = 0;
  for (int l = 0; l < snapshot.link_count(); ++l) {
    for (const int srlg : snapshot.link_srlgs(l)) srlgs = std::max(srlgs, srlg + 1);
  }
  for (int g = 0; g < srlgs; ++g) failures.push_back(Exclusion{.srlg = g});
  return failures;
}

TEST(FailureDistancesTest, AnswersAsAFreshShortestPathRunUnderEveryFailure) {
  int compared = 0, rerouted = 0, unfailed_steps = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const Snapshot snapshot = Backbone(seed);
    const int n = snapshot.facility_count();
    FailureDistances distances(snapshot, nullptr);
    for (const Exclusion& failure : Failures(snapshot)) {
      distances.SetFailure(failure);
      for (int from = 0; from < n; ++from) {
        const ShortestPaths fresh = ShortestPaths::Run(snapshot, from, failure);
        const ShortestPaths unfailed = ShortestPaths::Run(snapshot, from, Exclusion{});
        for (int to = 0; to < n; ++to) {
          if (to == failure.facility) continue;  // unspecified there
          const std::string pair = absl::StrCat("seed ", seed, " ", from, "->", to, " under (link ", failure.link,
                                                ", srlg ", failure.srlg, ", facility ", failure.facility, ")");
          const bool source_down = from == failure.facility;
          const uint64_t want = source_down ? kUnreachable : fresh.distance_us[to];
          ASSERT_EQ(distances.Distance(from, to), want) << pair;
          const std::vector<int> links = source_down || from == to ? std::vector<int>{} : fresh.LinksTo(to);
          ASSERT_EQ(distances.LinksTo(from, to), want == kUnreachable ? std::vector<int>{} : links) << pair;
          // AppendPath: the same path as facilities, after what is there.
          std::vector<int> facilities = {-7};
          const int first = distances.AppendPath(from, to, facilities);
          std::vector<int> expected = {-7};
          if (want != kUnreachable && !links.empty()) {
            expected.push_back(from);
            for (const int link : links) expected.push_back(snapshot.link_dst(link));
          }
          ASSERT_EQ(facilities, expected) << pair;
          ASSERT_EQ(first, expected.size() > 1 ? links.front() : -1) << pair;
          // LastStepTo: the path's last link and the facility before it;
          // unfailed exactly when the failure leaves the path as it was.
          const FailureDistances::LastStep last = distances.LastStepTo(from, to);
          if (want == kUnreachable || links.empty()) {
            ASSERT_EQ(last.link, -1) << pair;
            ASSERT_EQ(last.before, -1) << pair;
          } else {
            ASSERT_EQ(last.link, links.back()) << pair;
            ASSERT_EQ(last.before, snapshot.link_src(links.back())) << pair;
            if (last.unfailed) {
              ASSERT_EQ(links, unfailed.LinksTo(to)) << pair;
            }
            unfailed_steps += last.unfailed;
          }
          ++compared;
          rerouted += want != unfailed.distance_us[to];
        }
      }
    }
  }
  // The instances exercise what they should: many pairs, some moved by failures.
  EXPECT_GT(compared, 50'000);
  EXPECT_GT(rerouted, 1'000);
  EXPECT_GT(unfailed_steps, compared / 2);
}

// Trees built ahead on several threads (BuildTrees), or copied from
// another FailureDistances (CopyUnfailedTrees), answer as trees built one
// by one as asked: every pair under every failure. Runs under TSan (label
// threads).
TEST(FailureDistancesTest, TreesBuiltOnThreadsOrCopiedAnswerAlike) {
  int compared = 0;
  for (uint64_t seed = 5; seed <= 6; ++seed) {
    const Snapshot snapshot = Backbone(seed);
    const int n = snapshot.facility_count();
    std::vector<int> sources;
    for (int source = n; source-- > 0;) sources.push_back(source);
    sources.push_back(0);  // listed twice: built once
    FailureDistances asked(snapshot, nullptr), ahead(snapshot, nullptr), copied(snapshot, nullptr);
    ahead.BuildTrees(sources, 3);
    copied.CopyUnfailedTrees(ahead);
    for (const Exclusion& failure : Failures(snapshot)) {
      asked.SetFailure(failure);
      ahead.SetFailure(failure);
      copied.SetFailure(failure);
      for (int from = 0; from < n; ++from) {
        for (int to = 0; to < n; ++to) {
          if (to == failure.facility) continue;  // unspecified there
          const std::string pair = absl::StrCat("seed ", seed, " ", from, "->", to, " under (link ", failure.link,
                                                ", srlg ", failure.srlg, ", facility ", failure.facility, ")");
          const uint64_t want = asked.Distance(from, to);
          const std::vector<int> links = asked.LinksTo(from, to);
          ASSERT_EQ(ahead.Distance(from, to), want) << pair;
          ASSERT_EQ(copied.Distance(from, to), want) << pair;
          ASSERT_EQ(ahead.LinksTo(from, to), links) << pair;
          ASSERT_EQ(copied.LinksTo(from, to), links) << pair;
          ASSERT_EQ(copied.MovesUntouchedPaths(from), asked.MovesUntouchedPaths(from)) << pair;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 20'000);
}

// MayChange answers the same before a source is asked about under the
// failure (from the unfailed tree, nothing repaired) as after (its bits),
// and says true wherever the distance moved.
TEST(FailureDistancesTest, MayChangeAnswersAlikeBeforeAndAfterTheRepair) {
  int asked = 0, may_change = 0, moved = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const Snapshot snapshot = Backbone(seed);
    const int n = snapshot.facility_count();
    FailureDistances before(snapshot, nullptr), after(snapshot, nullptr), unfailed(snapshot, nullptr);
    for (const Exclusion& failure : Failures(snapshot)) {
      before.SetFailure(failure);
      after.SetFailure(failure);
      for (int from = 0; from < n; ++from) {
        after.Row(from);  // decided (repaired where the failure cuts its tree)
        for (int to = 0; to < n; ++to) {
          const std::string pair = absl::StrCat("seed ", seed, " ", from, "->", to, " under (link ", failure.link,
                                                ", srlg ", failure.srlg, ", facility ", failure.facility, ")");
          const bool early = before.MayChange(from, to);
          ASSERT_EQ(early, after.MayChange(from, to)) << pair;
          ++asked;
          may_change += early;
          if (to == failure.facility) continue;  // its distance is unspecified
          if (after.Distance(from, to) != unfailed.Distance(from, to)) {
            ASSERT_TRUE(early) << pair;
            ++moved;
          }
        }
      }
    }
  }
  EXPECT_GT(asked, 50'000);
  EXPECT_GT(moved, 1'000);
  EXPECT_LT(may_change, asked / 2);  // most pairs are left alone
}

}  // namespace
}  // namespace geodesic::pathcomp
