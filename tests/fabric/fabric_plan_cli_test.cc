// Runs the fabric-plan binary: what an operator types and sees.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Outcome RunFabricPlan(const std::string& args) {
  const char* dir = std::getenv("GEODESIC_BINARY_DIR");
  const std::string command =
      std::string(dir ? dir : ".") + "/bin/fabric-plan " + args + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) outcome.output.append(buffer, n);
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

TEST(FabricPlanCliTest, PrintsBothDesignsAndTheComparison) {
  const Outcome outcome = RunFabricPlan("--radix 64 --planes 8 --nics-per-gpu=8 --target-gpus 100000");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_THAT(outcome.output, StartsWith("radix 64, 8 planes, 8 NICs per GPU (1 per plane)\n"));
  EXPECT_THAT(outcome.output, HasSubstr("65,536"));
  EXPECT_THAT(outcome.output, HasSubstr("target 100,000 GPUs"));
}

TEST(FabricPlanCliTest, BadUsageIsOneLineThenUsageAndExitTwo) {
  for (const std::string args :
       {"--radix 63 --planes 1 --nics-per-gpu 1", "--radix 64 --planes 3 --nics-per-gpu 8",
        "--radix 64 --planes 1", "--radix 64 --planes 1 --nics-per-gpu 1 --color",
        "--radix sixty-four --planes 1 --nics-per-gpu 1", "--radix -64 --planes 1 --nics-per-gpu 1",
        "--radix 64 --planes 1 --nics-per-gpu 1 --target-gpus 0", "--radix",
        "--radix 64 --radix 32 --planes 1 --nics-per-gpu 1"}) {
    const Outcome outcome = RunFabricPlan(args);
    EXPECT_EQ(outcome.exit_code, 2) << args;
    EXPECT_THAT(outcome.output, StartsWith("fabric-plan: ")) << args;
    const size_t first_newline = outcome.output.find('\n');
    ASSERT_NE(first_newline, std::string::npos);
    EXPECT_THAT(outcome.output.substr(first_newline + 1), StartsWith("usage: fabric-plan")) << args;
  }
  EXPECT_THAT(RunFabricPlan("--radix 63 --planes 1 --nics-per-gpu 1").output,
              StartsWith("fabric-plan: radix: must be even and in [2, 4096], got 63\n"));
}

TEST(FabricPlanCliTest, HelpPrintsUsageAndSucceeds) {
  const Outcome outcome = RunFabricPlan("--help");
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_THAT(outcome.output, StartsWith("usage: fabric-plan"));
}

}  // namespace
