#pragma once
// A set of changes to the model that belong together, and why they were made.
// A Store applies a ChangeSet all or nothing and records it as one journal entry.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "state/kind.h"

namespace google::protobuf {
class MessageLite;
}

namespace geodesic::state {

// What the journal keeps of a value it does not copy (JournaledByDigest):
// its size and SHA-256, enough to tell whether a value held now is that one.
struct ValueDigest {
  uint64_t size = 0;
  std::array<uint8_t, 32> sha256{};

  friend bool operator==(const ValueDigest&, const ValueDigest&) = default;
};

// One change of one entity. `value` holds the serialized protobuf that replaces
// the entity, or nullopt when the entity is deleted.
struct Change {
  Kind kind;
  std::string id;
  std::optional<std::string> value;
  // Only in a journal entry (Store::ReadJournal): a put of a kind journaled
  // by digest has this in place of its value (`value` is then nullopt).
  std::optional<ValueDigest> digest = std::nullopt;

  // Neither a value nor a digest: the entity was deleted.
  bool deleted() const { return !value.has_value() && !digest.has_value(); }

  friend bool operator==(const Change&, const Change&) = default;
};

// Builds the changes of one commit. Changes apply in the order they were added;
// a later change of the same (kind, id) wins. Thread-compatible.
class ChangeSet {
 public:
  // `cause` says who or what made the change, for the journal:
  // "telemetry from spiffe://geodesic/site/iad/agent seq 42",
  // "intent drain-1 by operator alice". Must not be empty.
  explicit ChangeSet(std::string cause);

  // Replaces (or creates) the entity with `value` serialized. If serialization
  // fails (a proto2 message missing required fields), the ChangeSet records the
  // error and Validate() — hence Store::Commit — returns InvalidArgument.
  void Put(Kind kind, std::string_view id, const google::protobuf::MessageLite& value);
  // Replaces (or creates) the entity with `bytes` as they are.
  void PutRaw(Kind kind, std::string_view id, std::string bytes);
  // Removes the entity; deleting an absent entity is not an error.
  void Delete(Kind kind, std::string_view id);

  // OK when a Store would accept this ChangeSet: a non-empty cause, at least one
  // change, every id non-empty and every Put serialized. InvalidArgument otherwise.
  [[nodiscard]] absl::Status Validate() const;

  bool empty() const { return changes_.empty(); }
  const std::string& cause() const { return cause_; }
  const std::vector<Change>& changes() const { return changes_; }

 private:
  std::string cause_;
  std::vector<Change> changes_;
  absl::Status put_error_;  // first serialization failure, if any
};

}  // namespace geodesic::state
