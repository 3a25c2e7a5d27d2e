#include "sim/traffic/stream_stats.h"

#include <algorithm>

namespace geodesic::traffic {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;

int64_t BinIndex(int64_t time_ns) {
  // Floor, so that times before the epoch (never sent, but decodable) stay consistent.
  return time_ns >= 0 ? time_ns / kNsPerMs : -((-time_ns + kNsPerMs - 1) / kNsPerMs);
}

}  // namespace

StreamStats::StreamStats(uint32_t stream_id, StreamStatsConfig config)
    : stream_id_(stream_id), config_(config) {
  totals_.stream_id = stream_id;
  if (config_.bin_capacity == 0) config_.bin_capacity = 1;
}

StreamStats::Slot* StreamStats::SlotFor(int64_t index) {
  const auto capacity = static_cast<int64_t>(config_.bin_capacity);
  if (newest_index_ >= 0 && index <= newest_index_ - capacity) return nullptr;
  if (index < 0) return nullptr;
  if (slots_.empty()) slots_.resize(config_.bin_capacity);
  newest_index_ = std::max(newest_index_, index);
  Slot& slot = slots_[static_cast<size_t>(index % capacity)];
  if (slot.index != index) {
    // Only an older bin can share the slot: a newer one would be past newest_index_.
    slot = Slot{};
    slot.index = index;
  }
  return &slot;
}

bool StreamStats::FillGap(const Delivery& delivery) {
  auto it = gaps_.upper_bound(delivery.sequence);
  if (it == gaps_.begin()) return false;
  --it;
  const uint64_t first = it->first;
  const OpenGap gap = it->second;
  if (delivery.sequence > gap.last_missing) return false;
  gaps_.erase(it);
  if (first < delivery.sequence) {
    gaps_[first] = OpenGap{.last_missing = delivery.sequence - 1, .before = gap.before, .after = delivery};
  }
  if (delivery.sequence < gap.last_missing) {
    gaps_[delivery.sequence + 1] = OpenGap{.last_missing = gap.last_missing, .before = delivery, .after = gap.after};
  }
  return true;
}

void StreamStats::Record(const StreamPacket& packet, int64_t receive_time_ns) {
  const Delivery delivery{
      .sequence = packet.sequence, .send_time_ns = packet.send_time_ns, .receive_time_ns = receive_time_ns};
  Slot* slot = SlotFor(BinIndex(packet.send_time_ns));
  if (slot == nullptr) ++totals_.unbinned;

  bool reordered = false;
  if (!started_) {
    started_ = true;
    lowest_ = highest_ = delivery;
  } else if (packet.sequence > highest_.sequence) {
    if (packet.sequence > highest_.sequence + 1) {
      gaps_[highest_.sequence + 1] =
          OpenGap{.last_missing = packet.sequence - 1, .before = highest_, .after = delivery};
    }
    highest_ = delivery;
  } else if (packet.sequence < lowest_.sequence) {
    if (packet.sequence + 1 < lowest_.sequence) {
      gaps_[packet.sequence + 1] = OpenGap{.last_missing = lowest_.sequence - 1, .before = delivery, .after = lowest_};
    }
    lowest_ = delivery;
    reordered = true;
  } else if (FillGap(delivery)) {
    reordered = true;
  } else {
    ++totals_.duplicates;
    if (slot != nullptr) ++slot->duplicates;
    return;
  }

  const int64_t one_way_delay_ns = receive_time_ns - packet.send_time_ns;
  const bool late = one_way_delay_ns > config_.late_after_ns;
  if (totals_.received == 0) {
    totals_.first_receive_ns = totals_.last_receive_ns = receive_time_ns;
    totals_.max_one_way_delay_ns = one_way_delay_ns;
  }
  ++totals_.received;
  totals_.received_bytes += packet.size_bytes;
  totals_.reordered += reordered ? 1 : 0;
  totals_.late += late ? 1 : 0;
  totals_.interval_ns = packet.interval_ns;
  totals_.first_receive_ns = std::min(totals_.first_receive_ns, receive_time_ns);
  totals_.last_receive_ns = std::max(totals_.last_receive_ns, receive_time_ns);
  totals_.max_one_way_delay_ns = std::max(totals_.max_one_way_delay_ns, one_way_delay_ns);
  if (slot == nullptr) return;
  if (slot->received == 0 || receive_time_ns < slot->first_delivery.receive_time_ns) {
    slot->first_delivery = delivery;
  }
  ++slot->received;
  slot->reordered += reordered ? 1 : 0;
  slot->late += late ? 1 : 0;
}

StreamGap StreamStats::GapOf(uint64_t first_missing, const OpenGap& gap) const {
  StreamGap out;
  out.first_missing = first_missing;
  out.last_missing = gap.last_missing;
  out.packets = gap.last_missing - first_missing + 1;
  out.ms = static_cast<double>(out.packets) * totals_.interval_ns / 1e6;
  out.wall_ms = static_cast<double>(gap.after.receive_time_ns - gap.before.receive_time_ns) / 1e6;
  out.before = gap.before;
  out.after = gap.after;
  return out;
}

StreamSummary StreamStats::Summary() const {
  StreamSummary summary = totals_;
  if (!started_) return summary;
  summary.first_sequence = lowest_.sequence;
  summary.highest_sequence = highest_.sequence;
  summary.lost = (highest_.sequence - lowest_.sequence + 1) - totals_.received;
  for (const auto& [first_missing, gap] : gaps_) {
    const uint64_t packets = gap.last_missing - first_missing + 1;
    if (!summary.longest_gap || packets > summary.longest_gap->packets) {
      summary.longest_gap = GapOf(first_missing, gap);
    }
  }
  return summary;
}

std::vector<StreamGap> StreamStats::Gaps() const {
  std::vector<StreamGap> out;
  out.reserve(gaps_.size());
  for (const auto& [first_missing, gap] : gaps_) out.push_back(GapOf(first_missing, gap));
  return out;
}

std::vector<StreamBin> StreamStats::Bins() const {
  if (slots_.empty()) return {};
  const auto capacity = static_cast<int64_t>(config_.bin_capacity);
  const int64_t oldest_kept = newest_index_ - capacity + 1;
  std::map<int64_t, StreamBin> bins;
  for (const Slot& slot : slots_) {
    if (slot.index < oldest_kept) continue;
    bins[slot.index] = StreamBin{.start_ms = slot.index,
                                 .received = slot.received,
                                 .lost = 0,
                                 .reordered = slot.reordered,
                                 .late = slot.late,
                                 .duplicates = slot.duplicates};
  }
  // A missing packet's bin is that of its send time, interpolated between the
  // packets around its gap: monotonic in the sequence number, so the packets
  // of one bin are a run, found by bisection. Bins outside the kept ones are
  // clamped to one value on each side, so the work is bounded by the kept
  // bins, not by the gap's length (a stray sequence number can open a gap
  // of 2^63).
  for (const auto& [first_missing, gap] : gaps_) {
    const double span_packets = static_cast<double>(gap.after.sequence - gap.before.sequence);
    const double span_ns = static_cast<double>(gap.after.send_time_ns - gap.before.send_time_ns);
    const auto clamped_bin = [&, &gap = gap](uint64_t sequence) {
      const double offset = static_cast<double>(sequence - gap.before.sequence) / span_packets;
      const int64_t index = BinIndex(gap.before.send_time_ns + static_cast<int64_t>(span_ns * offset));
      return std::clamp(index, oldest_kept - 1, newest_index_ + 1);
    };
    for (uint64_t run_first = first_missing;;) {
      const int64_t index = clamped_bin(run_first);
      uint64_t run_last = run_first;
      for (uint64_t high = gap.last_missing; run_last < high;) {
        const uint64_t middle = run_last + (high - run_last + 1) / 2;
        if (clamped_bin(middle) == index) {
          run_last = middle;
        } else {
          high = middle - 1;
        }
      }
      if (index >= oldest_kept && index <= newest_index_) {
        StreamBin& bin = bins[index];
        bin.start_ms = index;
        bin.lost += run_last - run_first + 1;
      }
      if (run_last == gap.last_missing) break;
      run_first = run_last + 1;
    }
  }
  std::vector<StreamBin> out;
  out.reserve(bins.size());
  for (const auto& [index, bin] : bins) out.push_back(bin);
  return out;
}

std::optional<Delivery> StreamStats::FirstDeliveredAfter(int64_t time_ns) const {
  const int64_t first_index = BinIndex(time_ns);
  const int64_t oldest_kept = newest_index_ - static_cast<int64_t>(config_.bin_capacity) + 1;
  std::optional<Delivery> best;
  for (const Slot& slot : slots_) {
    if (slot.index < oldest_kept || slot.index < first_index || slot.received == 0) continue;
    const Delivery& delivery = slot.first_delivery;
    if (delivery.send_time_ns < time_ns) continue;
    if (!best || delivery.receive_time_ns < best->receive_time_ns) best = delivery;
  }
  return best;
}

StreamReceiverStats::StreamReceiverStats(StreamStatsConfig config) : config_(config) {}

void StreamReceiverStats::RecordDatagram(std::span<const uint8_t> datagram, int64_t receive_time_ns) {
  const DecodedPacket decoded = DecodeStreamPacket(datagram);
  if (!decoded.ok) {
    ++rejected_[decoded.rejection];
    return;
  }
  Record(decoded.packet, receive_time_ns);
}

void StreamReceiverStats::Record(const StreamPacket& packet, int64_t receive_time_ns) {
  auto it = streams_.find(packet.stream_id);
  if (it == streams_.end()) it = streams_.emplace(packet.stream_id, StreamStats(packet.stream_id, config_)).first;
  it->second.Record(packet, receive_time_ns);
}

uint64_t StreamReceiverStats::rejected(PacketRejection rejection) const {
  auto it = rejected_.find(rejection);
  return it == rejected_.end() ? 0 : it->second;
}

uint64_t StreamReceiverStats::rejected_total() const {
  uint64_t total = 0;
  for (const auto& [rejection, count] : rejected_) total += count;
  return total;
}

}  // namespace geodesic::traffic
