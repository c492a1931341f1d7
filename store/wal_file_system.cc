// NewStableSizeWalEnv: see wal_file_system.h.
#include "store/wal_file_system.h"

#include <memory>
#include <utility>

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

std::unique_ptr<rocksdb::Env> NewStableSizeWalEnv(
    const std::function<std::shared_ptr<rocksdb::FileSystem>(
        std::shared_ptr<rocksdb::FileSystem>)>& wrap) {
  std::shared_ptr<rocksdb::FileSystem> fs =
      std::make_shared<StableSizeWalFileSystem>(rocksdb::FileSystem::Default());
  if (wrap) fs = wrap(std::move(fs));
  return rocksdb::NewCompositeEnv(std::move(fs));
}

}  // namespace cairn
