// FindTornRecord, FindCutRecord and FindTornWalTail: see wal_tail.h. The
// log format: store/wal_format.h.
#include "store/wal_tail.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "store/wal_format.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;

using wal_format::DeclaredEnd;
using wal_format::IntactAt;
using wal_format::kBlockSize;
using wal_format::kFirstType;
using wal_format::kFullType;
using wal_format::kHeaderSize;
using wal_format::kLastType;
using wal_format::kMiddleType;
using wal_format::Physical;
using wal_format::RecordWalker;

// One past the last non-zero byte (0 when all are zero).
uint64_t EndOfData(std::string_view b) {
  uint64_t z = b.size();
  while (z > 0 && b[z - 1] == 0) --z;
  return z;
}

// Whether an intact record lies wholly in [from, to).
bool IntactRecordIn(std::string_view b, uint64_t from, uint64_t to) {
  for (uint64_t p = from; p + kHeaderSize <= to; ++p) {
    if (kBlockSize - p % kBlockSize < kHeaderSize) continue;
    const uint8_t type = static_cast<uint8_t>(b[p + 6]);
    if (type < kFullType || type > kLastType) continue;
    std::optional<Physical> r = IntactAt(b, p);
    if (r.has_value() && r->end <= to) return true;
  }
  return false;
}

// Whether the broken header at `pos`, which follows a record boundary
// (`in_record` false) or a record's first fragments, can be the start of a
// record cut short by the zeros from `z` on.
bool CutShortByZeros(std::string_view b, uint64_t pos, uint64_t z,
                     bool in_record) {
  if (z <= pos) return in_record;           // Only zeros after the fragments.
  if (z <= pos + kHeaderSize) return true;  // The header itself is cut.
  const uint8_t type = static_cast<uint8_t>(b[pos + 6]);
  const bool continues = type == kMiddleType || type == kLastType;
  const bool starts = type == kFullType || type == kFirstType;
  if (in_record ? !continues : !starts) return false;
  const uint64_t end = DeclaredEnd(b, pos);
  const uint64_t block_end = (pos / kBlockSize + 1) * kBlockSize;
  return end <= block_end && end > z && !IntactRecordIn(b, pos + 1, z);
}

// The newest NNNNNN.log in `dir`, or "" when there is none.
std::string NewestWal(const std::string& dir, std::error_code& ec) {
  std::string newest;
  uint64_t newest_number = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    uint64_t number = 0;
    if (!absl::EndsWith(name, ".log") ||
        !absl::SimpleAtoi(name.substr(0, name.size() - 4), &number)) {
      continue;
    }
    if (newest.empty() || number > newest_number) {
      newest = name;
      newest_number = number;
    }
  }
  return newest;
}

// How the records of a WAL end: see wal_tail.h.
enum class EndKind { kClean, kTorn, kCut, kOther };
struct WalEnd {
  EndKind kind = EndKind::kOther;
  uint64_t at = 0;  // Where the torn or cut record starts.
};

// Whether the broken record at `pos`, which CutShortByZeros accepted, is cut
// short by the end of the file rather than by zeros.
bool RunsPastEnd(std::string_view b, uint64_t pos, uint64_t z) {
  if (z <= pos) return false;  // Zeros follow the record's first fragments.
  if (pos + kHeaderSize > b.size()) return true;
  return z > pos + kHeaderSize && DeclaredEnd(b, pos) > b.size();
}

WalEnd InspectEnd(std::string_view b) {
  wal_format::RecordWalker walker(b);
  RecordWalker::Step step;
  while ((step = walker.Next()) == RecordWalker::Step::kRecord) {
  }
  if (step == RecordWalker::Step::kMisordered) return {};  // RocksDB's call.
  const uint64_t pos = walker.pos();
  const bool in_record = walker.in_record();
  if (step == RecordWalker::Step::kEnd) {
    // The file ends after whole records, or between a record's fragments.
    return in_record ? WalEnd{EndKind::kCut, walker.record_start()}
                     : WalEnd{EndKind::kClean, pos};
  }
  const uint64_t z = EndOfData(b);
  if (!in_record && z <= pos) return {EndKind::kClean, pos};  // Zeros follow.
  if (!CutShortByZeros(b, pos, z, in_record)) return {};
  return {RunsPastEnd(b, pos, z) ? EndKind::kCut : EndKind::kTorn,
          in_record ? walker.record_start() : pos};
}

// The newest WAL of `dir` (name and bytes); nullopt when there is none.
absl::StatusOr<std::optional<std::pair<std::string, std::string>>>
ReadNewestWal(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return std::nullopt;
  const std::string newest = NewestWal(dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot list ", dir, ": ", ec.message()));
  }
  if (newest.empty()) return std::nullopt;
  // One read: a preallocated WAL is about 18 MB, mostly zeros.
  std::ifstream in(fs::path(dir) / newest, std::ios::binary | std::ios::ate);
  const std::streamoff size = in.tellg();
  std::string bytes(size > 0 ? static_cast<size_t>(size) : 0, '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!in || size < 0) {
    return absl::InternalError(absl::StrCat("cannot read ", dir, "/", newest));
  }
  return std::make_pair(newest, std::move(bytes));
}

}  // namespace

std::optional<uint64_t> FindTornRecord(std::string_view b) {
  const WalEnd end = InspectEnd(b);
  if (end.kind != EndKind::kTorn) return std::nullopt;
  return end.at;
}

std::optional<uint64_t> FindCutRecord(std::string_view b) {
  const WalEnd end = InspectEnd(b);
  if (end.kind != EndKind::kCut) return std::nullopt;
  return end.at;
}

absl::StatusOr<NewestWalEnd> InspectNewestWal(const std::string& dir) {
  auto wal = ReadNewestWal(dir);
  if (!wal.ok()) return wal.status();
  NewestWalEnd found;
  if (!wal->has_value()) return found;
  const std::string& bytes = (*wal)->second;
  const WalEnd end = InspectEnd(bytes);
  if (end.kind == EndKind::kTorn) {
    const uint64_t z = EndOfData(bytes);
    found.torn = TornWalTail{(*wal)->first, end.at, z - std::min(z, end.at)};
  } else if (end.kind == EndKind::kCut) {
    found.cut = CutWal{(*wal)->first, end.at, bytes.size()};
  }
  return found;
}

absl::StatusOr<std::optional<TornWalTail>> FindTornWalTail(
    const std::string& dir) {
  absl::StatusOr<NewestWalEnd> end = InspectNewestWal(dir);
  if (!end.ok()) return end.status();
  return end->torn;
}

std::string DescribeTornTail(const TornWalTail& tail) {
  return absl::StrCat(tail.file, " ends in a record torn by a crash (",
                      tail.hidden, " bytes at offset ", tail.torn_at,
                      ", never acknowledged); it is ignored");
}

}  // namespace cairn
