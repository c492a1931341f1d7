// Checkpoint encoding and atomic storage (see checkpoint.h).
#include "trainer/checkpoint.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cairn::trainer {
namespace {

constexpr char kMagic[8] = {'C', 'A', 'I', 'R', 'N', 'C', 'K', 'P'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 4;

class Writer {
 public:
  template <typename T>
  void Put(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <typename T>
  void PutVector(const std::vector<T>& v) {
    Put<uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void PutString(const std::string& s) {
    Put<uint64_t>(s.size());
    out_.append(s);
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  bool Get(T* v) {
    if (in_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  template <typename T>
  bool GetVector(std::vector<T>* v) {
    uint64_t n;
    if (!Get(&n) || n > (in_.size() - pos_) / sizeof(T)) return false;
    v->resize(n);
    // An empty vector's data() may be null, which memcpy must not get.
    if (n > 0) std::memcpy(v->data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return true;
  }
  bool GetString(std::string* s) {
    uint64_t n;
    if (!Get(&n) || n > in_.size() - pos_) return false;
    s->assign(in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool AtEnd() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

uint32_t Crc32(std::string_view s) {
  return static_cast<uint32_t>(crc32(0L,
                                     reinterpret_cast<const Bytef*>(s.data()),
                                     static_cast<uInt>(s.size())));
}

absl::Status ErrnoError(const std::string& what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::Status MakeDirs(const std::string& dir) {
  std::string partial;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!partial.empty() && mkdir(partial.c_str(), 0755) != 0 &&
          errno != EEXIST) {
        return ErrnoError("mkdir", partial);
      }
    }
    if (i < dir.size()) partial.push_back(dir[i]);
  }
  return absl::OkStatus();
}

namespace {

// Step of a checkpoint file name, or -1.
int64_t StepOf(const std::string& name) {
  if (!absl::StartsWith(name, "ckpt-") || !absl::EndsWith(name, ".bin")) {
    return -1;
  }
  int64_t step;
  if (!absl::SimpleAtoi(name.substr(5, name.size() - 9), &step)) return -1;
  return step;
}

}  // namespace

std::string EncodeCheckpoint(const Checkpoint& c) {
  Writer p;
  p.PutString(c.fingerprint);
  p.Put<uint64_t>(c.step);
  p.Put<uint64_t>(c.epoch);
  p.Put<uint64_t>(c.position);
  p.PutVector(c.order);
  p.Put<double>(c.epoch_loss_sum);
  p.Put<uint64_t>(c.epoch_batches);
  p.Put<double>(c.last_train_loss);
  p.Put<double>(c.elapsed_seconds);
  p.PutVector(c.state.params);
  p.PutVector(c.state.m);
  p.PutVector(c.state.v);
  const std::string& payload = p.out();
  Writer h;
  h.out().append(kMagic, sizeof(kMagic));
  h.Put<uint32_t>(kVersion);
  h.Put<uint32_t>(0);  // Reserved flags.
  h.Put<uint64_t>(payload.size());
  h.Put<uint32_t>(Crc32(payload));
  h.out().append(payload);
  return std::move(h.out());
}

absl::StatusOr<Checkpoint> DecodeCheckpoint(std::string_view bytes) {
  if (bytes.size() < kHeaderSize ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("not a cairn-train checkpoint (bad magic)");
  }
  Reader h(bytes.substr(8, kHeaderSize - 8));
  uint32_t version, flags, crc;
  uint64_t len;
  h.Get(&version);
  h.Get(&flags);
  h.Get(&len);
  h.Get(&crc);
  if (version != kVersion) {
    return absl::DataLossError(
        absl::StrCat("unsupported checkpoint version ", version));
  }
  if (flags != 0) {
    return absl::DataLossError(
        absl::StrCat("unknown checkpoint flags ", flags));
  }
  if (len != bytes.size() - kHeaderSize) {
    return absl::DataLossError(absl::StrCat("truncated checkpoint: payload ",
                                            bytes.size() - kHeaderSize,
                                            " bytes, header says ", len));
  }
  const std::string_view payload = bytes.substr(kHeaderSize);
  if (Crc32(payload) != crc) {
    return absl::DataLossError("checkpoint checksum mismatch");
  }
  Checkpoint c;
  Reader r(payload);
  const bool ok =
      r.GetString(&c.fingerprint) && r.Get(&c.step) && r.Get(&c.epoch) &&
      r.Get(&c.position) && r.GetVector(&c.order) && r.Get(&c.epoch_loss_sum) &&
      r.Get(&c.epoch_batches) && r.Get(&c.last_train_loss) &&
      r.Get(&c.elapsed_seconds) && r.GetVector(&c.state.params) &&
      r.GetVector(&c.state.m) && r.GetVector(&c.state.v) && r.AtEnd();
  if (!ok) return absl::DataLossError("malformed checkpoint payload");
  return c;
}

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view bytes) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string base =
      slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string tmp = absl::StrCat(dir, "/.", base, ".tmp");
  const int fd =
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("open", tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      absl::Status s = ErrnoError("write", tmp);
      close(fd);
      unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(w);
  }
  if (fsync(fd) != 0) {
    absl::Status s = ErrnoError("fsync", tmp);
    close(fd);
    unlink(tmp.c_str());
    return s;
  }
  if (close(fd) != 0) return ErrnoError("close", tmp);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status s = ErrnoError("rename", tmp);
    unlink(tmp.c_str());
    return s;
  }
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ErrnoError("open directory", dir);
  const int rc = fsync(dfd);
  close(dfd);
  if (rc != 0) return ErrnoError("fsync directory", dir);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CheckpointManager::CheckpointManager(std::string dir, int keep)
    : dir_(std::move(dir)), keep_(std::max(1, keep)) {}

std::vector<std::string> CheckpointManager::List() const {
  std::vector<std::pair<int64_t, std::string>> found;
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return {};
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    const int64_t step = StepOf(name);
    if (step >= 0) found.emplace_back(step, absl::StrCat(dir_, "/", name));
  }
  closedir(d);
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

absl::Status CheckpointManager::Save(const Checkpoint& ckpt) {
  absl::Status s = MakeDirs(dir_);
  if (!s.ok()) return s;
  const std::string path = absl::StrFormat("%s/ckpt-%020d.bin", dir_,
                                           static_cast<int64_t>(ckpt.step));
  s = WriteFileAtomically(path, EncodeCheckpoint(ckpt));
  if (!s.ok()) return s;
  std::vector<std::string> all = List();
  for (size_t i = 0; i + keep_ < all.size(); ++i) unlink(all[i].c_str());
  // Temporaries left behind by a killed writer.
  DIR* d = opendir(dir_.c_str());
  if (d != nullptr) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (absl::StartsWith(name, ".ckpt-") && absl::EndsWith(name, ".tmp")) {
        unlink(absl::StrCat(dir_, "/", name).c_str());
      }
    }
    closedir(d);
  }
  return absl::OkStatus();
}

absl::StatusOr<Checkpoint> CheckpointManager::LoadLatest(
    std::vector<std::string>* skipped) {
  std::vector<std::string> all = List();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    absl::StatusOr<std::string> bytes = ReadFile(*it);
    absl::StatusOr<Checkpoint> c =
        bytes.ok() ? DecodeCheckpoint(*bytes)
                   : absl::StatusOr<Checkpoint>(bytes.status());
    if (c.ok()) return c;
    if (skipped != nullptr) {
      skipped->push_back(absl::StrCat(*it, ": ", c.status().message()));
    }
  }
  return absl::NotFoundError(absl::StrCat("no valid checkpoint in ", dir_));
}

}  // namespace cairn::trainer
