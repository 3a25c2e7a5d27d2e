#pragma once
// Typed reads of a Store: the entity's bytes parsed as the protobuf message T.
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "state/kind.h"
#include "state/store.h"

namespace geodesic::state {

// The entity (kind, id) as a T. NotFound when absent; DataLoss, naming kind, id
// and type, when the stored bytes do not parse as a T. Thread-safe as Store is.
template <typename T>
[[nodiscard]] absl::StatusOr<T> Get(const Store& store, Kind kind, std::string_view id) {
  absl::StatusOr<std::string> bytes = store.GetRaw(kind, id);
  if (!bytes.ok()) return bytes.status();
  T message;
  if (!message.ParseFromString(*bytes)) {
    return absl::DataLossError(absl::StrCat(EntityKey(kind, id), ": stored value (", bytes->size(),
                                            " bytes) does not parse as ", message.GetTypeName()));
  }
  return message;
}

// Every entity of `kind` as a T, ordered by id. DataLoss, naming the first
// entity that does not parse, when any does not.
template <typename T>
[[nodiscard]] absl::StatusOr<std::vector<T>> List(const Store& store, Kind kind) {
  auto entries = store.ListRaw(kind);
  if (!entries.ok()) return entries.status();
  std::vector<T> messages;
  messages.reserve(entries->size());
  for (const auto& [id, bytes] : *entries) {
    T& message = messages.emplace_back();
    if (!message.ParseFromString(bytes)) {
      return absl::DataLossError(absl::StrCat(EntityKey(kind, id), ": stored value (", bytes.size(),
                                              " bytes) does not parse as ", message.GetTypeName()));
    }
  }
  return messages;
}

}  // namespace geodesic::state
