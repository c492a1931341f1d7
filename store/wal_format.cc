// See wal_format.h.
#include "store/wal_format.h"

#include <array>
#include <string>

namespace cairn::wal_format {
namespace {

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

// The little-endian number of `n` bytes at `pos`.
uint64_t FixedAt(std::string_view b, uint64_t pos, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<uint8_t>(b[pos + i]);
  return v;
}

// Sequence number and count, then the entries.
constexpr size_t kBatchHeaderSize = 12;

}  // namespace

uint64_t DeclaredEnd(std::string_view b, uint64_t pos) {
  return pos + kHeaderSize + FixedAt(b, pos + 4, 2);
}

std::optional<Physical> IntactAt(std::string_view b, uint64_t pos) {
  if (pos + kHeaderSize > b.size()) return std::nullopt;
  const uint8_t type = static_cast<uint8_t>(b[pos + 6]);
  if (type < kFullType || type > kLastType) return std::nullopt;
  const uint64_t end = DeclaredEnd(b, pos);
  const uint64_t block_end = (pos / kBlockSize + 1) * kBlockSize;
  if (end > block_end || end > b.size()) return std::nullopt;
  // The checksum covers the type byte and the payload.
  const uint32_t crc = Crc32c(b.substr(pos + 6, end - (pos + 6)));
  if (Masked(crc) != FixedAt(b, pos, 4)) return std::nullopt;
  return Physical{type, end};
}

RecordWalker::Step RecordWalker::Next() {
  for (;;) {
    if (pos_ >= bytes_.size()) return Step::kEnd;
    const uint64_t left_in_block = kBlockSize - pos_ % kBlockSize;
    if (left_in_block >= kHeaderSize) break;
    pos_ += left_in_block;
  }
  std::optional<Physical> r = IntactAt(bytes_, pos_);
  if (!r.has_value()) return Step::kBroken;
  const bool starts = r->type == kFullType || r->type == kFirstType;
  if (starts == in_record_) return Step::kMisordered;
  if (starts) record_start_ = pos_;
  record_pos_ = pos_;
  started_ = starts;
  in_record_ = r->type == kFirstType || r->type == kMiddleType;
  record_ = *r;
  pos_ = r->end;
  return Step::kRecord;
}

std::optional<WriteBatchInfo> FirstWriteBatch(std::string_view b) {
  RecordWalker walker(b);
  std::string batch;  // The logical record's first bytes so far.
  while (walker.Next() == RecordWalker::Step::kRecord) {
    if (walker.started()) batch.clear();
    if (batch.size() < kBatchHeaderSize) {
      const uint64_t payload = walker.record_pos() + kHeaderSize;
      batch.append(b.substr(payload, walker.record().end - payload));
    }
    if (walker.in_record() || batch.size() < kBatchHeaderSize) continue;
    const auto count = static_cast<uint32_t>(FixedAt(batch, 8, 4));
    if (count > 0) {
      return WriteBatchInfo{FixedAt(batch, 0, 8), count, walker.pos()};
    }
  }
  return std::nullopt;
}

}  // namespace cairn::wal_format
