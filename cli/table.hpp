// Plain aligned text tables for listings.
#pragma once

#include <string>
#include <vector>

namespace corral::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : rows_{std::move(headers)} {}
  // Adds a row; control characters in cells (text from providers) are escaped.
  void add(std::vector<std::string> row);
  bool empty() const { return rows_.size() == 1; }
  // The table with columns padded to their widest cell, header first.
  std::string str() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace corral::cli
