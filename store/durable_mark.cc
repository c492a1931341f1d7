// See durable_mark.h. File format: one line "wal <number> seq <sequence>",
// followed by " preallocated" and " closed" when the mark says so (older
// readers ignore them).
#include "store/durable_mark.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "rocksdb/transaction_log.h"

namespace cairn {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Writes `data` to `path` and fsyncs it.
absl::Status WriteSynced(const std::string& path, const std::string& data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Errno("cannot create", path);
  const bool ok = write(fd, data.data(), data.size()) ==
                      static_cast<ssize_t>(data.size()) &&
                  fsync(fd) == 0;
  absl::Status s = ok ? absl::OkStatus() : Errno("cannot write", path);
  close(fd);
  return s;
}

absl::Status SyncDir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Errno("cannot open", dir);
  absl::Status s =
      fsync(fd) == 0 ? absl::OkStatus() : Errno("cannot sync", dir);
  close(fd);
  return s;
}

// Number of the newest WAL of `db`, 0 if it cannot be listed.
uint64_t CurrentWalNumber(rocksdb::DB* db) {
  rocksdb::VectorLogPtr wals;
  if (!db->GetSortedWalFiles(wals).ok() || wals.empty()) return 0;
  return wals.back()->LogNumber();
}

}  // namespace

absl::StatusOr<std::optional<DurableMark>> ReadDurableMark(
    const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/", kDurableMarkFile);
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(path)) return std::nullopt;
    return Errno("cannot read", path);
  }
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> words =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  DurableMark mark;
  bool parsed = words.size() >= 4 && words.size() <= 6 && words[0] == "wal" &&
                words[2] == "seq" &&
                absl::SimpleAtoi(words[1], &mark.wal_number) &&
                absl::SimpleAtoi(words[3], &mark.sequence);
  for (size_t i = 4; parsed && i < words.size(); ++i) {
    bool* flag = words[i] == "preallocated" ? &mark.wal_preallocated
                 : words[i] == "closed"     ? &mark.closed
                                            : nullptr;
    parsed = flag != nullptr && !*flag;
    if (parsed) *flag = true;
  }
  if (!parsed) {
    return absl::DataLossError(
        absl::StrCat("file ", kDurableMarkFile, " is corrupt"));
  }
  return mark;
}

absl::Status WriteDurableMark(const std::string& dir, const DurableMark& mark) {
  const std::string path = absl::StrCat(dir, "/", kDurableMarkFile);
  const std::string tmp = path + ".tmp";
  absl::Status s = WriteSynced(
      tmp, absl::StrCat("wal ", mark.wal_number, " seq ", mark.sequence,
                        mark.wal_preallocated ? " preallocated" : "",
                        mark.closed ? " closed" : "", "\n"));
  if (!s.ok()) return s;
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Errno("cannot rename to", path);
  }
  return SyncDir(dir);
}

absl::Status DurableMarkWriter::Advance(DurableMark mark) {
  absl::MutexLock lock(&mu_);
  mark.wal_preallocated = mark.wal_number == preallocated_wal_;
  return AdvanceLocked(mark);
}

absl::Status DurableMarkWriter::WalStarted(uint64_t wal_number,
                                           uint64_t sequence,
                                           bool preallocated) {
  absl::MutexLock lock(&mu_);
  if (preallocated) preallocated_wal_ = wal_number;
  return AdvanceLocked(DurableMark{wal_number, sequence, preallocated});
}

absl::Status DurableMarkWriter::Close() {
  absl::MutexLock lock(&mu_);
  if (!written_.has_value() || written_->closed) return absl::OkStatus();
  DurableMark mark = *written_;
  mark.closed = true;
  if (absl::Status s = WriteDurableMark(dir_, mark); !s.ok()) return s;
  written_ = mark;
  return absl::OkStatus();
}

absl::Status DurableMarkWriter::AdvanceLocked(const DurableMark& mark) {
  if (written_.has_value() && mark.sequence <= written_->sequence) {
    return absl::OkStatus();
  }
  if (absl::Status s = WriteDurableMark(dir_, mark); !s.ok()) return s;
  written_ = mark;
  return absl::OkStatus();
}

DurableMarkRecorder::DurableMarkRecorder(
    rocksdb::DB* db, std::shared_ptr<DurableMarkWriter> writer,
    std::function<WalSyncState()> sync_state)
    : db_(db), writer_(std::move(writer)), sync_state_(std::move(sync_state)) {
  Record();
  thread_ = std::thread([this] { Loop(); });
}

DurableMarkRecorder::~DurableMarkRecorder() {
  {
    absl::MutexLock lock(&stop_mu_);
    stop_ = true;
  }
  thread_.join();
  Record();
  (void)writer_->Close();
}

void DurableMarkRecorder::Record() {
  absl::MutexLock lock(&record_mu_);
  // Read the number first: every write up to it is in the WAL (synced
  // writes are published only after their fsync), so it is durable once
  // SyncWAL returns.
  const uint64_t seq = db_->GetLatestSequenceNumber();
  if (has_recorded_ && seq == recorded_) return;
  switch (sync_state_()) {
    case WalSyncState::kSynced:
      break;
    case WalSyncState::kUnsynced:
      if (!db_->SyncWAL().ok()) return;
      break;
    case WalSyncState::kFailed:
      return;
  }
  if (!writer_->Advance(DurableMark{CurrentWalNumber(db_), seq}).ok()) return;
  recorded_ = seq;
  has_recorded_ = true;
}

void DurableMarkRecorder::Loop() {
  for (;;) {
    {
      absl::MutexLock lock(&stop_mu_);
      stop_mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Seconds(1));
      if (stop_) return;
    }
    Record();
  }
}

}  // namespace cairn
