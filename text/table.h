#pragma once
// Aligned text tables for terminal output.
#include <string>
#include <vector>

namespace geodesic::text {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  // Columns padded to their widest cell, separated by two spaces.
  std::string Render() const {
    std::vector<size_t> widths;
    for (const auto& row : rows_) {
      if (widths.size() < row.size()) widths.resize(row.size(), 0);
      for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      for (size_t i = 0; i < row.size(); ++i) {
        out += row[i];
        if (i + 1 < row.size()) out += std::string(widths[i] - row[i].size() + 2, ' ');
      }
      out += "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace geodesic::text
