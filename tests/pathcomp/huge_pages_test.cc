// Large solver arrays asked into 2 MiB pages: where the kernel offers
// transparent huge pages (not "never"), the mapping holding the array is
// eligible for them after the advice; the array works as any other.
#include "pathcomp/solver/internal/huge_pages.h"

#include <cstdint>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace geodesic::pathcomp::internal {
namespace {

std::string ThpMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('['), close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

// The "THPeligible" line of the mapping of /proc/self/smaps that holds `at`
// (-1: no such mapping or line).
int ThpEligible(const void* at) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t address = reinterpret_cast<uintptr_t>(at);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= address && address < end;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

TEST(HugePagesTest, ALargeArrayIsEligibleForHugePagesAndKeepsItsContents) {
  std::vector<uint64_t> array;
  ReserveInHugePages(array, size_t{16} << 20);  // 128 MiB
  ASSERT_GE(array.capacity(), size_t{16} << 20);
  array.resize(array.capacity());
  std::iota(array.begin(), array.end(), uint64_t{7});
  EXPECT_EQ(array[12345], 12345u + 7);
  EXPECT_EQ(array.back(), array.size() - 1 + 7);
  const std::string mode = ThpMode();
  if (mode.empty() || mode == "never") GTEST_SKIP() << "transparent huge pages are off here (" << mode << ")";
  if (ThpEligible(&array) < 0) GTEST_SKIP() << "this kernel's smaps has no THPeligible";  // the stack's mapping
  // The middle of the array lies in whole 2 MiB pages that were advised.
  EXPECT_EQ(ThpEligible(&array[array.size() / 2]), 1) << "THP mode " << mode;
}

TEST(HugePagesTest, SmallArraysAreLeftAlone) {
  std::vector<int> array;
  ReserveInHugePages(array, 1000);
  EXPECT_GE(array.capacity(), 1000u);
  AdviseHugePages(nullptr, 0);  // nothing to advise: no effect
}

}  // namespace
}  // namespace geodesic::pathcomp::internal
