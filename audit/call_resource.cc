// See call_resource.h. Reads fields by name through protobuf reflection, so
// a new RPC whose messages follow the API's naming is covered without a
// table here.
#include "audit/call_resource.h"

#include <initializer_list>

#include "google/protobuf/descriptor.h"

namespace cairn::audit {
namespace {

// The first non-empty singular string field among `names`; "" if none.
std::string FirstStringField(const google::protobuf::Message& message,
                             std::initializer_list<const char*> names) {
  const google::protobuf::Descriptor* descriptor = message.GetDescriptor();
  const google::protobuf::Reflection* reflection = message.GetReflection();
  for (const char* name : names) {
    const google::protobuf::FieldDescriptor* field =
        descriptor->FindFieldByName(name);
    if (field == nullptr || field->is_repeated() ||
        field->cpp_type() !=
            google::protobuf::FieldDescriptor::CPPTYPE_STRING) {
      continue;
    }
    std::string value = reflection->GetString(message, field);
    if (!value.empty()) return value;
  }
  return "";
}

}  // namespace

std::string RequestResource(const google::protobuf::Message& request) {
  return FirstStringField(request,
                          {"name", "trial_name", "parent", "destination"});
}

std::string ResponseResource(const google::protobuf::Message& response) {
  return FirstStringField(response, {"name"});
}

}  // namespace cairn::audit
