// Naming the damage RocksDB finds. RocksDB reports a damaged file only in
// its info log ("<dir>/000009.log: dropping 32768 bytes; Corruption: checksum
// mismatch"); the Status of a failed open says just "Corruption: checksum
// mismatch". DamageLog is the info logger of the store: it forwards every
// line to RocksDB's LOG file and remembers the first damage report, so the
// error of a failed open can name the file and what is wrong with it.
#ifndef CAIRN_STORE_DAMAGE_LOG_H_
#define CAIRN_STORE_DAMAGE_LOG_H_

#include <cstdarg>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/env.h"

namespace cairn {

// What RocksDB reported about one damaged file.
struct DamageReport {
  std::string file;    // Base name, e.g. "000009.log"; empty if none named.
  std::string detail;  // e.g. "Corruption: checksum mismatch".
};

// Splits one RocksDB log line ("<path>: dropping N bytes; Corruption: ..."
// or "<path>: Corruption: ...") into a report; the detail is empty when
// `line` reports no corruption, the file when it names no data file.
DamageReport ParseDamageLine(const std::string& line);

// Thread-safe: RocksDB logs from its background threads.
class DamageLog : public rocksdb::Logger {
 public:
  // Forwards to `target` (RocksDB's own LOG file logger).
  explicit DamageLog(std::shared_ptr<rocksdb::Logger> target);

  using rocksdb::Logger::Logv;
  void Logv(const rocksdb::InfoLogLevel level, const char* format,
            va_list ap) override;
  void Logv(const char* format, va_list ap) override;
  void LogHeader(const char* format, va_list ap) override;
  size_t GetLogFileSize() const override;
  void Flush() override;

  // The first damage reported since construction (file empty if none).
  DamageReport FirstDamage() const;

 protected:
  rocksdb::Status CloseImpl() override;

 private:
  const std::shared_ptr<rocksdb::Logger> target_;
  mutable absl::Mutex mu_;
  DamageReport first_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cairn

#endif  // CAIRN_STORE_DAMAGE_LOG_H_
