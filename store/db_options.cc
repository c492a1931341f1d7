// See db_options.h.
#include "store/db_options.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/table_properties.h"

namespace cairn {
namespace {

constexpr char kSmallestSeqno[] = "cairn.smallest_seqno";
constexpr char kLargestSeqno[] = "cairn.largest_seqno";

// Records the smallest and largest sequence number of a table's entries.
class SeqnoRangeCollector final : public rocksdb::TablePropertiesCollector {
 public:
  rocksdb::Status AddUserKey(const rocksdb::Slice& /*key*/,
                             const rocksdb::Slice& /*value*/,
                             rocksdb::EntryType /*type*/,
                             rocksdb::SequenceNumber seq,
                             uint64_t /*file_size*/) override {
    smallest_ = std::min(smallest_, seq);
    largest_ = std::max(largest_, seq);
    return rocksdb::Status::OK();
  }

  rocksdb::Status Finish(rocksdb::UserCollectedProperties* props) override {
    if (smallest_ <= largest_) {
      (*props)[kSmallestSeqno] = absl::StrCat(smallest_);
      (*props)[kLargestSeqno] = absl::StrCat(largest_);
    }
    return rocksdb::Status::OK();
  }

  rocksdb::UserCollectedProperties GetReadableProperties() const override {
    return {};
  }

  const char* Name() const override { return "CairnSeqnoRangeCollector"; }

 private:
  uint64_t smallest_ = std::numeric_limits<uint64_t>::max();
  uint64_t largest_ = 0;
};

class SeqnoRangeCollectorFactory final
    : public rocksdb::TablePropertiesCollectorFactory {
 public:
  rocksdb::TablePropertiesCollector* CreateTablePropertiesCollector(
      rocksdb::TablePropertiesCollectorFactory::Context /*context*/) override {
    return new SeqnoRangeCollector();
  }
  const char* Name() const override {
    return "CairnSeqnoRangeCollectorFactory";
  }
};

class DiscardingLogger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

}  // namespace

rocksdb::Options StoreDbOptions(rocksdb::Env* env) {
  rocksdb::Options options;
  options.env = env;
  options.create_if_missing = false;
  options.max_background_jobs = 2;
  options.wal_recovery_mode =
      rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  options.track_and_verify_wals_in_manifest = true;
  options.paranoid_checks = true;
  // 16 MB memtables (RocksDB's default is 64 MB) keep small both the free
  // space a flush needs and each WAL file's preallocation (1.1 x
  // write_buffer_size, all of it on disk: see wal_file_system.h). The
  // store's free-space floor (kMinFreeBytesToWrite) is sized from this.
  options.write_buffer_size = 16 << 20;
  options.table_properties_collector_factories.push_back(
      std::make_shared<SeqnoRangeCollectorFactory>());
  return options;
}

absl::StatusOr<std::optional<SeqnoRange>> ReadSstSeqnoRange(
    const std::string& sst_path) {
  rocksdb::Options options;
  rocksdb::SstFileReader reader(options);
  if (rocksdb::Status s = reader.Open(sst_path); !s.ok()) {
    return absl::DataLossError(
        absl::StrCat(sst_path, " is not a complete table: ", s.ToString()));
  }
  std::shared_ptr<const rocksdb::TableProperties> props =
      reader.GetTableProperties();
  if (props == nullptr) return std::nullopt;
  const auto& user = props->user_collected_properties;
  auto lo = user.find(kSmallestSeqno);
  auto hi = user.find(kLargestSeqno);
  SeqnoRange range;
  if (lo == user.end() || hi == user.end() ||
      !absl::SimpleAtoi(lo->second, &range.smallest) ||
      !absl::SimpleAtoi(hi->second, &range.largest)) {
    return std::nullopt;
  }
  return range;
}

std::shared_ptr<rocksdb::Logger> NewDiscardingLogger() {
  return std::make_shared<DiscardingLogger>();
}

}  // namespace cairn
