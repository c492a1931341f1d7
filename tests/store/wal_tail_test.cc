// A kill -9 in the middle of a WAL append is never taken for damage, and
// damage is never taken for a torn append. The fixture copies a store while
// it is still open: the copy is what a kill -9 leaves (the page cache is
// intact, the WAL keeps its preallocated zero tail). Each test then tears or
// damages the last records of the copy's newest WAL and opens it.
#include "store/wal_tail.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "store/verify.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kTrials = 20;
constexpr uint64_t kBlock = 32768;
constexpr uint64_t kPage = 4096;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() == "LOCK") continue;  // Verify takes the lock.
    out[e.path().filename().string()] = ReadFile(e.path());
  }
  return out;
}

class WalTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path live = fs::path(tmp_.path()) / "live";
    store_ = fs::path(tmp_.path()) / "store";
    auto store = Store::Open(StoreOptions(), live.string());
    ASSERT_TRUE(store.ok()) << store.status();
    cairn::v1::Study study;
    study.set_display_name("torn");
    *study.mutable_spec() = cairn::testing::BraninSpec();
    auto id = (*store)->CreateStudy(study);
    ASSERT_TRUE(id.ok()) << id.status();
    for (int i = 1; i <= kTrials; ++i) {
      cairn::v1::Trial t;
      t.set_id(i);
      // The last record spans more than a block: a first fragment, at
      // least one more, and a last one.
      t.set_client_id(std::string(i == kTrials ? 40000 : 9000, 'a' + i % 26));
      ASSERT_TRUE((*store)->PutTrials(*id, {t}).ok());
    }
    fs::create_directory(store_);
    for (const auto& e : fs::directory_iterator(live)) {
      if (e.path().filename() != "LOCK")
        fs::copy(e.path(), store_ / e.path().filename());
    }
    for (const auto& e : fs::directory_iterator(store_)) {
      if (absl::EndsWith(e.path().string(), ".log")) wal_ = e.path();
    }
    ASSERT_FALSE(wal_.empty());
    bytes_ = ReadFile(wal_);
    end_ = bytes_.find_last_not_of('\0') + 1;
    ASSERT_GT(bytes_.size(), end_) << "the WAL has no preallocated tail";
  }

  // Zeroes the WAL's bytes [from, to).
  void Zero(uint64_t from, uint64_t to) {
    std::string b = bytes_;
    for (uint64_t i = from; i < to; ++i) b[i] = '\0';
    WriteFile(wal_, b);
  }

  // The start of the last block the last record reaches into.
  uint64_t LastBlock() const { return end_ / kBlock * kBlock; }

  uint64_t LengthAt(uint64_t header) const {
    return static_cast<uint8_t>(bytes_[header + 4]) |
           (static_cast<uint64_t>(static_cast<uint8_t>(bytes_[header + 5]))
            << 8);
  }

  // The header of trial `id`'s record when it is one whole record (9,000-
  // byte client id): a full-type header just before that payload whose
  // record ends just after it; npos when the record is in fragments.
  uint64_t FullRecordOf(int id) const {
    const uint64_t payload = bytes_.rfind(std::string(9000, 'a' + id % 26));
    for (uint64_t h = payload - 7; h + 300 > payload; --h) {
      const uint64_t end = h + 7 + LengthAt(h);
      if (bytes_[h + 6] == 1 && end > payload + 9000 && end < payload + 9300) {
        return h;
      }
    }
    return std::string::npos;
  }

  // Opens the copy: it must serve every trial but the torn last one, and
  // verify must call it intact without changing a byte.
  void ExpectTornTailIgnored() {
    absl::StatusOr<std::optional<TornWalTail>> tail =
        FindTornWalTail(store_.string());
    ASSERT_TRUE(tail.ok()) << tail.status();
    ASSERT_TRUE(tail->has_value()) << "no torn tail found";
    EXPECT_EQ((*tail)->file, wal_.filename().string());
    EXPECT_LT((*tail)->torn_at, end_ - 40000);
    const auto before = Snapshot(store_);
    absl::StatusOr<VerifyReport> verify = VerifyStore(store_.string());
    ASSERT_TRUE(verify.ok()) << verify.status();
    EXPECT_THAT(verify->problems, ::testing::IsEmpty());
    EXPECT_EQ(verify->records.trials, kTrials - 1);
    EXPECT_TRUE(Snapshot(store_) == before) << "verify changed the store";
    auto store = Store::Open(StoreOptions(), store_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    auto all = (*store)->LoadAll();
    ASSERT_TRUE(all.ok()) << all.status();
    EXPECT_EQ((*all)[0].trials.size(), kTrials - 1u);
  }

  // The copy is refused as damaged, naming the WAL.
  void ExpectDamage() {
    absl::StatusOr<std::optional<TornWalTail>> tail =
        FindTornWalTail(store_.string());
    ASSERT_TRUE(tail.ok()) << tail.status();
    EXPECT_FALSE(tail->has_value()) << DescribeTornTail(**tail);
    auto store = Store::Open(StoreOptions(), store_.string());
    ASSERT_FALSE(store.ok()) << "opened a damaged store";
    EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(store.status().message(), HasSubstr(wal_.filename().string()));
  }

  cairn::testing::TempDir tmp_;
  fs::path store_;
  fs::path wal_;
  std::string bytes_;
  uint64_t end_ = 0;  // One past the WAL's last non-zero byte.
};

TEST_F(WalTailTest, AKilledStoreOpensWithEveryTrial) {
  EXPECT_EQ(FindTornRecord(bytes_), std::nullopt);
  auto store = Store::Open(StoreOptions(), store_.string());
  ASSERT_TRUE(store.ok()) << store.status();
  auto all = (*store)->LoadAll();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ((*all)[0].trials.size(), static_cast<size_t>(kTrials));
}

// Killed after the first fragments were written, before the last one:
// RocksDB alone refuses it with "error in middle of record".
TEST_F(WalTailTest, TornBeforeTheLastFragment) {
  Zero(LastBlock(), end_);
  ExpectTornTailIgnored();
}

// Killed between two pages of the last fragment: RocksDB alone refuses it
// with "checksum mismatch".
TEST_F(WalTailTest, TornInsideTheLastFragment) {
  const uint64_t page = (end_ - 1) / kPage * kPage;
  ASSERT_GT(page, LastBlock() + 7) << "choose another record size";
  Zero(page, end_);
  ExpectTornTailIgnored();
}

TEST_F(WalTailTest, TornInsideAFragmentHeader) {
  Zero(LastBlock() + 3, end_);
  ExpectTornTailIgnored();
}

// A changed byte in the last record (no zeros after it) is damage.
TEST_F(WalTailTest, GarbledLastRecordIsDamage) {
  bytes_[end_ - 100] ^= 0x5a;
  WriteFile(wal_, bytes_);
  ExpectDamage();
}

// Zeros inside an earlier record, intact records after them: damage.
TEST_F(WalTailTest, ZerosBeforeIntactRecordsAreDamage) {
  const uint64_t page = (end_ - 40000 - 9000) / kPage * kPage;
  Zero(page, page + kPage);
  ExpectDamage();
}

// A record whose length was changed so that it seems to run into the
// zeros, with an intact record inside its claimed length: damage (hiding it
// as torn would drop two acknowledged trials).
TEST_F(WalTailTest, LengthRunningOverAnIntactRecordIsDamage) {
  // Two whole records in one block: trials k and k + 1.
  int k = 1;
  uint64_t first = 0, second = 0;
  for (; k + 1 < kTrials; ++k) {
    first = FullRecordOf(k);
    second = FullRecordOf(k + 1);
    if (first != std::string::npos && second != std::string::npos &&
        first / kBlock == (second + 7 + LengthAt(second)) / kBlock) {
      break;
    }
  }
  ASSERT_LT(k + 1, kTrials) << "no two whole records in one block";
  // Without the later trials' records, trial k + 1's ends the data.
  const uint64_t end = second + 7 + LengthAt(second);
  for (uint64_t i = end; i < end_; ++i) bytes_[i] = '\0';
  const uint64_t len = (first / kBlock + 1) * kBlock - first - 7;
  bytes_[first + 4] = static_cast<char>(len & 0xff);
  bytes_[first + 5] = static_cast<char>(len >> 8);
  WriteFile(wal_, bytes_);
  ExpectDamage();
}

// A WAL cut short after the fact (truncated in its last record, so no
// preallocated zeros follow it): damage, never a torn tail.
TEST_F(WalTailTest, CutInsideTheLastRecordIsDamage) {
  fs::resize_file(wal_, end_ - 100);
  EXPECT_EQ(FindTornRecord(ReadFile(wal_)), std::nullopt);
  EXPECT_NE(FindCutRecord(ReadFile(wal_)), std::nullopt);
  ExpectDamage();
  auto store = Store::Open(StoreOptions(), store_.string());
  EXPECT_THAT(store.status().message(), HasSubstr("is cut short"));
}

// Cut where the last record's next fragment would start.
TEST_F(WalTailTest, CutBetweenFragmentsIsDamage) {
  fs::resize_file(wal_, LastBlock());
  EXPECT_NE(FindCutRecord(ReadFile(wal_)), std::nullopt);
  ExpectDamage();
}

// Cut inside the header of a record.
TEST_F(WalTailTest, CutInsideAHeaderIsDamage) {
  fs::resize_file(wal_, LastBlock() + 3);
  EXPECT_NE(FindCutRecord(ReadFile(wal_)), std::nullopt);
  ExpectDamage();
}

// Torn and intact WALs are not cut.
TEST_F(WalTailTest, TornOrIntactIsNotCut) {
  EXPECT_EQ(FindCutRecord(bytes_), std::nullopt);
  EXPECT_EQ(FindCutRecord(bytes_.substr(0, end_)), std::nullopt)
      << "a WAL closed after its last record (truncated there) is not cut";
  Zero(LastBlock(), end_);
  EXPECT_EQ(FindCutRecord(ReadFile(wal_)), std::nullopt);
}

}  // namespace
}  // namespace cairn
