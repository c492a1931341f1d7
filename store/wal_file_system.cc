// NewStableSizeWalEnv: see wal_file_system.h.
#include "store/wal_file_system.h"

#include <memory>

#include "rocksdb/file_system.h"

namespace cairn {
namespace {

class StableSizeWalFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit StableSizeWalFileSystem(
      const std::shared_ptr<rocksdb::FileSystem>& base)
      : rocksdb::FileSystemWrapper(base) {}

  const char* Name() const override { return "CairnStableSizeWalFileSystem"; }

  rocksdb::FileOptions OptimizeForLogWrite(
      const rocksdb::FileOptions& file_options,
      const rocksdb::DBOptions& db_options) const override {
    rocksdb::FileOptions out =
        target()->OptimizeForLogWrite(file_options, db_options);
    out.fallocate_with_keep_size = false;
    return out;
  }
};

}  // namespace

std::unique_ptr<rocksdb::Env> NewStableSizeWalEnv() {
  return rocksdb::NewCompositeEnv(std::make_shared<StableSizeWalFileSystem>(
      rocksdb::FileSystem::Default()));
}

}  // namespace cairn
