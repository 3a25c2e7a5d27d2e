#include "tests/support/netns_testing.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include "sim/netns/command_json.h"

namespace geodesic::testing {

Socket::~Socket() {
  if (fd >= 0) close(fd);
}

bool ToSockaddr(const std::string& address, uint16_t port, sockaddr_storage* out, socklen_t* length) {
  *out = {};
  if (address.find(':') == std::string::npos) {
    auto* sin = reinterpret_cast<sockaddr_in*>(out);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    *length = sizeof(sockaddr_in);
    return inet_pton(AF_INET, address.c_str(), &sin->sin_addr) == 1;
  }
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(out);
  sin6->sin6_family = AF_INET6;
  sin6->sin6_port = htons(port);
  *length = sizeof(sockaddr_in6);
  return inet_pton(AF_INET6, address.c_str(), &sin6->sin6_addr) == 1;
}

bool Readable(int fd, std::chrono::milliseconds timeout) {
  pollfd entry{.fd = fd, .events = POLLIN, .revents = 0};
  return poll(&entry, 1, static_cast<int>(timeout.count())) == 1 && (entry.revents & POLLIN) != 0;
}

google::protobuf::Value Json(const std::string& text) {
  absl::StatusOr<google::protobuf::Value> value = sim::ParseCommandJson(text, "a command's output");
  EXPECT_TRUE(value.ok()) << value.status();
  return value.ok() ? *value : google::protobuf::Value();
}

}  // namespace geodesic::testing
