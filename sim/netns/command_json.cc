#include "sim/netns/command_json.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace geodesic::sim {

absl::StatusOr<google::protobuf::Value> ParseCommandJson(const std::string& text, const std::string& what) {
  google::protobuf::Value value;
  // Wrapped: protobuf's JSON parser wants an object at the top.
  auto status = google::protobuf::util::JsonStringToMessage(absl::StrCat("{\"v\":", text, "}"), &value);
  if (!status.ok()) return absl::InternalError(absl::StrCat(what, ": not JSON: ", text.substr(0, 200)));
  return value.struct_value().fields().at("v");
}

const google::protobuf::Value* JsonField(const google::protobuf::Value& value, const std::string& key) {
  if (value.kind_case() != google::protobuf::Value::kStructValue) return nullptr;
  const auto& fields = value.struct_value().fields();
  auto it = fields.find(key);
  return it == fields.end() ? nullptr : &it->second;
}

std::string JsonText(const google::protobuf::Value& value, const std::string& key) {
  const auto* field = JsonField(value, key);
  return field == nullptr ? "" : field->string_value();
}

double JsonNumber(const google::protobuf::Value& value, const std::string& key) {
  const auto* field = JsonField(value, key);
  return field == nullptr ? 0 : field->number_value();
}

}  // namespace geodesic::sim
