#include "files/atomic_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_dirs.h"

namespace geodesic::files {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AtomicWriteFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.path();
  }

  // Every file in the directory but `keep`.
  std::vector<std::string> Others(const std::string& keep) const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.path().filename() != keep) names.push_back(entry.path().filename().string());
    }
    return names;
  }

  testing::TempDir temp_{"atomic-file"};
  fs::path dir_;
};

TEST_F(AtomicWriteFileTest, ContentsRoundTripAndReplaceTheOldOnes) {
  const fs::path path = dir_ / "plan.pb";
  std::string binary("a\0b\nc", 5);
  ASSERT_TRUE(AtomicWriteFile(path.string(), binary).ok());
  EXPECT_EQ(ReadFile(path), binary);
  ASSERT_TRUE(AtomicWriteFile(path.string(), "shorter").ok());
  EXPECT_EQ(ReadFile(path), "shorter");
  ASSERT_TRUE(AtomicWriteFile(path.string(), "").ok());
  EXPECT_TRUE(fs::is_regular_file(path));
  EXPECT_EQ(fs::file_size(path), 0u);
  EXPECT_THAT(Others("plan.pb"), ::testing::IsEmpty()) << "no temporary file is left behind";
}

TEST_F(AtomicWriteFileTest, ATornTemporaryFileFromACrashNeverReplacesTheGoodFile) {
  const fs::path path = dir_ / "plan.pb";
  ASSERT_TRUE(AtomicWriteFile(path.string(), "good and whole").ok());
  // A writer died after writing half of its temporary file, under every name
  // this process could pick next (a restarted process may get the same pid).
  for (int i = 0; i < 50; ++i) {
    std::ofstream(dir_ / ("plan.pb.tmp." + std::to_string(::getpid()) + "." + std::to_string(i))) << "go";
  }
  std::ofstream(dir_ / "plan.pb.tmp") << "go";
  EXPECT_EQ(ReadFile(path), "good and whole");
  // The next write installs exactly its own contents and leaves the torn files alone.
  ASSERT_TRUE(AtomicWriteFile(path.string(), "newer and whole").ok());
  EXPECT_EQ(ReadFile(path), "newer and whole");
  EXPECT_EQ(ReadFile(dir_ / "plan.pb.tmp"), "go");
  EXPECT_EQ(Others("plan.pb").size(), 51u);
}

TEST_F(AtomicWriteFileTest, AFailedWriteLeavesTheOldFileIntact) {
  const fs::path path = dir_ / "plan.pb";
  ASSERT_TRUE(AtomicWriteFile(path.string(), "the old plan").ok());
  // A disk that fills up halfway: the process may write 4 KiB per file at most.
  struct sigaction ignore {}, previous{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &previous), 0);
  rlimit limit{}, saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  limit = saved;
  limit.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const absl::Status status = AtomicWriteFile(path.string(), std::string(64 * 1024, 'x'));
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  ASSERT_EQ(::sigaction(SIGXFSZ, &previous, nullptr), 0);

  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr(path.string()));
  EXPECT_THAT(std::string(status.message()), HasSubstr("write"));
  EXPECT_EQ(ReadFile(path), "the old plan");
  EXPECT_THAT(Others("plan.pb"), ::testing::IsEmpty()) << "the partial temporary file is removed";
}

TEST_F(AtomicWriteFileTest, AMissingOrUnusableDirectoryIsAClearError) {
  const fs::path missing = dir_ / "no-such-dir" / "plan.pb";
  const absl::Status status = AtomicWriteFile(missing.string(), "x");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(missing.string()));

  std::ofstream(dir_ / "a-file") << "not a directory";
  const fs::path under_file = dir_ / "a-file" / "plan.pb";
  EXPECT_FALSE(AtomicWriteFile(under_file.string(), "x").ok());

  EXPECT_EQ(AtomicWriteFile("", "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AtomicWriteFile((dir_ / "").string(), "x").code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(AtomicWriteFileTest, AnUnwritableDirectoryIsRefusedAndNamed) {
  if (::geteuid() == 0) {
    // root writes anywhere; a read-only directory is only refused to others.
    GTEST_SKIP() << "permission bits do not bind root";
  }
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  const fs::path path = dir_ / "plan.pb";
  const absl::Status status = AtomicWriteFile(path.string(), "x");
  fs::permissions(dir_, fs::perms::owner_all);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(path.string()));
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(AtomicWriteFileTest, ARenameOverADirectoryFailsAndCleansUp) {
  const fs::path path = dir_ / "plan.pb";
  fs::create_directories(path / "inside");
  const absl::Status status = AtomicWriteFile(path.string(), "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("rename"));
  EXPECT_TRUE(fs::is_directory(path / "inside"));
  EXPECT_THAT(Others("plan.pb"), ::testing::IsEmpty());
}

}  // namespace
}  // namespace geodesic::files
