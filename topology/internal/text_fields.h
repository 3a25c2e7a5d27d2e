#pragma once
// Reading fields of the text formats the importers accept. Internal to the
// topology component.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace geodesic::topology::internal {

// `text` without leading and trailing spaces, tabs, CR and LF.
std::string_view Trim(std::string_view text);
// True when `line` holds nothing but spaces and tabs.
bool IsBlank(std::string_view line);
// The space- or tab-separated fields of `line`.
std::vector<std::string_view> Fields(std::string_view line);
// The whole of `text` as a finite decimal number ("1.5", "-3", "2e9").
std::optional<double> ParseNumber(std::string_view text);
// The whole of `text` as an unsigned decimal integer.
std::optional<uint64_t> ParseUnsigned(std::string_view text);

}  // namespace geodesic::topology::internal
