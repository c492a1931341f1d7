// RocksDbStore's token records (u/<name>): written through the commit queue
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

absl::Status RocksDbStore::PutTokenRecord(
    const cairn::v1::TokenRecord& record) {
  if (record.token().name().empty()) {
    return absl::InvalidArgumentError("token record: token.name is empty");
  }
  rocksdb::WriteBatch batch;
  batch.Put(keys::TokenKey(record.token().name()), record.SerializeAsString());
  return Write(&batch, absl::StrCat("token ", record.token().name()));
}

absl::StatusOr<std::vector<cairn::v1::TokenRecord>>
RocksDbStore::LoadTokenRecords() {
  std::vector<cairn::v1::TokenRecord> records;
  absl::Status st = ForEachWithPrefix(
      nullptr, keys::kTokenPrefix,
      [&records](absl::string_view key, absl::string_view value) {
        cairn::v1::TokenRecord record;
        if (!record.ParseFromArray(value.data(),
                                   static_cast<int>(value.size()))) {
          return absl::DataLossError(absl::StrCat(
              "key \"", absl::CHexEscape(key), "\": not a TokenRecord"));
        }
        records.push_back(std::move(record));
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  return records;
}

}  // namespace cairn
