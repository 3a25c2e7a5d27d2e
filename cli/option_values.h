#pragma once
// The values tectl's flags and operands take, checked the same way for every
// command: numbers, entity ids and id lists, planes, reasons, utilization
// limits, journal windows. Every error is InvalidArgument with a one-line
// message naming the flag or operand and the value. Internal to cli/. Pure.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/options.h"

namespace geodesic::cli {

// A usage error: InvalidArgument with `message`.
absl::Status Usage(std::string message);

// `text` in double quotes, for messages.
std::string Quoted(std::string_view text);

// A whole number in [min, max], digits only; nullopt otherwise.
std::optional<uint64_t> ParseNumber(const std::string& text, uint64_t min, uint64_t max);

// OK when `id` is an entity id; else names `what` ("link", "facility", ...).
absl::Status CheckId(const std::string& what, const std::string& id);

// One line, not empty: a file name given as an operand.
bool IsOneLine(const std::string& text);

// --reason (may be null): one line of at most 1024 characters, into options.reason.
absl::Status ParseReason(const std::string* reason, Options& options);

// --max-utilization (may be null): (0, 10], into options.utilization_limit.
absl::Status ParseUtilizationLimit(const std::string* limit, Options& options);

// FACILITY:N, N a plane number (0..1023).
absl::StatusOr<std::pair<std::string, uint32_t>> ParsePlane(const std::string& text);

// "a,b,c": ids, none empty, at most 64; none twice unless `repeats` (a path,
// a chain's calls). `flag_name` ("--path") names the list in messages.
absl::StatusOr<std::vector<std::string>> ParseIdList(const std::string& flag_name, const std::string& text,
                                                     bool repeats);

// KIND [ID] of get and describe: the kind (singular or plural) and at most
// one id, into options.kind and options.id (not yet checked).
absl::Status ParseKindAndId(const std::string& command_name, const std::vector<std::string>& operands,
                            Options& options);

// --from SEQ and --limit N of journal and audit-log (either may be null).
absl::Status ParseJournalWindow(const std::string* from, const std::string* limit, Options& options);

}  // namespace geodesic::cli
