// RocksDB's info log (DIR/LOG) written so that a full disk cannot stop the
// store. RocksDB's own file logger keeps using a file writer after a failed
// append, which trips an assertion in Debian's librocksdb (SIGABRT on the
// first log line after the disk filled up). This logger writes each line
// with one write(2) to an O_APPEND file, drops lines that cannot be written
// (ENOSPC, EIO) and writes again once it can.
#ifndef CAIRN_STORE_INFO_LOG_H_
#define CAIRN_STORE_INFO_LOG_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "rocksdb/env.h"

namespace cairn {

// A thread-safe logger appending to `dir`/LOG (creating `dir` if needed).
// When LOG grows past `max_bytes` it is renamed to LOG.old (replacing the
// previous one) and a new LOG is started. Fails only if LOG cannot be
// opened at all.
absl::StatusOr<std::shared_ptr<rocksdb::Logger>> NewInfoLog(
    const std::string& dir, size_t max_bytes = 8 << 20);

}  // namespace cairn

#endif  // CAIRN_STORE_INFO_LOG_H_
