#include "cli/option_values.h"

#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "entity/entity_id.h"

namespace geodesic::cli {

absl::Status Usage(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string Quoted(std::string_view text) { return absl::StrCat("\"", std::string(text), "\""); }

std::optional<uint64_t> ParseNumber(const std::string& text, uint64_t min, uint64_t max) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (value < min || value > max) return std::nullopt;
  return value;
}

absl::Status CheckId(const std::string& what, const std::string& id) {
  if (entity::IsValidEntityId(id)) return absl::OkStatus();
  return Usage(
      absl::StrCat(what, " ", Quoted(id), " is not a valid id (ids match ", entity::kEntityIdRule, ")"));
}

bool IsOneLine(const std::string& text) { return text.find_first_of("\r\n") == std::string::npos; }

absl::Status ParseReason(const std::string* reason, Options& options) {
  if (reason == nullptr) return absl::OkStatus();
  if (reason->size() > 1024 || !IsOneLine(*reason)) {
    return Usage("--reason must be one line of at most 1024 characters");
  }
  options.reason = *reason;
  return absl::OkStatus();
}

absl::Status ParseUtilizationLimit(const std::string* limit, Options& options) {
  if (limit == nullptr) return absl::OkStatus();
  double value = 0;
  if (!absl::SimpleAtod(*limit, &value) || !std::isfinite(value) || value <= 0 || value > 10) {
    return Usage(absl::StrCat("--max-utilization must be a number in (0, 10] (1 = a link at capacity), not ",
                              Quoted(*limit)));
  }
  options.utilization_limit = value;
  return absl::OkStatus();
}

absl::StatusOr<std::pair<std::string, uint32_t>> ParsePlane(const std::string& text) {
  const size_t colon = text.rfind(':');
  std::optional<uint64_t> plane;
  if (colon != std::string::npos) plane = ParseNumber(text.substr(colon + 1), 0, 1023);
  if (!plane) return Usage(absl::StrCat("a plane is FACILITY:N (N from 0), not ", Quoted(text)));
  std::string facility = text.substr(0, colon);
  if (auto status = CheckId("facility", facility); !status.ok()) return status;
  return std::make_pair(std::move(facility), static_cast<uint32_t>(*plane));
}

absl::StatusOr<std::vector<std::string>> ParseIdList(const std::string& flag_name, const std::string& text,
                                                     bool repeats) {
  std::vector<std::string> ids = absl::StrSplit(text, ',');
  std::set<std::string> seen;
  for (const std::string& id : ids) {
    if (id.empty()) return Usage(absl::StrCat(flag_name, " is a comma-separated list of ids, not ", Quoted(text)));
    if (auto status = CheckId(flag_name.substr(2), id); !status.ok()) return status;
    if (!repeats && !seen.insert(id).second) {
      return Usage(absl::StrCat(flag_name, " names ", id, " twice"));
    }
  }
  if (ids.size() > 64) return Usage(absl::StrCat(flag_name, " takes at most 64 ids"));
  return ids;
}

absl::Status ParseKindAndId(const std::string& command_name, const std::vector<std::string>& operands,
                            Options& options) {
  if (operands.empty()) return Usage(absl::StrCat(command_name, " needs a kind"));
  auto kind = ParseEntityKind(operands[0]);
  if (!kind) return Usage(absl::StrCat("unknown kind ", Quoted(operands[0])));
  options.kind = *kind;
  if (operands.size() > 2) return Usage(absl::StrCat(command_name, " takes a kind and at most one id"));
  if (operands.size() == 2) options.id = operands[1];
  return absl::OkStatus();
}

absl::Status ParseJournalWindow(const std::string* from, const std::string* limit, Options& options) {
  if (from != nullptr) {
    auto seq = ParseNumber(*from, 1, UINT64_MAX);
    if (!seq) return Usage(absl::StrCat("--from must be a journal seq (a whole number from 1), not ", Quoted(*from)));
    options.from_seq = *seq;
  }
  if (limit != nullptr) {
    auto n = ParseNumber(*limit, 1, kMaxJournalLimit);
    if (!n) {
      return Usage(absl::StrCat("--limit must be a whole number from 1 to ", kMaxJournalLimit, ", not ",
                                Quoted(*limit)));
    }
    options.limit = static_cast<uint32_t>(*n);
  }
  return absl::OkStatus();
}

}  // namespace geodesic::cli
