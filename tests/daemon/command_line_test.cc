#include "daemon/command_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <vector>


namespace geodesic::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Outcome {
  CommandLine command;
  std::string out;
  std::string err;
  std::vector<std::string> checked;  // files passed to check_config
};

Outcome Parse(std::vector<const char*> args, absl::Status check_result = absl::OkStatus()) {
  Outcome outcome;
  args.insert(args.begin(), "pathcomp");
  DaemonDescription daemon{.name = "pathcomp", .summary = "the controller", .version = "0.1.0 (git abc1234)",
                           .check_config = [&](const std::string& path) {
                             outcome.checked.push_back(path);
                             return check_result;
                           }};
  std::ostringstream out, err;
  outcome.command = ParseCommandLine(daemon, static_cast<int>(args.size()), args.data(), out, err);
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

TEST(CommandLineTest, ConfigRunsWithTheFileAsBefore) {
  for (const auto& args : {std::vector<const char*>{"--config", "/etc/geodesic/pathcomp.yaml"},
                           std::vector<const char*>{"--config=/etc/geodesic/pathcomp.yaml"}}) {
    Outcome outcome = Parse(args);
    EXPECT_FALSE(outcome.command.exit_code.has_value());
    EXPECT_EQ(outcome.command.config_path, "/etc/geodesic/pathcomp.yaml");
    EXPECT_THAT(outcome.out + outcome.err, IsEmpty());
    EXPECT_THAT(outcome.checked, IsEmpty());
  }
}

TEST(CommandLineTest, VersionNamesTheDaemonAndTheProjectVersion) {
  Outcome outcome = Parse({"--version"});
  EXPECT_EQ(outcome.command.exit_code, 0);
  EXPECT_EQ(outcome.out, "pathcomp 0.1.0 (git abc1234)\n");
}

TEST(CommandLineTest, HelpPrintsUsageAndExitsZero) {
  Outcome outcome = Parse({"--help"});
  EXPECT_EQ(outcome.command.exit_code, 0);
  EXPECT_THAT(outcome.out, HasSubstr("usage: pathcomp --config FILE"));
  EXPECT_THAT(outcome.out, HasSubstr("--check-config FILE"));
}

TEST(CommandLineTest, CheckConfigExitsZeroWhenValid) {
  Outcome outcome = Parse({"--check-config", "a.yaml"});
  EXPECT_EQ(outcome.command.exit_code, 0);
  EXPECT_THAT(outcome.checked, ::testing::ElementsAre("a.yaml"));
  EXPECT_THAT(outcome.out, HasSubstr("a.yaml: configuration is valid"));
}

TEST(CommandLineTest, CheckConfigPrintsEveryProblemAndExitsOne) {
  Outcome outcome = Parse({"--check-config=a.yaml"},
                          absl::InvalidArgumentError("a.yaml:1: tls: required key is missing\n"
                                                     "a.yaml:3: listen: expected host:port"));
  EXPECT_EQ(outcome.command.exit_code, 1);
  EXPECT_THAT(outcome.err, HasSubstr("pathcomp: a.yaml: invalid configuration:\n"));
  EXPECT_THAT(outcome.err, HasSubstr("a.yaml:1: tls: required key is missing\n"));
  EXPECT_THAT(outcome.err, HasSubstr("a.yaml:3: listen: expected host:port"));
  EXPECT_THAT(outcome.out, IsEmpty());
}

TEST(CommandLineTest, BadUsageExitsTwoWithTheUsage) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{}, "--config FILE is required"},
      {{"--config"}, "--config needs a FILE"},
      {{"--config="}, "--config needs a FILE"},
      {{"--check-config"}, "--check-config needs a FILE"},
      {{"--bogus"}, "unknown flag --bogus"},
      {{"-c", "x"}, "unknown flag -c"},
      {{"x.yaml"}, "unexpected argument \"x.yaml\""},
      {{"--config", "a", "b"}, "unexpected argument \"b\""},
      {{"--config", "a", "--config", "b"}, "--config cannot be combined with --config"},
      {{"--version", "--check-config", "a"}, "--check-config cannot be combined with --version"},
      {{"--version=1"}, "--version takes no value"},
  };
  for (const auto& [args, message] : cases) {
    Outcome outcome = Parse(args);
    EXPECT_EQ(outcome.command.exit_code, 2) << message;
    EXPECT_THAT(outcome.err, HasSubstr("pathcomp: " + message + "\n"));
    EXPECT_THAT(outcome.err, HasSubstr("usage: pathcomp --config FILE"));
    EXPECT_THAT(outcome.out, IsEmpty());
    EXPECT_THAT(outcome.checked, IsEmpty());
  }
}

}  // namespace
}  // namespace geodesic::daemon
