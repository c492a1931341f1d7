// Reading RocksDB 7.8's write-ahead log format (db/log_format.h, legacy
// record types) without RocksDB: 32 KiB blocks of physical records, each a
// 7-byte header (masked CRC32C of type and payload, little-endian; payload
// length, 2 bytes little-endian; type) and its payload; fewer than 7 bytes
// left in a block are zero padding. A logical record (one write batch) is
// one full physical record or a first, middles and a last. A write batch
// starts with its sequence number (8 bytes, little-endian) and its count of
// entries (4 bytes). Used to tell a WAL torn by a crash from one cut short
// (wal_tail.h) and to find the first write of a new WAL (wal_first_write.h).
#ifndef CAIRN_STORE_WAL_FORMAT_H_
#define CAIRN_STORE_WAL_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace cairn::wal_format {

inline constexpr uint64_t kBlockSize = 32768;
inline constexpr uint64_t kHeaderSize = 7;
inline constexpr uint8_t kFullType = 1;
inline constexpr uint8_t kFirstType = 2;
inline constexpr uint8_t kMiddleType = 3;
inline constexpr uint8_t kLastType = 4;

struct Physical {
  uint8_t type = 0;
  uint64_t end = 0;  // One past the payload.
};

// The physical record at `pos` of `bytes` when it is intact: a known type,
// inside its block and `bytes`, checksum matching.
std::optional<Physical> IntactAt(std::string_view bytes, uint64_t pos);

// Reads the physical records of a WAL's bytes from the start, in order,
// skipping the zero padding at block ends.
class RecordWalker {
 public:
  enum class Step {
    kRecord,      // record() is the next intact record.
    kEnd,         // The bytes end (after whole records or fragments).
    kBroken,      // The record at pos() is not intact.
    kMisordered,  // An intact record of the wrong type for its place.
  };

  explicit RecordWalker(std::string_view bytes) : bytes_(bytes) {}

  Step Next();
  const Physical& record() const { return record_; }
  // Where record() starts (its header).
  uint64_t record_pos() const { return record_pos_; }
  // Where the next record starts (or reading stopped).
  uint64_t pos() const { return pos_; }
  // Whether the last record started a logical record (full or first).
  bool started() const { return started_; }
  // After a first fragment and before its last.
  bool in_record() const { return in_record_; }
  // Where the last logical record started.
  uint64_t record_start() const { return record_start_; }

 private:
  std::string_view bytes_;
  uint64_t pos_ = 0;
  Physical record_;
  uint64_t record_pos_ = 0;
  bool started_ = false;
  bool in_record_ = false;
  uint64_t record_start_ = 0;
};

// One past the payload the header at `pos` declares (its length field).
// REQUIRES: pos + kHeaderSize <= bytes.size().
uint64_t DeclaredEnd(std::string_view bytes, uint64_t pos);

// The first write batch of a WAL.
struct WriteBatchInfo {
  uint64_t first_sequence = 0;  // Its first entry's sequence number.
  uint32_t count = 0;           // Its entries (> 0).
  uint64_t end = 0;             // One past its last physical record.
};

// The first write batch with at least one entry among the records at the
// start of `wal` (the first bytes of a WAL file: batches with no entries,
// such as the one RocksDB writes to a new WAL at open, are skipped);
// nullopt when `wal` does not yet hold one whole, or its records up to
// there are not intact.
std::optional<WriteBatchInfo> FirstWriteBatch(std::string_view wal);

}  // namespace cairn::wal_format

#endif  // CAIRN_STORE_WAL_FORMAT_H_
