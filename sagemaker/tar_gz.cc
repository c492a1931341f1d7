// See tar_gz.h. ustar headers written by hand and compressed with zlib's
// gz* API: no archive library needed for the two kinds of entry we write.
#include "sagemaker/tar_gz.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;

constexpr size_t kBlock = 512;
constexpr uint64_t kMaxFileBytes = 077777777777ULL;  // 11 octal digits

absl::Status Failed(absl::string_view what, const std::string& path) {
  return absl::FailedPreconditionError(absl::StrCat(what, " ", path));
}

void Octal(char* field, size_t width, uint64_t value) {
  const std::string s =
      absl::StrFormat("%0*o", static_cast<int>(width - 1), value);
  std::memcpy(field, s.data(), width - 1);
  field[width - 1] = '\0';
}

// A ustar header of `name` (a directory when `dir`, else a file of `size`
// bytes); false when the name does not fit.
bool Header(const std::string& name, bool dir, uint64_t size, int64_t mtime,
            char* h) {
  std::memset(h, 0, kBlock);
  std::string prefix, base = name;
  if (base.size() > 100) {
    const size_t cut = name.rfind('/', 155);
    if (cut == std::string::npos || name.size() - cut - 1 > 100) return false;
    prefix = name.substr(0, cut);
    base = name.substr(cut + 1);
  }
  std::memcpy(h, base.data(), base.size());
  Octal(h + 100, 8, dir ? 0755 : 0644);
  Octal(h + 108, 8, 0);
  Octal(h + 116, 8, 0);
  Octal(h + 124, 12, size);
  Octal(h + 136, 12, static_cast<uint64_t>(std::max<int64_t>(mtime, 0)));
  h[156] = dir ? '5' : '0';
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memcpy(h + 345, prefix.data(), prefix.size());
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (size_t i = 0; i < kBlock; ++i) sum += static_cast<unsigned char>(h[i]);
  const std::string chk = absl::StrFormat("%06o", sum);
  std::memcpy(h + 148, chk.data(), 6);
  h[154] = '\0';
  h[155] = ' ';
  return true;
}

bool Write(gzFile gz, const char* data, size_t n) {
  return n == 0 ||
         gzwrite(gz, data, static_cast<unsigned>(n)) == static_cast<int>(n);
}

// Appends regular file `path` (opened without following links) as `name`.
absl::Status AddFile(gzFile gz, const fs::path& path, const std::string& name) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Failed("cannot open", path.string());
  absl::Cleanup closer = [fd] { close(fd); };
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return absl::OkStatus();
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  char h[kBlock];
  if (size > kMaxFileBytes || !Header(name, false, size, st.st_mtime, h)) {
    return Failed("too large or name too long for a tar entry:", path.string());
  }
  if (!Write(gz, h, kBlock)) return Failed("cannot write", name);
  std::vector<char> buf(1 << 16);
  uint64_t left = size;
  while (left > 0) {
    const ssize_t n =
        read(fd, buf.data(), std::min<uint64_t>(left, buf.size()));
    if (n <= 0) return Failed("file shrank while packing:", path.string());
    if (!Write(gz, buf.data(), static_cast<size_t>(n))) {
      return Failed("cannot write", name);
    }
    left -= static_cast<uint64_t>(n);
  }
  const size_t pad = (kBlock - size % kBlock) % kBlock;
  const char zeros[kBlock] = {};
  return Write(gz, zeros, pad) ? absl::OkStatus()
                               : Failed("cannot write", name);
}

absl::Status AddAll(gzFile gz, const fs::path& src) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::recursive_directory_iterator it(src, ec), end; !ec && it != end;
       it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) return Failed("cannot list", src.string());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& p : entries) {
    const fs::file_status st = fs::symlink_status(p, ec);
    const std::string name = fs::relative(p, src, ec).generic_string();
    if (ec) return Failed("cannot read", p.string());
    if (fs::is_directory(st)) {
      char h[kBlock];
      if (!Header(name + "/", true, 0, 0, h)) {
        return Failed("name too long for a tar entry:", p.string());
      }
      if (!Write(gz, h, kBlock)) return Failed("cannot write", name);
    } else if (fs::is_regular_file(st)) {
      if (absl::Status s = AddFile(gz, p, name); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PackTarGz(const std::string& src, const std::string& dest) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(src, ec))) {
    return Failed("not a directory:", src);
  }
  const std::string tmp = dest + ".tmp";
  gzFile gz = gzopen(tmp.c_str(), "wb");
  if (gz == nullptr) return Failed("cannot create", tmp);
  absl::Status s = AddAll(gz, src);
  const char zeros[2 * kBlock] = {};
  if (s.ok() && !Write(gz, zeros, sizeof(zeros)))
    s = Failed("cannot write", tmp);
  if (gzclose(gz) != Z_OK && s.ok()) s = Failed("cannot finish", tmp);
  if (s.ok() && std::rename(tmp.c_str(), dest.c_str()) != 0) {
    s = Failed("cannot rename into", dest);
  }
  if (!s.ok()) fs::remove(tmp, ec);
  return s;
}

}  // namespace cairn::sagemaker
