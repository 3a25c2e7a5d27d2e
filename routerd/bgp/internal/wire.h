#pragma once
// Big-endian byte writing and bounds-checked reading for the BGP codec.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace geodesic::routerd::bgp::internal {

class WireWriter {
 public:
  explicit WireWriter(std::vector<uint8_t>& out) : out_(out) {}
  void U8(uint8_t v) { out_.push_back(v); }
  void U16(uint16_t v) { out_.push_back(v >> 8); out_.push_back(v & 0xff); }
  void U32(uint32_t v) { U16(v >> 16); U16(v & 0xffff); }
  void Bytes(const uint8_t* data, size_t size) { out_.insert(out_.end(), data, data + size); }
  size_t size() const { return out_.size(); }
  // Writes a 16-bit placeholder; PatchU16 fills it later.
  size_t Reserve16() { const size_t at = out_.size(); U16(0); return at; }
  void PatchU16(size_t at, uint16_t v) { out_[at] = v >> 8; out_[at + 1] = v & 0xff; }
  void PatchU8(size_t at, uint8_t v) { out_[at] = v; }

 private:
  std::vector<uint8_t>& out_;
};

// Reads within a span; every read reports whether the bytes were there.
class WireReader {
 public:
  explicit WireReader(std::span<const uint8_t> data) : data_(data) {}
  size_t remaining() const { return data_.size() - at_; }
  bool empty() const { return at_ == data_.size(); }
  bool U8(uint8_t& v) {
    if (remaining() < 1) return false;
    v = data_[at_++];
    return true;
  }
  bool U16(uint16_t& v) {
    if (remaining() < 2) return false;
    v = static_cast<uint16_t>(data_[at_] << 8 | data_[at_ + 1]);
    at_ += 2;
    return true;
  }
  bool U32(uint32_t& v) {
    if (remaining() < 4) return false;
    v = static_cast<uint32_t>(data_[at_]) << 24 | static_cast<uint32_t>(data_[at_ + 1]) << 16 |
        static_cast<uint32_t>(data_[at_ + 2]) << 8 | data_[at_ + 3];
    at_ += 4;
    return true;
  }
  bool Take(size_t n, std::span<const uint8_t>& out) {
    if (remaining() < n) return false;
    out = data_.subspan(at_, n);
    at_ += n;
    return true;
  }
  std::span<const uint8_t> Rest() const { return data_.subspan(at_); }

 private:
  std::span<const uint8_t> data_;
  size_t at_ = 0;
};

}  // namespace geodesic::routerd::bgp::internal
