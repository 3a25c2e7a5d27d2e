#pragma once
// A linear program assembled column by column and loaded into CLP in one
// call, which is how both the edge LP and the path master are shaped: every
// variable (an arc flow, a path) knows its rows when it is created.
// Internal to pathcomp/solver. Thread-compatible.
#include <ClpSimplex.hpp>

#include <vector>

namespace geodesic::pathcomp::internal {

class ColumnWiseLp {
 public:
  int AddRow(double lower, double upper) {
    row_lower_.push_back(lower);
    row_upper_.push_back(upper);
    return row_count() - 1;
  }
  int AddColumn(double cost, double lower, double upper) {
    cost_.push_back(cost);
    column_lower_.push_back(lower);
    column_upper_.push_back(upper);
    starts_.push_back(static_cast<int>(rows_.size()));
    return column_count() - 1;
  }
  // Adds an entry to the column added last.
  void Add(int row, double value) {
    rows_.push_back(row);
    values_.push_back(value);
  }
  void SetRowUpper(int row, double upper) { row_upper_[row] = upper; }
  double row_upper(int row) const { return row_upper_[row]; }
  int row_count() const { return static_cast<int>(row_lower_.size()); }
  int column_count() const { return static_cast<int>(cost_.size()); }

  // Replaces whatever `model` held (minimization).
  void LoadInto(ClpSimplex& model) {
    starts_.push_back(static_cast<int>(rows_.size()));
    model.loadProblem(column_count(), row_count(), starts_.data(), rows_.data(), values_.data(),
                      column_lower_.data(), column_upper_.data(), cost_.data(), row_lower_.data(),
                      row_upper_.data());
    starts_.pop_back();
  }

 private:
  std::vector<double> row_lower_, row_upper_;
  std::vector<double> cost_, column_lower_, column_upper_;
  std::vector<int> starts_, rows_;
  std::vector<double> values_;
};

}  // namespace geodesic::pathcomp::internal
