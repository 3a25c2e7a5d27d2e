#include "state/change_set.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/message_lite.h"

namespace geodesic::state {

ChangeSet::ChangeSet(std::string cause) : cause_(std::move(cause)) {}

void ChangeSet::Put(Kind kind, std::string_view id, const google::protobuf::MessageLite& value) {
  std::string bytes;
  if (!value.SerializeToString(&bytes) && put_error_.ok()) {
    put_error_ = absl::InvalidArgumentError(
        absl::StrCat(EntityKey(kind, id), ": cannot serialize ", value.GetTypeName(), " (missing required fields?)"));
  }
  PutRaw(kind, id, std::move(bytes));
}

void ChangeSet::PutRaw(Kind kind, std::string_view id, std::string bytes) {
  changes_.push_back(Change{kind, std::string(id), std::move(bytes)});
}

void ChangeSet::Delete(Kind kind, std::string_view id) {
  changes_.push_back(Change{kind, std::string(id), std::nullopt});
}

absl::Status ChangeSet::Validate() const {
  if (!put_error_.ok()) return put_error_;
  if (cause_.empty()) return absl::InvalidArgumentError("change set has no cause");
  if (changes_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("change set \"", cause_, "\" has no changes"));
  }
  for (const Change& change : changes_) {
    if (KindName(change.kind).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("change set \"", cause_, "\": unknown kind ", static_cast<int>(change.kind)));
    }
    if (change.id.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("change set \"", cause_, "\": empty id for kind ", std::string(KindName(change.kind))));
    }
  }
  return absl::OkStatus();
}

}  // namespace geodesic::state
