#include "state/internal/journal_codec.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace geodesic::state::internal {
namespace {

void AppendFixed(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void AppendBytes(std::string& out, std::string_view bytes) {
  AppendFixed(out, bytes.size(), 4);
  out.append(bytes);
}

// Reads the encoding front to back; every read checks the bytes left.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool ReadFixed(int bytes, uint64_t& value) {
    if (in_.size() < static_cast<size_t>(bytes)) return false;
    value = 0;
    for (int i = 0; i < bytes; ++i) value |= uint64_t{static_cast<uint8_t>(in_[i])} << (8 * i);
    in_.remove_prefix(bytes);
    return true;
  }

  bool ReadBytes(std::string_view& bytes) {
    uint64_t length = 0;
    if (!ReadFixed(4, length) || length > in_.size()) return false;
    bytes = in_.substr(0, length);
    in_.remove_prefix(length);
    return true;
  }

  // Exactly `size` bytes, unprefixed.
  bool ReadBytes(size_t size, std::string_view& bytes) {
    if (in_.size() < size) return false;
    bytes = in_.substr(0, size);
    in_.remove_prefix(size);
    return true;
  }

  size_t left() const { return in_.size(); }

 private:
  std::string_view in_;
};

constexpr size_t kSha256Bytes = std::tuple_size_v<decltype(ValueDigest::sha256)>;

enum Op : uint8_t { kDelete = 0, kPut = 1, kPutByDigest = 2 };

absl::Status Corrupt(uint64_t seq, const std::string& what) {
  return absl::DataLossError(absl::StrCat("journal entry ", seq, " is corrupt: ", what));
}

}  // namespace

std::string EncodeJournalKey(uint64_t seq) {
  std::string key(8, '\0');
  for (int i = 0; i < 8; ++i) key[i] = static_cast<char>((seq >> (8 * (7 - i))) & 0xff);
  return key;
}

std::optional<uint64_t> DecodeJournalKey(std::string_view key) {
  if (key.size() != 8) return std::nullopt;
  uint64_t seq = 0;
  for (char c : key) seq = (seq << 8) | static_cast<uint8_t>(c);
  return seq;
}

ValueDigest DigestOf(std::string_view value) {
  ValueDigest digest{.size = value.size()};
  unsigned int size = 0;
  // Only an out-of-memory can fail this; a wrong digest would be kept for good, so stop.
  if (EVP_Digest(value.data(), value.size(), digest.sha256.data(), &size, EVP_sha256(), nullptr) != 1 ||
      size != digest.sha256.size()) {
    std::abort();
  }
  return digest;
}

Change JournaledChange(const Change& change) {
  if (!change.value.has_value() || !JournaledByDigest(change.kind)) return change;
  return Change{.kind = change.kind, .id = change.id, .value = std::nullopt, .digest = DigestOf(*change.value)};
}

std::string EncodeJournalValue(const JournalEntry& entry) {
  return EncodeJournalValue(entry.at_unix_ms, entry.cause, entry.changes);
}

size_t JournalValueSize(std::string_view cause, const std::vector<Change>& changes) {
  size_t size = 1 + 8 + 4 + cause.size() + 4;
  for (const Change& change : changes) {
    size += 4 + KindName(change.kind).size() + 4 + change.id.size() + 1;
    if (change.digest.has_value() || (change.value.has_value() && JournaledByDigest(change.kind))) {
      size += 8 + kSha256Bytes;
    } else if (change.value.has_value()) {
      size += 4 + change.value->size();
    }
  }
  return size;
}

std::string EncodeJournalValue(int64_t at_unix_ms, std::string_view cause, const std::vector<Change>& changes) {
  std::string out;
  out.reserve(JournalValueSize(cause, changes));
  out.push_back(static_cast<char>(kJournalFormat));
  AppendFixed(out, static_cast<uint64_t>(at_unix_ms), 8);
  AppendBytes(out, cause);
  AppendFixed(out, changes.size(), 4);
  for (const Change& change : changes) {
    AppendBytes(out, KindName(change.kind));
    AppendBytes(out, change.id);
    std::optional<ValueDigest> digest = change.digest;
    if (change.value.has_value() && JournaledByDigest(change.kind)) digest = DigestOf(*change.value);
    if (digest.has_value()) {
      out.push_back(static_cast<char>(kPutByDigest));
      AppendFixed(out, digest->size, 8);
      out.append(reinterpret_cast<const char*>(digest->sha256.data()), digest->sha256.size());
    } else if (change.value.has_value()) {
      out.push_back(static_cast<char>(kPut));
      AppendBytes(out, *change.value);
    } else {
      out.push_back(static_cast<char>(kDelete));
    }
  }
  return out;
}

absl::StatusOr<JournalEntry> DecodeJournalValue(uint64_t seq, std::string_view value) {
  Reader reader(value);
  JournalEntry entry;
  entry.seq = seq;
  uint64_t format = 0;
  if (!reader.ReadFixed(1, format)) return Corrupt(seq, "empty");
  if (format != kJournalFormat) return Corrupt(seq, absl::StrCat("unknown format ", format));
  uint64_t at_unix_ms = 0;
  if (!reader.ReadFixed(8, at_unix_ms)) return Corrupt(seq, "truncated timestamp");
  entry.at_unix_ms = static_cast<int64_t>(at_unix_ms);
  std::string_view cause;
  if (!reader.ReadBytes(cause)) return Corrupt(seq, "truncated cause");
  entry.cause = std::string(cause);
  uint64_t count = 0;
  if (!reader.ReadFixed(4, count)) return Corrupt(seq, "truncated change count");
  // Each change takes at least 9 bytes; do not trust `count` to size memory.
  if (count > reader.left() / 9) return Corrupt(seq, absl::StrCat("change count ", count, " exceeds the bytes left"));
  entry.changes.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view kind_name, id, bytes;
    uint64_t op = 0;
    if (!reader.ReadBytes(kind_name)) return Corrupt(seq, absl::StrCat("change ", i, ": truncated kind"));
    std::optional<Kind> kind = KindFromName(kind_name);
    if (!kind.has_value())
      return Corrupt(seq, absl::StrCat("change ", i, ": unknown kind \"", std::string(kind_name), "\""));
    if (!reader.ReadBytes(id)) return Corrupt(seq, absl::StrCat("change ", i, ": truncated id"));
    if (!reader.ReadFixed(1, op)) return Corrupt(seq, absl::StrCat("change ", i, ": truncated op"));
    Change& change = entry.changes.emplace_back(Change{*kind, std::string(id), std::nullopt});
    if (op == kPut) {
      if (!reader.ReadBytes(bytes)) return Corrupt(seq, absl::StrCat("change ", i, ": truncated value"));
      change.value = std::string(bytes);
    } else if (op == kPutByDigest) {
      ValueDigest digest;
      if (!reader.ReadFixed(8, digest.size) || !reader.ReadBytes(kSha256Bytes, bytes)) {
        return Corrupt(seq, absl::StrCat("change ", i, ": truncated digest"));
      }
      std::copy(bytes.begin(), bytes.end(), digest.sha256.begin());
      change.digest = digest;
    } else if (op != kDelete) {
      return Corrupt(seq, absl::StrCat("change ", i, ": unknown op ", op));
    }
  }
  if (reader.left() != 0) return Corrupt(seq, absl::StrCat(reader.left(), " trailing bytes"));
  return entry;
}

}  // namespace geodesic::state::internal
