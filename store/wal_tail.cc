// FindTornRecord and FindTornWalTail: see wal_tail.h. The log format is
// RocksDB's (db/log_format.h): 32 KiB blocks of physical records, each a
// 7-byte header (masked CRC32C of type and payload, little-endian; payload
// length, 2 bytes little-endian; type) and its payload; fewer than 7 bytes
// left in a block are zero padding.
#include "store/wal_tail.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kBlockSize = 32768;
constexpr uint64_t kHeaderSize = 7;
constexpr uint8_t kFullType = 1;
constexpr uint8_t kFirstType = 2;
constexpr uint8_t kMiddleType = 3;
constexpr uint8_t kLastType = 4;

// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as RocksDB's.
std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0);
    table[i] = c;
  }
  return table;
}

uint32_t Crc32c(std::string_view data) {
  static const std::array<uint32_t, 256> kTable = MakeCrcTable();
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : data) {
    crc = kTable[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  }
  return crc ^ 0xFFFFFFFFu;
}

// RocksDB stores record checksums masked (crc32c::Mask).
uint32_t Masked(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

uint32_t Fixed32At(std::string_view b, uint64_t pos) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[pos + i]);
  return v;
}

// One past the payload the header at `pos` declares (its length field: 2
// bytes, little-endian).
uint64_t DeclaredEnd(std::string_view b, uint64_t pos) {
  const uint64_t length =
      static_cast<uint8_t>(b[pos + 4]) |
      (static_cast<uint64_t>(static_cast<uint8_t>(b[pos + 5])) << 8);
  return pos + kHeaderSize + length;
}

struct Physical {
  uint8_t type = 0;
  uint64_t end = 0;  // One past the payload.
};

// The physical record at `pos` when it is intact: a known type, inside its
// block and the file, checksum matching.
std::optional<Physical> IntactAt(std::string_view b, uint64_t pos) {
  if (pos + kHeaderSize > b.size()) return std::nullopt;
  const uint8_t type = static_cast<uint8_t>(b[pos + 6]);
  if (type < kFullType || type > kLastType) return std::nullopt;
  const uint64_t end = DeclaredEnd(b, pos);
  const uint64_t block_end = (pos / kBlockSize + 1) * kBlockSize;
  if (end > block_end || end > b.size()) return std::nullopt;
  // The checksum covers the type byte and the payload.
  const uint32_t crc = Crc32c(b.substr(pos + 6, end - (pos + 6)));
  if (Masked(crc) != Fixed32At(b, pos)) return std::nullopt;
  return Physical{type, end};
}

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

}  // namespace

std::optional<uint64_t> FindTornRecord(std::string_view b) {
  uint64_t pos = 0;
  uint64_t record_start = 0;
  bool in_record = false;  // After a first fragment, before its last.
  while (pos < b.size()) {
    const uint64_t left_in_block = kBlockSize - pos % kBlockSize;
    if (left_in_block < kHeaderSize) {
      pos += left_in_block;
      continue;
    }
    std::optional<Physical> r = IntactAt(b, pos);
    if (!r.has_value()) break;
    const bool starts = r->type == kFullType || r->type == kFirstType;
    if (starts == in_record) return std::nullopt;  // Damage: RocksDB's call.
    if (starts) record_start = pos;
    in_record = r->type == kFirstType || r->type == kMiddleType;
    pos = r->end;
  }
  if (pos >= b.size()) return std::nullopt;  // Ends at the file's end.
  const uint64_t z = EndOfData(b);
  if (!in_record && z <= pos) return std::nullopt;  // Clean: zeros follow.
  if (!CutShortByZeros(b, pos, z, in_record)) return std::nullopt;
  return in_record ? record_start : pos;
}

absl::StatusOr<std::optional<TornWalTail>> FindTornWalTail(
    const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return std::nullopt;
  const std::string newest = NewestWal(dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot list ", dir, ": ", ec.message()));
  }
  if (newest.empty()) return std::nullopt;
  std::ifstream in(fs::path(dir) / newest, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  if (in.bad()) {
    return absl::InternalError(absl::StrCat("cannot read ", dir, "/", newest));
  }
  std::optional<uint64_t> torn_at = FindTornRecord(bytes);
  if (!torn_at.has_value()) return std::nullopt;
  const uint64_t z = EndOfData(bytes);
  return TornWalTail{newest, *torn_at, z - std::min(z, *torn_at)};
}

std::string DescribeTornTail(const TornWalTail& tail) {
  return absl::StrCat(tail.file, " ends in a record torn by a crash (",
                      tail.hidden, " bytes at offset ", tail.torn_at,
                      ", never acknowledged); it is ignored");
}

}  // namespace cairn
