// See aws_keys.h.
#include "auth/aws_keys.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "util/crypto/hmac.h"

namespace cairn::auth {
namespace {

constexpr size_t kKeyBytes = 32;

std::string Material(const cairn::v1::Token& token) {
  return absl::StrCat(token.name(), "\n", token.create_time().seconds(), ".",
                      token.create_time().nanos());
}

absl::Status Failed(const std::string& path, absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat("AWS key file '", path, "': ", why));
}

absl::StatusOr<std::string> ReadKey(const std::string& path, int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Failed(path, "not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    return Failed(path, "readable by group or others; chmod 600 it");
  }
  char buf[2 * kKeyBytes + 2];
  const ssize_t n = read(fd, buf, sizeof(buf));
  const absl::string_view hex(buf,
                              n < 0 ? 0 : std::min<size_t>(n, 2 * kKeyBytes));
  bool ok = hex.size() == 2 * kKeyBytes;
  for (char c : hex) ok = ok && absl::ascii_isxdigit(c);
  if (!ok) return Failed(path, "does not hold 64 hex digits");
  return absl::HexStringToBytes(hex);
}

absl::StatusOr<std::string> CreateKey(const std::string& path) {
  unsigned char bytes[kKeyBytes];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return absl::InternalError("OpenSSL RAND_bytes failed");
  }
  const std::string key(reinterpret_cast<char*>(bytes), sizeof(bytes));
  const std::string text = absl::BytesToHexString(key) + "\n";
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 &&
            write(fd, text.data(), text.size()) ==
                static_cast<ssize_t>(text.size()) &&
            fsync(fd) == 0;
  const int error = errno;
  if (fd >= 0) ok = close(fd) == 0 && ok;
  if (!ok) return Failed(path, std::strerror(error));
  return key;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AwsKeys>> AwsKeys::Open(
    const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  absl::StatusOr<std::string> key;
  if (fd >= 0) {
    key = ReadKey(path, fd);
    close(fd);
  } else if (errno == ENOENT) {
    key = CreateKey(path);
  } else {
    key = Failed(path, std::strerror(errno));
  }
  if (!key.ok()) return key.status();
  return std::unique_ptr<AwsKeys>(new AwsKeys(std::move(*key)));
}

AwsKeyPair AwsKeys::For(const cairn::v1::Token& token) const {
  const std::string material = Material(token);
  AwsKeyPair pair;
  const std::string id_hex =
      util::HmacSha256Hex(key_, absl::StrCat("id\n", material));
  pair.access_key_id =
      absl::StrCat("CAIRN", absl::AsciiStrToUpper(id_hex.substr(0, 15)));
  std::string secret;
  absl::Base64Escape(util::HmacSha256(key_, absl::StrCat("secret\n", material)),
                     &secret);
  pair.secret_access_key = secret.substr(0, 40);
  return pair;
}

std::optional<cairn::v1::Token> AwsKeys::Find(
    absl::string_view access_key_id,
    const std::vector<cairn::v1::Token>& tokens) const {
  for (const cairn::v1::Token& token : tokens) {
    if (For(token).access_key_id == access_key_id) return token;
  }
  return std::nullopt;
}

}  // namespace cairn::auth
