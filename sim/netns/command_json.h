#pragma once
// The JSON that iproute2 (`ip -j`, `tc -j`) and FRR (`... json`) print, as a
// protobuf Value, and the few lookups their readers need. Numbers become
// doubles (exact below 2^53: counters, not nanosecond timestamps). Pure.
// Thread-safe.
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"

namespace geodesic::sim {

// `text` (any JSON document, an array at the top included) as a value;
// Internal naming `what` (the command that printed it) when it is not JSON.
[[nodiscard]] absl::StatusOr<google::protobuf::Value> ParseCommandJson(const std::string& text,
                                                                       const std::string& what);

// The member `key` of an object; nullptr when `value` is not an object or has
// no such member.
const google::protobuf::Value* JsonField(const google::protobuf::Value& value, const std::string& key);
// The member as text; empty when absent or not a string.
std::string JsonText(const google::protobuf::Value& value, const std::string& key);
// The member as a number; 0 when absent or not a number.
double JsonNumber(const google::protobuf::Value& value, const std::string& key);

}  // namespace geodesic::sim
