// Checkpoint encoding, atomic storage, retention and corrupt-file fallback.
#include "trainer/checkpoint.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include "tests/testing/test_util.h"
#include "tests/trainer/test_util.h"

namespace cairn::trainer {
namespace {

using ::cairn::testing::TempDir;
using ::cairn::trainer::testing::ReadText;
using ::cairn::trainer::testing::WriteText;

Checkpoint Sample(uint64_t step) {
  Checkpoint c;
  c.fingerprint = "v1 layers=3,4,2";
  c.step = step;
  c.epoch = 2;
  c.position = 17;
  c.order = {3, 1, 4, 0, 2};
  c.epoch_loss_sum = 1.25;
  c.epoch_batches = 5;
  c.last_train_loss = 0.5;
  c.elapsed_seconds = 12.5;
  for (int i = 0; i < 26; ++i) {
    c.state.params.push_back(i * 0.5f + step);
    c.state.m.push_back(-i * 1e-3f);
    c.state.v.push_back(i * 1e-6f);
  }
  return c;
}

void ExpectEqual(const Checkpoint& a, const Checkpoint& b) {
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.position, b.position);
  EXPECT_EQ(a.order, b.order);
  EXPECT_EQ(a.epoch_loss_sum, b.epoch_loss_sum);
  EXPECT_EQ(a.epoch_batches, b.epoch_batches);
  EXPECT_EQ(a.last_train_loss, b.last_train_loss);
  EXPECT_EQ(a.elapsed_seconds, b.elapsed_seconds);
  EXPECT_EQ(a.state.params, b.state.params);
  EXPECT_EQ(a.state.m, b.state.m);
  EXPECT_EQ(a.state.v, b.state.v);
}

TEST(CheckpointTest, EncodeDecodeRoundTrip) {
  const Checkpoint c = Sample(42);
  absl::StatusOr<Checkpoint> d = DecodeCheckpoint(EncodeCheckpoint(c));
  ASSERT_TRUE(d.ok()) << d.status();
  ExpectEqual(c, *d);
}

TEST(CheckpointTest, DetectsEveryFlippedByteAndTruncation) {
  const std::string bytes = EncodeCheckpoint(Sample(1));
  for (size_t i = 0; i < bytes.size(); i += 7) {
    std::string bad = bytes;
    bad[i] ^= 0x5A;
    EXPECT_FALSE(DecodeCheckpoint(bad).ok()) << "byte " << i;
  }
  for (size_t len :
       {size_t{0}, size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    absl::StatusOr<Checkpoint> d = DecodeCheckpoint(bytes.substr(0, len));
    EXPECT_EQ(d.status().code(), absl::StatusCode::kDataLoss) << len;
  }
}

TEST(CheckpointTest, ManagerKeepsNewestKAndLeavesNoTemporaries) {
  const TempDir tmp;
  const std::string dir = tmp.path() + "/job/sub";
  CheckpointManager m(dir, 2);
  for (uint64_t s : {5, 10, 15, 20}) ASSERT_TRUE(m.Save(Sample(s)).ok());
  std::vector<std::string> files = m.List();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_NE(files[0].find("ckpt-00000000000000000015.bin"), std::string::npos);
  EXPECT_NE(files[1].find("ckpt-00000000000000000020.bin"), std::string::npos);
  DIR* d = opendir(dir.c_str());
  int entries = 0;
  while (dirent* e = readdir(d)) entries += e->d_name[0] != '.';
  closedir(d);
  EXPECT_EQ(entries, 2);
  absl::StatusOr<Checkpoint> latest = m.LoadLatest(nullptr);
  ASSERT_TRUE(latest.ok());
  ExpectEqual(*latest, Sample(20));
}

TEST(CheckpointTest, CorruptOrTornNewestFallsBackToPrevious) {
  const TempDir tmp;
  const std::string dir = tmp.path();
  CheckpointManager m(dir, 3);
  for (uint64_t s : {1, 2, 3}) ASSERT_TRUE(m.Save(Sample(s)).ok());
  std::vector<std::string> files = m.List();
  // Newest: torn (half written); second newest: one bit flipped.
  const std::string newest = ReadText(files[2]);
  WriteText(files[2], newest.substr(0, newest.size() / 2));
  std::string mid = ReadText(files[1]);
  mid[mid.size() - 3] ^= 1;
  WriteText(files[1], mid);
  std::vector<std::string> skipped;
  absl::StatusOr<Checkpoint> c = m.LoadLatest(&skipped);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->step, 1u);
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_NE(skipped[0].find("truncated"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[1].find("checksum"), std::string::npos) << skipped[1];
  // With every file bad there is nothing to resume.
  WriteText(files[0], "garbage");
  EXPECT_EQ(m.LoadLatest(nullptr).status().code(), absl::StatusCode::kNotFound);
}

TEST(CheckpointTest, EmptyDirectoryHasNoCheckpoint) {
  const TempDir tmp;
  CheckpointManager m(tmp.path() + "/missing", 3);
  EXPECT_TRUE(m.List().empty());
  EXPECT_EQ(m.LoadLatest(nullptr).status().code(), absl::StatusCode::kNotFound);
}

TEST(CheckpointTest, WriteFileAtomicallyReplacesContent) {
  const TempDir tmp;
  const std::string p = tmp.path() + "/f.txt";
  ASSERT_TRUE(WriteFileAtomically(p, "one").ok());
  ASSERT_TRUE(WriteFileAtomically(p, "two").ok());
  EXPECT_EQ(ReadText(p), "two");
}

}  // namespace
}  // namespace cairn::trainer
