#include "tests/tls/pki_testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "files/atomic_file.h"

namespace geodesic::tls::testing {
namespace {

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs `command` through /bin/sh, capturing stdout and stderr.
absl::Status RunShell(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return absl::InternalError("popen failed");
  std::string output;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof(buf), pipe))
    output.append(buf, n);
  const int rc = ::pclose(pipe);
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("`", command, "` exited with ",
                                          WIFEXITED(rc) ? WEXITSTATUS(rc) : rc,
                                          ": ", output));
}

}  // namespace

TlsFiles LeafFiles(const std::string& dir, const std::string& base) {
  return TlsFiles{.ca_path = dir + "/ca.crt",
                  .cert_path = dir + "/" + base + ".crt",
                  .key_path = dir + "/" + base + ".key"};
}

absl::Status IssueCertWithoutIdentity(const std::string& dir,
                                      const std::string& base) {
  const std::string d = ShellQuote(dir);
  const std::string key = ShellQuote(dir + "/" + base + ".key");
  const std::string crt = ShellQuote(dir + "/" + base + ".crt");
  const std::string csr = ShellQuote(dir + "/" + base + ".csr");
  const std::string ext = ShellQuote(dir + "/" + base + ".ext");
  return RunShell(absl::StrCat(
      "set -e; openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 "
      "-out ",
      key, "; openssl req -new -key ", key,
      " -subj /O=geodesic/CN=anonymous -out ", csr,
      "; printf "
      "'basicConstraints=critical,CA:FALSE\\nextendedKeyUsage=serverAuth,"
      "clientAuth\\n"
      "subjectAltName=DNS:localhost\\n' > ",
      ext, "; openssl x509 -req -in ", csr, " -CA ", d, "/ca.crt -CAkey ", d,
      "/ca.key -set_serial 7 -days 1 -extfile ", ext, " -out ", crt));
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& contents) {
  return files::AtomicWriteFile(path, contents);
}

absl::Status CopyFileAtomically(const std::string& from,
                                const std::string& to) {
  absl::StatusOr<std::string> contents = ReadFile(from);
  if (!contents.ok()) return contents.status();
  return WriteFileAtomically(to, *contents);
}

}  // namespace geodesic::tls::testing
