// CSV reading, label selection, bad inputs, split and normalization.
#include "trainer/data.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <set>

#include "tests/testing/test_util.h"
#include "tests/trainer/test_util.h"

namespace cairn::trainer {
namespace {

using ::cairn::testing::TempDir;
using ::cairn::trainer::testing::WriteText;

class CsvTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    WriteText(path, text);
    return path;
  }
  const TempDir tmp_;
  std::string dir_ = tmp_.path();
};

TEST_F(CsvTest, HeaderDetectedAndLabelByName) {
  const std::string p = Write("a.csv", "a, b ,kind,c\n1,2,x,3\n4,5,y,6\r\n\n");
  absl::StatusOr<CsvData> d = ReadCsv(p, LabelFlagResolver("kind"));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->rows, 2u);
  EXPECT_EQ(d->label_column, 2);
  EXPECT_EQ(d->label_name, "kind");
  EXPECT_EQ(d->feature_names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(d->features, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(d->labels, (std::vector<std::string>{"x", "y"}));
}

TEST_F(CsvTest, NoHeaderDefaultsToLastColumnAndIndexWorks) {
  const std::string p = Write("b.csv", "1,2,0\n3,4,1\n5,6,1\n");
  absl::StatusOr<CsvData> d = ReadCsv(p, LabelFlagResolver(""));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->header.empty());
  EXPECT_EQ(d->rows, 3u);
  EXPECT_EQ(d->label_column, 2);
  EXPECT_EQ(d->feature_names, (std::vector<std::string>{"f0", "f1"}));
  absl::StatusOr<CsvData> first = ReadCsv(p, LabelFlagResolver("0"));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->labels, (std::vector<std::string>{"1", "3", "5"}));
  EXPECT_EQ(first->features, (std::vector<float>{2, 0, 4, 1, 6, 1}));
  absl::StatusOr<CsvData> neg = ReadCsv(p, LabelFlagResolver("-2"));
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ(neg->label_column, 1);
}

TEST_F(CsvTest, StringLabelsWithoutHeaderAreNotAHeader) {
  const std::string p = Write("c.csv", "1,2,cat\n3,4,dog\n");
  absl::StatusOr<CsvData> d = ReadCsv(p, LabelFlagResolver(""));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->rows, 2u);
  EXPECT_EQ(d->labels, (std::vector<std::string>{"cat", "dog"}));
}

TEST_F(CsvTest, ReadsGzip) {
  const std::string p = dir_ + "/d.csv.gz";
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  const std::string text = "x,y\n0.5,1\n1.5,0\n";
  gzwrite(f, text.data(), text.size());
  gzclose(f);
  absl::StatusOr<CsvData> d = ReadCsv(p, LabelFlagResolver("y"));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->features, (std::vector<float>{0.5f, 1.5f}));
}

struct BadCase {
  const char* name;
  const char* text;
  const char* label;
  const char* expect;  // Substring of the error.
};

class BadCsvTest : public CsvTest,
                   public ::testing::WithParamInterface<BadCase> {};

TEST_P(BadCsvTest, GivesOneClearError) {
  const std::string p = Write("bad.csv", GetParam().text);
  absl::StatusOr<CsvData> d = ReadCsv(p, LabelFlagResolver(GetParam().label));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(d.status().message());
  EXPECT_NE(msg.find(GetParam().expect), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad.csv"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    All, BadCsvTest,
    ::testing::Values(
        BadCase{"empty", "", "", "empty file"},
        BadCase{"blank", "\n\n  \n", "", "empty file"},
        BadCase{"header_only", "a,b,label\n", "", "no data rows"},
        BadCase{"missing_label", "a,b,c\n1,2,3\n", "target",
                "label column 'target' not found in header (columns: a, b, c)"},
        BadCase{"name_without_header", "1,2,3\n4,5,6\n", "target", "no header"},
        BadCase{"index_out_of_range", "1,2,3\n4,5,6\n", "7", "out of range"},
        BadCase{"non_numeric", "a,b,y\n1,2,0\n3,oops,1\n", "",
                ":3: column 2 ('b'): non-numeric value 'oops'"},
        BadCase{"empty_cell", "1,2,0\n3,,1\n", "",
                ":2: column 2 ('f1'): non-numeric value ''"},
        BadCase{"ragged", "a,b,y\n1,2,0\n1,2\n", "",
                ":3: expected 3 columns (as on line 1), found 2"},
        BadCase{"nan", "1,2,0\nnan,2,1\n", "", "non-numeric value 'nan'"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(CsvTest, MissingFileIsNotFound) {
  absl::StatusOr<CsvData> d =
      ReadCsv(dir_ + "/nope.csv", LabelFlagResolver(""));
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
}

TEST(DataTest, SortedClassesNumericOrder) {
  EXPECT_EQ(SortedClasses({"10", "2", "1", "2"}),
            (std::vector<std::string>{"1", "2", "10"}));
  EXPECT_EQ(SortedClasses({"b", "a", "c", "a"}),
            (std::vector<std::string>{"a", "b", "c"}));
}

TEST(DataTest, PermutationIsSeededAndComplete) {
  std::vector<uint32_t> a = SeededPermutation(1000, 7),
                        b = SeededPermutation(1000, 7);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, SeededPermutation(1000, 8));
  std::set<uint32_t> s(a.begin(), a.end());
  EXPECT_EQ(s.size(), 1000u);
  EXPECT_EQ(*s.rbegin(), 999u);
  EXPECT_NE(EpochOrder(100, 1, 0), EpochOrder(100, 1, 1));
}

TEST(DataTest, SplitIsSeededDisjointAndSized) {
  std::vector<uint32_t> tr, va, tr2, va2;
  SplitRows(100, 0.25, 3, &tr, &va);
  SplitRows(100, 0.25, 3, &tr2, &va2);
  EXPECT_EQ(tr, tr2);
  EXPECT_EQ(va, va2);
  EXPECT_EQ(tr.size(), 75u);
  EXPECT_EQ(va.size(), 25u);
  std::vector<uint32_t> all = tr;
  all.insert(all.end(), va.begin(), va.end());
  std::sort(all.begin(), all.end());
  for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(all[i], i);
  SplitRows(3, 0.01, 3, &tr, &va);
  EXPECT_EQ(va.size(), 1u);
}

TEST(DataTest, NormalizationUsesMeanAndStd) {
  std::vector<float> x = {1, 5, 3, 5, 5, 5};  // 3 rows, 2 cols; col 1 constant.
  std::vector<float> mean, sd;
  ComputeNormalization(x, 3, 2, &mean, &sd);
  EXPECT_FLOAT_EQ(mean[0], 3);
  EXPECT_NEAR(sd[0], std::sqrt(8.0 / 3), 1e-6);
  EXPECT_FLOAT_EQ(mean[1], 5);
  EXPECT_FLOAT_EQ(sd[1], 1);
  Normalize(mean, sd, 3, &x);
  EXPECT_NEAR(x[0] + x[2] + x[4], 0, 1e-6);
  EXPECT_FLOAT_EQ(x[1], 0);
}

}  // namespace
}  // namespace cairn::trainer
