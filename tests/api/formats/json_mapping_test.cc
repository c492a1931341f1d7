// api::formats::AppendApiJson prints what util::MessageToJsonString prints with
// api::formats::ApiJsonPrintOptions: checked on every message type of the API,
// filled with random values of every kind (seeded, so a failure repeats).
#include "api/formats/json_mapping.h"

#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cairn/v1/admin_service.pb.h"
#include "cairn/v1/aiplatform.pb.h"
#include "cairn/v1/job_service.pb.h"
#include "cairn/v1/study.pb.h"
#include "cairn/v1/study_service.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cairn {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Strings that exercise the escaping: quotes, backslashes, HTML characters,
// control characters, and non-ASCII text (including U+2028).
const std::vector<std::string>& Strings() {
  static const auto* strings =
      new std::vector<std::string>{"",
                                   "lr",
                                   "a\"b\\c",
                                   "<script>&amp;</script>",
                                   "tab\there\nnl\r\x01\x1f",
                                   "\x7f",
                                   "caf\xc3\xa9",
                                   "line\xe2\x80\xa8sep",
                                   "\xe6\x97\xa5\xe6\x9c\xac",
                                   "studies/12/trials/7",
                                   "1e9"};
  return *strings;
}

class Filler {
 public:
  explicit Filler(uint32_t seed) : rng_(seed) {}

  void Fill(Message* m, int depth) {
    const Descriptor* d = m->GetDescriptor();
    if (d->full_name() == "google.protobuf.Timestamp") return Time(m, false);
    if (d->full_name() == "google.protobuf.Duration") return Time(m, true);
    if (d->full_name() == "google.protobuf.Any") return;  // Left empty.
    if (d->full_name() == "google.protobuf.Value") return JsonValue(m, depth);
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      if (f->containing_oneof() != nullptr && Coin(2)) continue;
      if (f->is_repeated()) {
        const int n = Pick(f->is_map() ? 3 : 4);
        for (int k = 0; k < n; ++k) Add(m, f, depth);
      } else if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
                 d->options().map_entry() || (depth < 4 && !Coin(4))) {
        Set(m, f, depth);
      }
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool Coin(int n) { return Pick(n) == 0; }

  int64_t Integer() {
    static const int64_t kValues[] = {0,
                                      1,
                                      -1,
                                      42,
                                      2147483647,
                                      -2147483647,
                                      9007199254740993LL,
                                      -5000000000LL};
    return kValues[Pick(8)];
  }

  double Floating() {
    static const double kValues[] = {0.0,
                                     0.1,
                                     -2.5,
                                     1e-300,
                                     3.0e21,
                                     123456789.125,
                                     1.0 / 3.0,
                                     1e100,
                                     std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity()};
    return kValues[Pick(10)];
  }

  int EnumNumber(const FieldDescriptor* f) {
    if (Coin(6)) return 977;  // A number the enum does not name.
    const auto* e = f->enum_type();
    return e->value(Pick(e->value_count()))->number();
  }

  std::string Text(const FieldDescriptor* f) {
    if (f->type() != FieldDescriptor::TYPE_BYTES) {
      return Strings()[Pick(Strings().size())];
    }
    std::string bytes(Pick(7), '\0');
    for (char& c : bytes) c = static_cast<char>(Pick(256));
    return bytes;
  }

  void Set(Message* m, const FieldDescriptor* f, int depth) {
    const Reflection* r = m->GetReflection();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        return r->SetInt32(m, f, static_cast<int32_t>(Integer()));
      case FieldDescriptor::CPPTYPE_UINT32:
        return r->SetUInt32(m, f, static_cast<uint32_t>(Integer()));
      case FieldDescriptor::CPPTYPE_INT64:
        return r->SetInt64(m, f, Integer());
      case FieldDescriptor::CPPTYPE_UINT64:
        return r->SetUInt64(m, f, static_cast<uint64_t>(Integer()));
      case FieldDescriptor::CPPTYPE_DOUBLE:
        return r->SetDouble(m, f, Floating());
      case FieldDescriptor::CPPTYPE_FLOAT:
        return r->SetFloat(m, f, static_cast<float>(Floating()));
      case FieldDescriptor::CPPTYPE_BOOL:
        return r->SetBool(m, f, Coin(2));
      case FieldDescriptor::CPPTYPE_ENUM:
        return r->SetEnumValue(m, f, EnumNumber(f));
      case FieldDescriptor::CPPTYPE_STRING:
        return r->SetString(m, f, Text(f));
      case FieldDescriptor::CPPTYPE_MESSAGE:
        return Fill(r->MutableMessage(m, f), depth + 1);
    }
  }

  void Add(Message* m, const FieldDescriptor* f, int depth) {
    const Reflection* r = m->GetReflection();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        return r->AddInt32(m, f, static_cast<int32_t>(Integer()));
      case FieldDescriptor::CPPTYPE_UINT32:
        return r->AddUInt32(m, f, static_cast<uint32_t>(Integer()));
      case FieldDescriptor::CPPTYPE_INT64:
        return r->AddInt64(m, f, Integer());
      case FieldDescriptor::CPPTYPE_UINT64:
        return r->AddUInt64(m, f, static_cast<uint64_t>(Integer()));
      case FieldDescriptor::CPPTYPE_DOUBLE:
        return r->AddDouble(m, f, Floating());
      case FieldDescriptor::CPPTYPE_FLOAT:
        return r->AddFloat(m, f, static_cast<float>(Floating()));
      case FieldDescriptor::CPPTYPE_BOOL:
        return r->AddBool(m, f, Coin(2));
      case FieldDescriptor::CPPTYPE_ENUM:
        return r->AddEnumValue(m, f, EnumNumber(f));
      case FieldDescriptor::CPPTYPE_STRING:
        return r->AddString(m, f, Text(f));
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (depth < 4) Fill(r->AddMessage(m, f), depth + 1);
        return;
    }
  }

  // Values within the JSON mapping's ranges.
  void Time(Message* m, bool duration) {
    const Reflection* r = m->GetReflection();
    const Descriptor* d = m->GetDescriptor();
    static const int64_t kSeconds[] = {0, 1, 1700000000, 253402300799, 59};
    static const int32_t kNanos[] = {0, 500000000, 1000, 7, 999999999};
    int64_t seconds = kSeconds[Pick(5)];
    int32_t nanos = kNanos[Pick(5)];
    if (duration && Coin(3)) {
      seconds = -seconds % 315576000000;
      nanos = seconds == 0 ? -nanos : (seconds < 0 ? -nanos : nanos);
    }
    r->SetInt64(m, d->FindFieldByName("seconds"), seconds);
    r->SetInt32(m, d->FindFieldByName("nanos"), nanos);
  }

  void JsonValue(Message* m, int depth) {
    const Reflection* r = m->GetReflection();
    const Descriptor* d = m->GetDescriptor();
    switch (Pick(depth < 4 ? 6 : 4)) {
      case 0:
        return r->SetEnumValue(m, d->FindFieldByName("null_value"), 0);
      case 1: {
        const double v = Floating();
        return r->SetDouble(m, d->FindFieldByName("number_value"),
                            std::isfinite(v) ? v : 0.5);
      }
      case 2:
        return r->SetString(m, d->FindFieldByName("string_value"),
                            Strings()[Pick(Strings().size())]);
      case 3:
        return r->SetBool(m, d->FindFieldByName("bool_value"), Coin(2));
      case 4:
        return Fill(r->MutableMessage(m, d->FindFieldByName("struct_value")),
                    depth + 1);
      default:
        return Fill(r->MutableMessage(m, d->FindFieldByName("list_value")),
                    depth + 1);
    }
  }

  std::mt19937 rng_;
};

std::vector<const Descriptor*> ApiMessages() {
  std::vector<const Descriptor*> out;
  const Descriptor* roots[] = {
      cairn::v1::Study::descriptor(),
      cairn::v1::CreateStudyRequest::descriptor(), cairn::v1::Job::descriptor(),
      cairn::v1::SubmitTrainingJobRequest::descriptor(),
      cairn::v1::CreateTokenRequest::descriptor()};
  std::function<void(const Descriptor*)> add = [&](const Descriptor* d) {
    if (d->options().map_entry()) return;
    out.push_back(d);
    for (int i = 0; i < d->nested_type_count(); ++i) add(d->nested_type(i));
  };
  for (const Descriptor* root : roots) {
    const auto* file = root->file();
    for (int i = 0; i < file->message_type_count(); ++i) {
      add(file->message_type(i));
    }
  }
  return out;
}

// util's printer: with api::formats::ApiJsonPrintOptions, or its default
// options (AI Platform's shape) when `defaults` is false.
std::string LibraryJson(const Message& m, bool defaults = true) {
  std::string out;
  auto options = api::formats::ApiJsonPrintOptions();
  options.always_print_primitive_fields = defaults;
  EXPECT_TRUE(
      google::protobuf::util::MessageToJsonString(m, &out, options).ok());
  return out;
}

// Both shapes: the API's (defaults printed) and AI Platform's.
TEST(JsonMappingTest, EveryApiMessageWithRandomValuesPrintsAsUtilDoes) {
  const auto messages = ApiMessages();
  ASSERT_GT(messages.size(), 40u);
  int compared = 0;
  for (const Descriptor* d : messages) {
    for (uint32_t seed = 0; seed < 40; ++seed) {
      std::unique_ptr<Message> m(
          google::protobuf::MessageFactory::generated_factory()
              ->GetPrototype(d)
              ->New());
      if (seed > 0) Filler(seed * 7919 + d->index()).Fill(m.get(), 0);
      for (const bool defaults : {true, false}) {
        const std::string expected = LibraryJson(*m, defaults);
        std::string got;
        ASSERT_TRUE((defaults ? api::formats::AppendApiJson(*m, &got)
                              : api::formats::AppendAiPlatformJson(*m, &got))
                        .ok())
            << d->full_name();
        // Equal as JSON values (objects compare without order: map entries
        // come in hash order from util's printer).
        const auto parsed = nlohmann::json::parse(got, nullptr, false);
        ASSERT_FALSE(parsed.is_discarded()) << d->full_name() << ": " << got;
        ASSERT_EQ(parsed, nlohmann::json::parse(expected))
            << d->full_name() << " seed " << seed << " defaults " << defaults
            << "\n got: " << got << "\nwant: " << expected;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, static_cast<int>(messages.size()) * 40 * 2);
}

TEST(JsonMappingTest, SameTextForMessagesWithoutMaps) {
  cairn::v1::Trial trial;
  trial.set_name("studies/3/trials/12");
  trial.set_id(12);
  trial.set_state(cairn::v1::Trial::SUCCEEDED);
  auto* p = trial.add_parameters();
  p->set_parameter_id("lr");
  p->mutable_value()->set_number_value(0.001);
  auto* q = trial.add_parameters();
  q->set_parameter_id("opt");
  q->mutable_value()->set_string_value("<adam>");
  auto* metric = trial.mutable_final_measurement()->add_metrics();
  metric->set_metric_id("loss");
  metric->set_value(0.25);
  trial.mutable_start_time()->set_seconds(1700000000);
  trial.mutable_start_time()->set_nanos(120000000);
  std::string got;
  ASSERT_TRUE(api::formats::AppendApiJson(trial, &got).ok());
  EXPECT_EQ(got, LibraryJson(trial));
  EXPECT_NE(got.find("\"opt\",\"value\":\"\\u003cadam\\u003e\""),
            std::string::npos)
      << got;
}

TEST(JsonMappingTest, ValuesHoldingNothingAreLeftOutAsUtilDoes) {
  cairn::v1::Parameter empty;
  empty.set_parameter_id("x");
  empty.mutable_value();
  cairn::v1::Trial trial;
  *trial.add_parameters() = empty;
  auto* list = trial.add_parameters()->mutable_value()->mutable_list_value();
  list->add_values();
  list->add_values()->set_bool_value(true);
  auto* fields = trial.add_parameters()
                     ->mutable_value()
                     ->mutable_struct_value()
                     ->mutable_fields();
  (*fields)["nothing"];
  std::string got;
  ASSERT_TRUE(api::formats::AppendApiJson(trial, &got).ok());
  EXPECT_EQ(got, LibraryJson(trial));
  EXPECT_NE(got.find("{\"parameterId\":\"x\"}"), std::string::npos) << got;
}

TEST(JsonMappingTest, AppendsToWhatIsThere) {
  cairn::v1::Metric metric;
  metric.set_metric_id("acc");
  metric.set_value(1);
  std::string out = "[";
  ASSERT_TRUE(api::formats::AppendApiJson(metric, &out).ok());
  EXPECT_EQ(out, "[" + LibraryJson(metric));
}

}  // namespace
}  // namespace cairn
