#include "tls/identity.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tls/internal/string_view.h"

namespace geodesic::tls {
namespace {

using internal::ToAbsl;

constexpr std::string_view kPrefix = "spiffe://geodesic/";
constexpr size_t kMaxIdLength = 63;
// Bounds what an error message echoes back from untrusted input.
constexpr size_t kMaxQuotedLength = 128;

std::string Quote(std::string_view s) {
  if (s.size() > kMaxQuotedLength) {
    return absl::StrCat(
        "\"", absl::CHexEscape(ToAbsl(s.substr(0, kMaxQuotedLength))), "...\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(ToAbsl(s)), "\"");
}

absl::Status Invalid(std::string_view uri, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid geodesic SPIFFE id ", Quote(uri), ": ", ToAbsl(why)));
}

bool IsIdStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

absl::StatusOr<Role> ParseRole(std::string_view name) {
  if (name == "viewer") return Role::kViewer;
  if (name == "operator") return Role::kOperator;
  if (name == "admin") return Role::kAdmin;
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid role ", Quote(name), ": must be viewer, operator or admin"));
}

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kNone:
      return "none";
    case Role::kViewer:
      return "viewer";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
  }
  return "none";
}

std::string_view KindName(Identity::Kind kind) {
  switch (kind) {
    case Identity::Kind::kAgent:
      return "agent";
    case Identity::Kind::kRouterd:
      return "routerd";
    case Identity::Kind::kPathcomp:
      return "pathcomp";
    case Identity::Kind::kOperator:
      return "operator";
    case Identity::Kind::kEtcd:
      return "etcd";
    case Identity::Kind::kTenant:
      return "tenant";
  }
  return "agent";
}

bool IsValidId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdLength || !IsIdStart(id.front())) {
    return false;
  }
  for (char c : id) {
    if (!IsIdStart(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

absl::StatusOr<Identity> ParseSpiffeId(std::string_view uri) {
  if (!uri.starts_with(kPrefix)) {
    return Invalid(uri, "must start with spiffe://geodesic/");
  }
  const std::vector<absl::string_view> segments =
      absl::StrSplit(ToAbsl(uri.substr(kPrefix.size())), '/');

  auto check_id = [&](absl::string_view what,
                      absl::string_view id) -> absl::Status {
    if (IsValidId(internal::ToStd(id))) return absl::OkStatus();
    return Invalid(uri,
                   absl::StrCat(what, " id ", Quote(internal::ToStd(id)),
                                " must match ^[a-z0-9][a-z0-9._-]{0,62}$"));
  };

  Identity identity;
  identity.spiffe_id = std::string(uri);
  const absl::string_view type = segments[0];
  if (type == "site") {
    if (segments.size() != 3) {
      return Invalid(
          uri, "expected site/<facility>/agent or site/<facility>/routerd");
    }
    if (absl::Status s = check_id("facility", segments[1]); !s.ok()) return s;
    if (segments[2] == "agent") {
      identity.kind = Identity::Kind::kAgent;
    } else if (segments[2] == "routerd") {
      identity.kind = Identity::Kind::kRouterd;
    } else {
      return Invalid(uri, "a site identity must end in /agent or /routerd");
    }
    identity.facility_id = std::string(segments[1]);
    return identity;
  }
  if (type == "pathcomp" || type == "operator" || type == "etcd" ||
      type == "tenant") {
    if (segments.size() != 2) {
      return Invalid(uri, absl::StrCat("expected ", type, "/<id>"));
    }
    if (absl::Status s = check_id(type == "pathcomp"   ? "replica"
                                  : type == "operator" ? "operator"
                                  : type == "tenant"   ? "tenant"
                                                       : "etcd member",
                                  segments[1]);
        !s.ok()) {
      return s;
    }
    identity.kind = type == "pathcomp"   ? Identity::Kind::kPathcomp
                    : type == "operator" ? Identity::Kind::kOperator
                    : type == "tenant"   ? Identity::Kind::kTenant
                                         : Identity::Kind::kEtcd;
    identity.name = std::string(segments[1]);
    return identity;
  }
  return Invalid(uri, "path must start with site/, pathcomp/, operator/, tenant/ or etcd/");
}

}  // namespace geodesic::tls
