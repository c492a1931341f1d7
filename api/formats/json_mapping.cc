#include "api/formats/json_mapping.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/stubs/strutil.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/protobuf/util/time_util.h"
#include "google/protobuf/wrappers.pb.h"

namespace cairn::api::formats {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// util's printer, for the parts printed here through it.
absl::Status AppendByLibrary(const Message& message, std::string* out,
                             bool defaults = true) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options = ApiJsonPrintOptions();
  options.always_print_primitive_fields = defaults;
  const auto status =
      google::protobuf::util::MessageToJsonString(message, &text, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot print ", message.GetDescriptor()->full_name(),
                     " as JSON: ", status.message().as_string()));
  }
  out->append(text);
  return absl::OkStatus();
}

bool IsPlainAscii(const std::string& s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x7f) return false;
  }
  return true;
}

// A JSON string as util's printer writes it: '"', '\\', '<', '>' and the
// control characters escaped. Other strings go through util's printer (it
// also escapes some invisible Unicode characters).
absl::Status AppendString(const std::string& s, std::string* out) {
  if (!IsPlainAscii(s)) {
    google::protobuf::StringValue value;
    value.set_value(s);
    return AppendByLibrary(value, out);
  }
  out->push_back('"');
  for (const char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '<':
        out->append("\\u003c");
        break;
      case '>':
        out->append("\\u003e");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(out, "\\u00", absl::Hex(c, absl::kZeroPad2));
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
  return absl::OkStatus();
}

template <typename T>
void AppendFloating(T value, std::string* out) {
  if (std::isnan(value)) {
    out->append("\"NaN\"");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else if constexpr (sizeof(T) == sizeof(float)) {
    out->append(google::protobuf::SimpleFtoa(value));
  } else {
    out->append(google::protobuf::SimpleDtoa(value));
  }
}

class Printer {
 public:
  // `defaults`: print fields at their default values too.
  Printer(std::string* out, bool defaults) : out_(out), defaults_(defaults) {}

  // Well-known types in their JSON forms, other messages as objects.
  absl::Status Print(const Message& m) {
    const Descriptor* d = m.GetDescriptor();
    switch (d->well_known_type()) {
      case Descriptor::WELLKNOWNTYPE_TIMESTAMP:
        return Time(m, /*duration=*/false);
      case Descriptor::WELLKNOWNTYPE_DURATION:
        return Time(m, /*duration=*/true);
      case Descriptor::WELLKNOWNTYPE_STRUCT:
        return Map(m, d->FindFieldByName("fields"));
      case Descriptor::WELLKNOWNTYPE_LISTVALUE:
        return Field(m, d->FindFieldByName("values"));
      case Descriptor::WELLKNOWNTYPE_VALUE:
        return JsonValue(m);
      case Descriptor::WELLKNOWNTYPE_ANY:
      case Descriptor::WELLKNOWNTYPE_FIELDMASK:
        return AppendByLibrary(m, out_, defaults_);
      case Descriptor::WELLKNOWNTYPE_UNSPECIFIED:
        return Object(m);  // Also google.protobuf.Empty: {}.
      default:
        return Value(m, d->field(0), -1);  // A wrapper: its value.
    }
  }

 private:
  // Fields in declaration order, except that set well-known-type fields
  // come last, in declaration order too (where util's printer puts them).
  absl::Status Object(const Message& message) {
    const Descriptor* d = message.GetDescriptor();
    const Reflection* r = message.GetReflection();
    out_->push_back('{');
    bool first = true;
    for (const bool well_known_pass : {false, true}) {
      for (int i = 0; i < d->field_count(); ++i) {
        const FieldDescriptor* f = d->field(i);
        if (IsWellKnownField(f) != well_known_pass) continue;
        if (f->is_repeated() ? !defaults_ && r->FieldSize(message, f) == 0
                             : (f->has_presence() || !defaults_) &&
                                   !r->HasField(message, f)) {
          continue;
        }
        if (!f->is_repeated() && Omitted(message, f, -1)) continue;
        if (!first) out_->push_back(',');
        first = false;
        absl::StrAppend(out_, "\"", f->json_name(), "\":");
        absl::Status s = Field(message, f);
        if (!s.ok()) return s;
      }
    }
    out_->push_back('}');
    return absl::OkStatus();
  }

  static bool IsWellKnownField(const FieldDescriptor* f) {
    return !f->is_repeated() &&
           f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
           f->message_type()->well_known_type() !=
               Descriptor::WELLKNOWNTYPE_UNSPECIFIED;
  }

  // A google.protobuf.Value holding nothing: util's printer leaves it out of
  // objects, lists and maps.
  static bool Omitted(const Message& m, const FieldDescriptor* f, int index) {
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
        f->message_type()->well_known_type() !=
            Descriptor::WELLKNOWNTYPE_VALUE) {
      return false;
    }
    const Reflection* r = m.GetReflection();
    const Message& value =
        index >= 0 ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f);
    return value.GetReflection()->GetOneofFieldDescriptor(
               value, f->message_type()->FindOneofByName("kind")) == nullptr;
  }

  absl::Status Field(const Message& message, const FieldDescriptor* f) {
    if (f->is_map()) return Map(message, f);
    if (!f->is_repeated()) return Value(message, f, -1);
    const int n = message.GetReflection()->FieldSize(message, f);
    out_->push_back('[');
    bool first = true;
    for (int i = 0; i < n; ++i) {
      if (Omitted(message, f, i)) continue;
      if (!first) out_->push_back(',');
      first = false;
      absl::Status s = Value(message, f, i);
      if (!s.ok()) return s;
    }
    out_->push_back(']');
    return absl::OkStatus();
  }

  absl::Status Map(const Message& message, const FieldDescriptor* f) {
    const Reflection* r = message.GetReflection();
    const int n = r->FieldSize(message, f);
    out_->push_back('{');
    bool first = true;
    for (int i = 0; i < n; ++i) {
      const Message& entry = r->GetRepeatedMessage(message, f, i);
      const FieldDescriptor* value = f->message_type()->map_value();
      if (Omitted(entry, value, -1)) continue;
      if (!first) out_->push_back(',');
      first = false;
      absl::Status s = MapKey(entry, f->message_type()->map_key());
      if (!s.ok()) return s;
      out_->push_back(':');
      s = Value(entry, value, -1);
      if (!s.ok()) return s;
    }
    out_->push_back('}');
    return absl::OkStatus();
  }

  // A map key: always a JSON string (numbers and booleans quoted).
  absl::Status MapKey(const Message& entry, const FieldDescriptor* key) {
    if (key->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      return Value(entry, key, -1);
    }
    std::string text;
    absl::Status s = Printer(&text, defaults_).Value(entry, key, -1);
    if (!s.ok()) return s;
    if (text.size() >= 2 && text.front() == '"') {
      text = text.substr(1, text.size() - 2);  // int64s are quoted already.
    }
    absl::StrAppend(out_, "\"", text, "\"");
    return absl::OkStatus();
  }

  // Field `f` of `m`: singular when index < 0, else element `index`.
  absl::Status Value(const Message& m, const FieldDescriptor* f, int index) {
    const Reflection* r = m.GetReflection();
    const bool rep = index >= 0;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        absl::StrAppend(
            out_, rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        absl::StrAppend(
            out_, rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        absl::StrAppend(
            out_, "\"",
            rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f), "\"");
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        absl::StrAppend(
            out_, "\"",
            rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f), "\"");
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        AppendFloating(
            rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f), out_);
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        AppendFloating(
            rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f), out_);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        out_->append((rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f))
                         ? "true"
                         : "false");
        break;
      case FieldDescriptor::CPPTYPE_ENUM:
        Enum(f, rep ? r->GetRepeatedEnumValue(m, f, index)
                    : r->GetEnumValue(m, f));
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        return Text(m, f, index);
      case FieldDescriptor::CPPTYPE_MESSAGE:
        return Print(rep ? r->GetRepeatedMessage(m, f, index)
                         : r->GetMessage(m, f));
    }
    return absl::OkStatus();
  }

  void Enum(const FieldDescriptor* f, int number) {
    if (f->enum_type()->full_name() == "google.protobuf.NullValue") {
      out_->append("null");
      return;
    }
    const EnumValueDescriptor* v = f->enum_type()->FindValueByNumber(number);
    if (v == nullptr) {
      absl::StrAppend(out_, number);
    } else {
      absl::StrAppend(out_, "\"", v->name(), "\"");
    }
  }

  absl::Status Text(const Message& m, const FieldDescriptor* f, int index) {
    const Reflection* r = m.GetReflection();
    std::string scratch;
    const std::string& s =
        index >= 0 ? r->GetRepeatedStringReference(m, f, index, &scratch)
                   : r->GetStringReference(m, f, &scratch);
    if (f->type() != FieldDescriptor::TYPE_BYTES) return AppendString(s, out_);
    std::string encoded;
    google::protobuf::Base64Escape(s, &encoded);
    absl::StrAppend(out_, "\"", encoded, "\"");
    return absl::OkStatus();
  }

  // Timestamp and Duration as RFC 3339 and "1.5s", within JSON's ranges.
  absl::Status Time(const Message& m, bool duration) {
    const Descriptor* d = m.GetDescriptor();
    const Reflection* r = m.GetReflection();
    const int64_t seconds = r->GetInt64(m, d->FindFieldByName("seconds"));
    const int32_t nanos = r->GetInt32(m, d->FindFieldByName("nanos"));
    namespace pb = google::protobuf;
    if (duration) {
      pb::Duration value;
      value.set_seconds(seconds);
      value.set_nanos(nanos);
      const bool valid = seconds >= pb::util::TimeUtil::kDurationMinSeconds &&
                         seconds <= pb::util::TimeUtil::kDurationMaxSeconds &&
                         nanos > -1000000000 && nanos < 1000000000 &&
                         !(seconds > 0 && nanos < 0) &&
                         !(seconds < 0 && nanos > 0);
      if (!valid) return AppendByLibrary(m, out_, defaults_);
      absl::StrAppend(out_, "\"", pb::util::TimeUtil::ToString(value), "\"");
      return absl::OkStatus();
    }
    pb::Timestamp value;
    value.set_seconds(seconds);
    value.set_nanos(nanos);
    const bool valid = seconds >= pb::util::TimeUtil::kTimestampMinSeconds &&
                       seconds <= pb::util::TimeUtil::kTimestampMaxSeconds &&
                       nanos >= 0 && nanos < 1000000000;
    if (!valid) return AppendByLibrary(m, out_, defaults_);
    absl::StrAppend(out_, "\"", pb::util::TimeUtil::ToString(value), "\"");
    return absl::OkStatus();
  }

  // google.protobuf.Value: the JSON value it holds.
  absl::Status JsonValue(const Message& m) {
    const Descriptor* d = m.GetDescriptor();
    const Reflection* r = m.GetReflection();
    const FieldDescriptor* kind =
        r->GetOneofFieldDescriptor(m, d->FindOneofByName("kind"));
    if (kind == nullptr) return absl::OkStatus();  // As util: nothing.
    if ((kind->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE &&
         !std::isfinite(r->GetDouble(m, kind)))) {
      return AppendByLibrary(m, out_,
                             defaults_);  // util's own choice (or error).
    }
    return Value(m, kind, -1);
  }

  std::string* out_;
  const bool defaults_;
};

}  // namespace

absl::Status AppendApiJson(const Message& message, std::string* out) {
  return Printer(out, /*defaults=*/true).Print(message);
}

absl::Status AppendAiPlatformJson(const Message& message, std::string* out) {
  return Printer(out, /*defaults=*/false).Print(message);
}

}  // namespace cairn::api::formats
