// The stream packet's wire format: what is encoded decodes the same, and what
// is not a stream packet is rejected with its reason.
#include "sim/traffic/stream_packet.h"

#include <gtest/gtest.h>

#include <vector>

namespace geodesic::traffic {
namespace {

TEST(StreamPacketTest, RoundTripsEveryField) {
  const StreamPacket packet{.stream_id = 0xdeadbeef,
                            .sequence = (uint64_t{1} << 40) + 5,
                            .send_time_ns = 1'796'000'000'123'456'789,
                            .interval_ns = 400'000,
                            .size_bytes = 1000};
  std::vector<uint8_t> buffer(1000, 0xff);
  ASSERT_TRUE(EncodeStreamPacket(packet, buffer).ok());
  EXPECT_EQ(buffer[0], 'G');
  EXPECT_EQ(buffer[3], 'R');
  EXPECT_EQ(buffer[999], 0);  // padded with zeros
  const DecodedPacket decoded = DecodeStreamPacket(buffer);
  ASSERT_TRUE(decoded.ok);
  EXPECT_EQ(decoded.packet.stream_id, packet.stream_id);
  EXPECT_EQ(decoded.packet.sequence, packet.sequence);
  EXPECT_EQ(decoded.packet.send_time_ns, packet.send_time_ns);
  EXPECT_EQ(decoded.packet.interval_ns, packet.interval_ns);
  EXPECT_EQ(decoded.packet.size_bytes, 1000u);
}

TEST(StreamPacketTest, EncodeRefusesSizesOutsideHeaderToJumbo) {
  std::vector<uint8_t> buffer(10'000);
  EXPECT_FALSE(EncodeStreamPacket({.size_bytes = 31}, buffer).ok());
  EXPECT_FALSE(EncodeStreamPacket({.size_bytes = 9001}, buffer).ok());
  EXPECT_TRUE(EncodeStreamPacket({.size_bytes = 32}, buffer).ok());
  EXPECT_TRUE(EncodeStreamPacket({.size_bytes = 9000}, buffer).ok());
  std::vector<uint8_t> small(100);
  EXPECT_FALSE(EncodeStreamPacket({.size_bytes = 101}, small).ok());
}

TEST(StreamPacketTest, RejectsShortForeignAndMisSizedDatagrams) {
  std::vector<uint8_t> buffer(64);
  ASSERT_TRUE(EncodeStreamPacket({.stream_id = 1, .size_bytes = 64}, buffer).ok());

  const DecodedPacket short_one = DecodeStreamPacket(std::span<const uint8_t>(buffer).first(31));
  EXPECT_FALSE(short_one.ok);
  EXPECT_EQ(short_one.rejection, PacketRejection::kTooShort);

  const DecodedPacket truncated = DecodeStreamPacket(std::span<const uint8_t>(buffer).first(40));
  EXPECT_FALSE(truncated.ok);
  EXPECT_EQ(truncated.rejection, PacketRejection::kSizeMismatch);

  std::vector<uint8_t> foreign = buffer;
  foreign[0] = 'X';
  const DecodedPacket bad_magic = DecodeStreamPacket(foreign);
  EXPECT_FALSE(bad_magic.ok);
  EXPECT_EQ(bad_magic.rejection, PacketRejection::kBadMagic);
  EXPECT_STREQ(PacketRejectionName(bad_magic.rejection), "bad_magic");
}

}  // namespace
}  // namespace geodesic::traffic
