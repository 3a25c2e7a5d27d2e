#include "pathcomp/service/pathcomp_config.h"

#include "absl/strings/str_cat.h"
#include "config/shared_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& content) {
  char path[] = "/tmp/pathcomp-config-XXXXXX";
  const int fd = mkstemp(path);
  close(fd);
  std::ofstream(path) << content;
  return path;
}

TEST(PathcompConfigTest, LoadsAValidConfig) {
  const std::string path = WriteTemp(
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n");
  auto config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->replica_id, "pc1");
  EXPECT_EQ(config->topology_path, "/t.yaml");
  EXPECT_EQ(config->state_dir, "/tmp/state");
  EXPECT_EQ(config->solve_debounce.count(), 50);
  EXPECT_EQ(config->backup_dir, "/tmp/state/checkpoints");  // on the store's file system
  std::remove(path.c_str());
}

TEST(PathcompConfigTest, BackupDirIsAPathBesideTheConfig) {
  const std::string path = WriteTemp(
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\nbackup_dir: scratch\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n");
  auto config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->backup_dir, "/tmp/scratch");
  std::remove(path.c_str());
}

TEST(PathcompConfigTest, ErrorsNameTheFileAndKey) {
  const std::string path = WriteTemp(
      "replica_id: pc1\nlisten: localhost\nstate_dir: [x]\nsolve_debounce_ms: soon\n"
      "tls: {ca: ca.crt, cert: c.crt}\n");
  auto config = LoadPathcompConfig(path);
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr(path + ":2: listen: expected host:port"));
  EXPECT_THAT(message, HasSubstr(path + ":3: state_dir: expected a string, got a list"));
  EXPECT_THAT(message, HasSubstr(path + ":1: topology: required key is missing"));
  EXPECT_THAT(message, HasSubstr(path + ":4: solve_debounce_ms: expected an unsigned integer"));
  EXPECT_THAT(message, HasSubstr(path + ":5: tls.key: required key is missing"));
  std::remove(path.c_str());
}

TEST(PathcompConfigTest, SolverKnobs) {
  std::string path = WriteTemp(
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "chain_headroom: 0.25\n"
      "elephant_objectives: [{priority: 0, objective: mlu}, {priority: 3, objective: total-flow},\n"
      "  {priority: 4, objective: latency, utilization_target: 0.7, mlu_slack: 0.05}]\n"
      "elephant_default: {objective: latency}\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n");
  auto config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_DOUBLE_EQ(config->chain_headroom, 0.25);
  const McfClassPolicies& policies = config->elephant_policies;
  ASSERT_EQ(policies.by_priority.size(), 3u);
  EXPECT_EQ(policies.Of(0).objective, McfObjective::kMinMaxUtilization);
  EXPECT_EQ(policies.Of(3).objective, McfObjective::kMaxFairThroughput);
  EXPECT_EQ(policies.Of(4), (McfClassPolicy{.objective = McfObjective::kMinLatency,
                                            .utilization_target = 0.7,
                                            .mlu_slack = 0.05}));
  // A class not listed gets the default, with the default target and slack.
  EXPECT_EQ(policies.Of(9), McfClassPolicy{.objective = McfObjective::kMinLatency});
  std::remove(path.c_str());

  // Without elephant_default every class not listed minimizes the MLU.
  path = WriteTemp(
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n");
  config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->elephant_policies.Of(0), McfClassPolicy{});
  std::remove(path.c_str());

  path = WriteTemp(
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "chain_headroom: 0.95\n"
      "elephant_objectives: [{priority: 0, objective: fastest}, {priority: 0, objective: mlu},\n"
      "  {priority: 2, objective: latency, utilization_target: 0, mlu_slack: -1, slack: 1}]\n"
      "elephant_default: {objective: shortest}\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n");
  config = LoadPathcompConfig(path);
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr("chain_headroom"));
  EXPECT_THAT(message, HasSubstr("elephant_objectives[0].objective: expected mlu, latency or total-flow"));
  EXPECT_THAT(message, HasSubstr("elephant_objectives[1].priority: priority 0 is listed twice"));
  EXPECT_THAT(message, HasSubstr("elephant_objectives[2].utilization_target"));
  EXPECT_THAT(message, HasSubstr("elephant_objectives[2].mlu_slack"));
  EXPECT_THAT(message, HasSubstr("elephant_objectives[2].slack"));
  EXPECT_THAT(message, HasSubstr("elephant_default.objective: expected mlu, latency or total-flow"));
  std::remove(path.c_str());
}

TEST(PathcompConfigTest, ProtectedClasses) {
  std::string path = WriteTemp(
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "elephant_objectives: [{priority: 0, objective: mlu, protection: links},\n"
      "  {priority: 1, objective: latency, protection: facilities, protection_limit: 0.9}]\n"
      "elephant_default: {objective: latency, protection: srlgs}\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n");
  auto config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  const McfClassPolicies& policies = config->elephant_policies;
  EXPECT_EQ(policies.Of(0).protection, ProtectionKind::kLinks);
  EXPECT_DOUBLE_EQ(policies.Of(0).protection_limit, 1.0);
  EXPECT_EQ(policies.Of(1).protection, ProtectionKind::kFacilities);
  EXPECT_DOUBLE_EQ(policies.Of(1).protection_limit, 0.9);
  EXPECT_EQ(policies.Of(7).protection, ProtectionKind::kSrlgs);
  EXPECT_EQ(config->protection_budget, kDefaultProtectionBudget);
  std::remove(path.c_str());

  path = WriteTemp(
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\nprotection_budget_ms: 2500\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n");
  config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->protection_budget.count(), 2500);
  std::remove(path.c_str());
  for (const char* bad : {"0", "99", "3600001", "soon", "-5"}) {
    path = WriteTemp(absl::StrCat("replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n",
                                  "protection_budget_ms: ", bad, "\ntls: {ca: ca.crt, cert: c.crt, key: c.key}\n"));
    config = LoadPathcompConfig(path);
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_THAT(std::string(config.status().message()), HasSubstr(path + ":5: protection_budget_ms")) << bad;
    std::remove(path.c_str());
  }

  path = WriteTemp(
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "elephant_objectives: [{priority: 0, objective: mlu, protection: everything},\n"
      "  {priority: 1, objective: total-flow, protection: links},\n"
      "  {priority: 2, objective: mlu, protection: links, protection_limit: 0}]\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n");
  config = LoadPathcompConfig(path);
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr("elephant_objectives[0].protection: expected none, links, srlgs or facilities"));
  EXPECT_THAT(message, HasSubstr("elephant_objectives[1].protection: protection needs objective mlu or latency"));
  EXPECT_THAT(message, HasSubstr("elephant_objectives[2].protection_limit"));
  std::remove(path.c_str());
}

TEST(PathcompConfigTest, StragglerRules) {
  const std::string base =
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n";
  std::string path = WriteTemp(base);
  auto config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->straggler.report_max_age_ms, 60'000);  // the defaults
  EXPECT_EQ(config->straggler.min_deviation_us, 1'000u);
  EXPECT_DOUBLE_EQ(config->straggler.min_deviation_ratio, 0.1);
  std::remove(path.c_str());

  path = WriteTemp(base + "straggler: {report_max_age_s: 30, min_deviation_us: 5000, min_deviation_ratio: 0.25}\n");
  config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->straggler.report_max_age_ms, 30'000);
  EXPECT_EQ(config->straggler.min_deviation_us, 5'000u);
  EXPECT_DOUBLE_EQ(config->straggler.min_deviation_ratio, 0.25);
  std::remove(path.c_str());

  path = WriteTemp(base + "straggler: {report_max_age_s: 0, min_deviation_ratio: -1, floor: 3}\n");
  config = LoadPathcompConfig(path);
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr("straggler.report_max_age_s"));
  EXPECT_THAT(message, HasSubstr("straggler.min_deviation_ratio"));
  EXPECT_THAT(message, HasSubstr("floor"));
  std::remove(path.c_str());
}

TEST(PathcompConfigTest, MeasurementFlushInterval) {
  const std::string base =
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n";
  std::string path = WriteTemp(base);
  auto config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->measurement_flush.count(), 100);  // the default
  std::remove(path.c_str());

  path = WriteTemp(base + "telemetry: {measurement_flush_ms: 20}\n");
  config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->measurement_flush.count(), 20);
  std::remove(path.c_str());

  for (const char* bad : {"telemetry: {measurement_flush_ms: 0}\n", "telemetry: {measurement_flush_ms: 10001}\n",
                          "telemetry: {measurement_flush_ms: soon}\n"}) {
    path = WriteTemp(base + bad);
    config = LoadPathcompConfig(path);
    EXPECT_FALSE(config.ok()) << bad;
    EXPECT_THAT(std::string(config.status().message()), HasSubstr("telemetry.measurement_flush_ms")) << bad;
    std::remove(path.c_str());
  }
  path = WriteTemp(base + "telemetry: {flush_ms: 20}\n");
  config = LoadPathcompConfig(path);
  EXPECT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("flush_ms"));
  std::remove(path.c_str());
}

// A config of the required keys and `extra` after them (from line 6 on),
// loaded from a file removed afterwards.
struct Loaded {
  std::string path;
  absl::StatusOr<PathcompConfig> config;
};
Loaded LoadRequiredWith(const std::string& extra) {
  Loaded loaded{.path = WriteTemp(absl::StrCat("replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\n",
                                                "topology: /t.yaml\ntls: {ca: ca.crt, cert: c.crt, key: c.key}\n",
                                                extra)),
                .config = absl::UnknownError("not loaded")};
  loaded.config = LoadPathcompConfig(loaded.path);
  std::remove(loaded.path.c_str());
  return loaded;
}

TEST(PathcompConfigTest, PlanThreads) {
  EXPECT_GE(DefaultBuildThreads(), 1);
  EXPECT_LE(DefaultBuildThreads(), 8);
  const Loaded plain = LoadRequiredWith("");
  ASSERT_TRUE(plain.config.ok()) << plain.config.status();
  EXPECT_EQ(plain.config->plan_threads, DefaultBuildThreads());
  const Loaded three = LoadRequiredWith("plan_threads: 3\n");
  ASSERT_TRUE(three.config.ok()) << three.config.status();
  EXPECT_EQ(three.config->plan_threads, 3);
  for (const char* bad : {"plan_threads: 0\n", "plan_threads: 65\n", "plan_threads: many\n", "plan_threads: -2\n"}) {
    const Loaded refused = LoadRequiredWith(bad);
    ASSERT_FALSE(refused.config.ok()) << bad;
    EXPECT_THAT(std::string(refused.config.status().message()), HasSubstr(refused.path + ":6: plan_threads")) << bad;
  }
}

TEST(PathcompConfigTest, JournalRetention) {
  const Loaded plain = LoadRequiredWith("");
  ASSERT_TRUE(plain.config.ok()) << plain.config.status();
  EXPECT_EQ(plain.config->journal_retention.max_age, std::chrono::hours(168));
  EXPECT_EQ(plain.config->journal_retention.max_bytes, uint64_t{4096} << 20);
  EXPECT_EQ(plain.config->journal_retention.check_interval, std::chrono::seconds(60));
  const Loaded set = LoadRequiredWith("journal: {max_age_hours: 24, max_mb: 512, check_interval_s: 5}\n");
  ASSERT_TRUE(set.config.ok()) << set.config.status();
  EXPECT_EQ(set.config->journal_retention.check_interval, std::chrono::seconds(5));
  EXPECT_EQ(set.config->journal_retention.max_age, std::chrono::hours(24));
  EXPECT_EQ(set.config->journal_retention.max_bytes, uint64_t{512} << 20);
  for (const char* bad : {"journal: {max_age_hours: 0}\n", "journal: {max_age_hours: 87601}\n",
                          "journal: {max_mb: 0}\n", "journal: {max_mb: 1048577}\n", "journal: {max_mb: lots}\n",
                          "journal: {check_interval_s: 0}\n", "journal: {keep: all}\n"}) {
    const Loaded refused = LoadRequiredWith(bad);
    ASSERT_FALSE(refused.config.ok()) << bad;
    EXPECT_THAT(std::string(refused.config.status().message()), HasSubstr(refused.path + ":6: journal.")) << bad;
  }
}

TEST(PathcompConfigTest, Replication) {
  const std::string base =
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n";
  std::string path = WriteTemp(base + "replication: {etcd: [127.0.0.1:2379, 127.0.0.1:22379], lease_ttl_s: 3}\n");
  auto config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->replication);
  EXPECT_EQ(config->replication->etcd_endpoints.size(), 2u);
  EXPECT_EQ(config->replication->election, "geodesic/pathcomp/leader");
  EXPECT_EQ(config->replication->lease_ttl.count(), 3);
  std::remove(path.c_str());

  path = WriteTemp(base);
  EXPECT_FALSE(LoadPathcompConfig(path)->replication);  // standalone by default
  std::remove(path.c_str());

  path = WriteTemp(base + "replication: {etcd: [etcd-1], lease_ttl_s: 1, election: \"\", quorum: 2}\n");
  config = LoadPathcompConfig(path);
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr("replication.etcd: \"etcd-1\" is not host:port"));
  EXPECT_THAT(message, HasSubstr("replication.lease_ttl_s"));
  EXPECT_THAT(message, HasSubstr("replication.election: must not be empty"));
  EXPECT_THAT(message, HasSubstr("quorum"));
  std::remove(path.c_str());

  path = WriteTemp(base + "replication: {}\n");
  config = LoadPathcompConfig(path);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("replication.etcd: needs at least one"));
  std::remove(path.c_str());
}

TEST(PathcompConfigTest, ListenAddressValidation) {
  EXPECT_TRUE(config::IsValidHostPort("127.0.0.1:0"));
  EXPECT_TRUE(config::IsValidHostPort("[::1]:7443"));
  EXPECT_FALSE(config::IsValidHostPort("127.0.0.1"));
  EXPECT_FALSE(config::IsValidHostPort(":80"));
  EXPECT_FALSE(config::IsValidHostPort("host:99999"));
  EXPECT_FALSE(config::IsValidHostPort("host:http"));
}

}  // namespace
}  // namespace geodesic::pathcomp
