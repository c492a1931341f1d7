// RocksDbStore's job records (j/<job id>): written through the commit queue
// like every other write, read with a prefix scan.
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "store/keys.h"
#include "store/rocksdb_store.h"
#include "store/rocksdb_store_util.h"

namespace cairn {

namespace keys = store_keys;

absl::Status RocksDbStore::PutJobRecord(const cairn::v1::JobRecord& record) {
  if (record.job().job_id().empty()) {
    return absl::InvalidArgumentError("job record: job.job_id is empty");
  }
  rocksdb::WriteBatch batch;
  batch.Put(keys::JobKey(record.job().job_id()), record.SerializeAsString());
  return Write(&batch, absl::StrCat("job ", record.job().job_id()));
}

absl::Status RocksDbStore::DeleteJobRecord(const std::string& job_id) {
  if (job_id.empty()) {
    return absl::InvalidArgumentError("job record: job_id is empty");
  }
  rocksdb::WriteBatch batch;
  batch.Delete(keys::JobKey(job_id));
  return Write(&batch, absl::StrCat("job ", job_id));
}

absl::StatusOr<std::vector<cairn::v1::JobRecord>>
RocksDbStore::LoadJobRecords() {
  std::vector<cairn::v1::JobRecord> records;
  absl::Status st = ForEachWithPrefix(
      nullptr, keys::kJobPrefix,
      [&records](absl::string_view key, absl::string_view value) {
        cairn::v1::JobRecord record;
        if (!record.ParseFromArray(value.data(),
                                   static_cast<int>(value.size()))) {
          return absl::DataLossError(absl::StrCat(
              "key \"", absl::CHexEscape(key), "\": not a JobRecord"));
        }
        records.push_back(std::move(record));
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  return records;
}

}  // namespace cairn
