// Tests of FaultFileSystem on plain files: which operations fail, torn
// appends, and what a power loss (DropUnsyncedData) leaves.
#include "tests/testing/fault_file_system.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "rocksdb/file_system.h"
#include "tests/testing/test_util.h"

namespace cairn::testing {
namespace {

using rocksdb::FileOptions;
using rocksdb::FSWritableFile;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

class FaultFileSystemTest : public ::testing::Test {
 protected:
  FaultFileSystemTest()
      : fs_(std::make_shared<FaultFileSystem>(rocksdb::FileSystem::Default())) {
  }

  std::string Path(const std::string& name) const {
    return dir_.path() + "/" + name;
  }

  std::unique_ptr<FSWritableFile> Create(const std::string& name) {
    std::unique_ptr<FSWritableFile> f;
    EXPECT_TRUE(
        fs_->NewWritableFile(Path(name), FileOptions(), &f, nullptr).ok());
    return f;
  }

  void SyncDir() {
    std::unique_ptr<rocksdb::FSDirectory> d;
    ASSERT_TRUE(fs_->NewDirectory(dir_.path(), IOOptions(), &d, nullptr).ok());
    ASSERT_TRUE(d->Fsync(IOOptions(), nullptr).ok());
  }

  std::string Contents(const std::string& name) const {
    std::ifstream in(Path(name), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  IOStatus Append(FSWritableFile* f, const std::string& data) {
    return f->Append(data, IOOptions(), nullptr);
  }
  IOStatus Sync(FSWritableFile* f) { return f->Sync(IOOptions(), nullptr); }
  IOStatus Close(FSWritableFile* f) { return f->Close(IOOptions(), nullptr); }

  TempDir dir_;
  std::shared_ptr<FaultFileSystem> fs_;
};

TEST(KindOfFileTest, NamesRocksDbFiles) {
  EXPECT_EQ(KindOfFile("/db/000012.log"), kWalFile);
  EXPECT_EQ(KindOfFile("/db/000013.sst"), kSstFile);
  EXPECT_EQ(KindOfFile("/db/MANIFEST-000005"), kManifestFile);
  EXPECT_EQ(KindOfFile("/db/LOG"), kOtherFile);
  EXPECT_EQ(KindOfFile("/db/CURRENT"), kOtherFile);
  EXPECT_EQ(KindOfFile("OPTIONS-000007"), kOtherFile);
}

TEST_F(FaultFileSystemTest, NoFaultsUntilInjected) {
  auto f = Create("000001.log");
  EXPECT_TRUE(Append(f.get(), "abc").ok());
  EXPECT_TRUE(Sync(f.get()).ok());
  EXPECT_TRUE(Close(f.get()).ok());
  EXPECT_EQ(Contents("000001.log"), "abc");
  EXPECT_EQ(fs_->SyncedBytes(Path("000001.log")), 3);
  EXPECT_EQ(fs_->injected_faults(), 0);
}

TEST_F(FaultFileSystemTest, AppendCrossingThresholdIsTornAndFailsWithNoSpace) {
  auto f = Create("000001.log");
  FaultSpec spec;
  spec.after_bytes = 5;
  fs_->InjectFaults(spec);
  EXPECT_TRUE(Append(f.get(), "abc").ok());
  IOStatus s = Append(f.get(), "defg");
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_TRUE(Append(f.get(), "h").IsNoSpace());
  EXPECT_TRUE(Sync(f.get()).IsNoSpace());
  EXPECT_TRUE(Close(f.get()).ok());  // kCloseOp is not in the default ops
  EXPECT_EQ(Contents("000001.log"), "abcde");
  EXPECT_EQ(fs_->injected_faults(), 3);
  EXPECT_EQ(fs_->SyncedBytes(Path("000001.log")), 0);
}

TEST_F(FaultFileSystemTest, FailedSyncLeavesBytesThatPowerLossDrops) {
  auto f = Create("000001.log");
  SyncDir();
  ASSERT_TRUE(Append(f.get(), "durable").ok());
  ASSERT_TRUE(Sync(f.get()).ok());
  FaultSpec spec;
  spec.error = FaultSpec::Error::kIoError;
  spec.ops = kSyncOp;
  fs_->InjectFaults(spec);
  ASSERT_TRUE(Append(f.get(), "+lost").ok());
  IOStatus s = Sync(f.get());
  EXPECT_TRUE(s.IsIOError() && !s.IsNoSpace()) << s.ToString();
  ASSERT_TRUE(Close(f.get()).ok());
  // Without a power loss the bytes are in the file (page cache) ...
  EXPECT_EQ(Contents("000001.log"), "durable+lost");
  // ... and a power loss drops them.
  ASSERT_EQ(fs_->DropUnsyncedData(), absl::OkStatus());
  EXPECT_EQ(Contents("000001.log"), "durable");
  EXPECT_EQ(fs_->SyncedBytes(Path("000001.log")), -1);  // no longer tracked
}

TEST_F(FaultFileSystemTest, OnlyMatchingKindsFailAndCount) {
  auto wal = Create("000001.log");
  auto sst = Create("000002.sst");
  FaultSpec spec;
  spec.kinds = kSstFile | kManifestFile;
  spec.after_bytes = 4;
  fs_->InjectFaults(spec);
  EXPECT_TRUE(Append(wal.get(), "0123456789").ok());  // does not count
  EXPECT_TRUE(Sync(wal.get()).ok());
  EXPECT_TRUE(Append(sst.get(), "abcd").ok());
  EXPECT_TRUE(Append(sst.get(), "e").IsNoSpace());
  EXPECT_TRUE(Append(wal.get(), "x").ok());
  EXPECT_EQ(fs_->injected_faults(), 1);
}

TEST_F(FaultFileSystemTest, CloseFaultStillClosesTheFile) {
  auto f = Create("CURRENT");
  FaultSpec spec;
  spec.ops = kCloseOp;
  fs_->InjectFaults(spec);
  EXPECT_TRUE(Append(f.get(), "x").ok());
  EXPECT_TRUE(Sync(f.get()).ok());
  EXPECT_TRUE(Close(f.get()).IsNoSpace());
  fs_->ClearFaults();
  auto g = Create("OTHER");
  EXPECT_TRUE(Close(g.get()).ok());
  EXPECT_EQ(Contents("CURRENT"), "x");
}

TEST_F(FaultFileSystemTest, ProbabilityIsReproducibleFromTheSeed) {
  auto count_failures = [&](uint64_t seed) {
    auto f = Create("000001.log");
    FaultSpec spec;
    spec.probability = 0.3;
    spec.seed = seed;
    fs_->InjectFaults(spec);
    std::string pattern;
    for (int i = 0; i < 200; ++i)
      pattern += Append(f.get(), "x").ok() ? '.' : 'F';
    fs_->ClearFaults();
    EXPECT_TRUE(Close(f.get()).ok());
    return pattern;
  };
  const std::string a = count_failures(7);
  const std::string b = count_failures(7);
  const std::string c = count_failures(8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const auto failures = std::count(a.begin(), a.end(), 'F');
  EXPECT_GT(failures, 30);
  EXPECT_LT(failures, 90);
}

TEST_F(FaultFileSystemTest, PowerLossDeletesFilesWhoseDirectoryWasNotSynced) {
  auto synced_entry = Create("000001.log");
  ASSERT_TRUE(Append(synced_entry.get(), "aaa").ok());
  ASSERT_TRUE(Sync(synced_entry.get()).ok());
  // Name durable, data never synced.
  auto empty = Create("000003.log");
  SyncDir();
  ASSERT_TRUE(Append(empty.get(), "ccc").ok());
  // Synced data, but the new name was never made durable by a dir fsync.
  auto unsynced_entry = Create("000002.log");
  ASSERT_TRUE(Append(unsynced_entry.get(), "bbb").ok());
  ASSERT_TRUE(Sync(unsynced_entry.get()).ok());
  for (auto* f : {synced_entry.get(), unsynced_entry.get(), empty.get()}) {
    ASSERT_TRUE(Close(f).ok());
  }
  ASSERT_EQ(fs_->DropUnsyncedData(), absl::OkStatus());
  EXPECT_EQ(Contents("000001.log"), "aaa");
  EXPECT_FALSE(std::filesystem::exists(Path("000002.log")));
  EXPECT_TRUE(std::filesystem::exists(Path("000003.log")));
  EXPECT_EQ(Contents("000003.log"), "");
}

TEST_F(FaultFileSystemTest, PowerLossMayKeepARandomPrefixOfUnsyncedBytes) {
  std::set<size_t> kept;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto f = Create("000001.log");
    SyncDir();
    ASSERT_TRUE(Append(f.get(), "sync").ok());
    ASSERT_TRUE(Sync(f.get()).ok());
    ASSERT_TRUE(Append(f.get(), "0123456789").ok());
    ASSERT_TRUE(Close(f.get()).ok());
    ASSERT_EQ(fs_->DropUnsyncedData({.keep_random_prefix = true, .seed = seed}),
              absl::OkStatus());
    const std::string got = Contents("000001.log");
    ASSERT_EQ(got, std::string("sync0123456789").substr(0, got.size()));
    ASSERT_GE(got.size(), 4u);
    kept.insert(got.size());
  }
  // Different seeds keep different amounts.
  EXPECT_GT(kept.size(), 3u);
}

TEST_F(FaultFileSystemTest, RenameCarriesTheFilesState) {
  auto f = Create("CURRENT.dbtmp");
  ASSERT_TRUE(Append(f.get(), "MANIFEST-000001\n").ok());
  ASSERT_TRUE(Sync(f.get()).ok());
  ASSERT_TRUE(Close(f.get()).ok());
  ASSERT_TRUE(fs_->RenameFile(Path("CURRENT.dbtmp"), Path("CURRENT"),
                              IOOptions(), nullptr)
                  .ok());
  EXPECT_EQ(fs_->SyncedBytes(Path("CURRENT.dbtmp")), -1);
  EXPECT_EQ(fs_->SyncedBytes(Path("CURRENT")), 16);
  SyncDir();
  ASSERT_EQ(fs_->DropUnsyncedData(), absl::OkStatus());
  EXPECT_EQ(Contents("CURRENT"), "MANIFEST-000001\n");
}

TEST_F(FaultFileSystemTest, ReopenedFileKeepsWhatItHadAsDurable) {
  {
    std::ofstream out(Path("old.log"), std::ios::binary);
    out << "before";
  }
  std::unique_ptr<FSWritableFile> f;
  ASSERT_TRUE(
      fs_->ReopenWritableFile(Path("old.log"), FileOptions(), &f, nullptr)
          .ok());
  ASSERT_TRUE(Append(f.get(), "+after").ok());
  ASSERT_TRUE(Close(f.get()).ok());
  EXPECT_EQ(fs_->SyncedBytes(Path("old.log")), 6);
  ASSERT_EQ(fs_->DropUnsyncedData(), absl::OkStatus());
  EXPECT_EQ(Contents("old.log"), "before");
}

TEST(FaultFileSystemHookTest, WrapsAndAppliesInitialFaults) {
  std::shared_ptr<FaultFileSystem> fs;
  FaultSpec spec;
  spec.kinds = kSstFile;
  auto wrapped =
      FaultFileSystem::Hook(&fs, spec)(rocksdb::FileSystem::Default());
  ASSERT_NE(fs, nullptr);
  EXPECT_EQ(wrapped.get(), fs.get());
  TempDir dir;
  std::unique_ptr<FSWritableFile> f;
  ASSERT_TRUE(fs->NewWritableFile(dir.path() + "/000001.sst", FileOptions(), &f,
                                  nullptr)
                  .ok());
  EXPECT_TRUE(f->Append("x", IOOptions(), nullptr).IsNoSpace());
  EXPECT_TRUE(f->Close(IOOptions(), nullptr).ok());
}

}  // namespace
}  // namespace cairn::testing
