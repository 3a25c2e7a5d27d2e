#pragma once
// Test-only, for the tests that send real packets through network namespaces
// (tests/sim/netns_*): ASSERT_OK, a descriptor closed at scope exit, socket addresses
// from text, a bounded wait for a datagram, and `ip -j` / `tc -j` output as a
// JSON value.
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "google/protobuf/struct.pb.h"

// Fails the test (returning from it) showing the status when it is not OK.
#define ASSERT_OK(expression)                  \
  do {                                         \
    const absl::Status status_ = (expression); \
    ASSERT_TRUE(status_.ok()) << status_;      \
  } while (false)

namespace geodesic::testing {

// A descriptor closed when it goes out of scope.
struct Socket {
  int fd = -1;
  ~Socket();
};

// `address` (IPv4 or IPv6, no brackets) and `port` as a sockaddr of its
// family; false when the text is not an address.
bool ToSockaddr(const std::string& address, uint16_t port, sockaddr_storage* out, socklen_t* length);

// Whether `fd` has something to read within `timeout`.
bool Readable(int fd, std::chrono::milliseconds timeout);

// `text` (a JSON document, e.g. `ip -j route show`) as a value; a test
// failure (and null) when it does not parse.
google::protobuf::Value Json(const std::string& text);

}  // namespace geodesic::testing
