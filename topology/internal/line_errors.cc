#include "topology/internal/line_errors.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace geodesic::topology::internal {

void LineErrors::Add(const std::string& file, size_t line, const std::string& reason) {
  ++count_;
  if (listed_.size() >= kMaxListed) return;
  const size_t file_index =
      std::find(files_.begin(), files_.end(), file) - files_.begin();
  if (file_index == files_.size()) files_.push_back(file);
  listed_.push_back(Entry{file_index, line,
                          line > 0 ? absl::StrCat(file, ":", line, ": ", reason)
                                   : absl::StrCat(file, ": ", reason)});
}

absl::Status LineErrors::ToStatus() const {
  if (count_ == 0) return absl::OkStatus();
  std::vector<Entry> sorted = listed_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return a.file != b.file ? a.file < b.file : a.line < b.line;
  });
  std::string message = absl::StrJoin(
      sorted, "\n", [](std::string* out, const Entry& entry) { out->append(entry.text); });
  if (count_ > listed_.size()) {
    absl::StrAppend(&message, "\n... and ", count_ - listed_.size(), " more errors");
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace geodesic::topology::internal
