// Server reflection from the generated descriptor pool, behind `viewer`.
#include "server/reflection_service.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "server/authorize_call.h"
#include "server/status_util.h"

namespace cairn {

namespace {

namespace rv = grpc::reflection::v1alpha;
using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;

constexpr char kMethod[] =
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

// Adds `file` and, first, every file it imports (each once) to `out`.
void AddFileWithImports(const FileDescriptor* file,
                        std::set<std::string>& added,
                        rv::FileDescriptorResponse* out) {
  if (!added.insert(file->name()).second) return;
  for (int i = 0; i < file->dependency_count(); ++i) {
    AddFileWithImports(file->dependency(i), added, out);
  }
  google::protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  out->add_file_descriptor_proto(proto.SerializeAsString());
}

void SetNotFound(const std::string& what, rv::ServerReflectionResponse* out) {
  out->mutable_error_response()->set_error_code(
      static_cast<int>(grpc::StatusCode::NOT_FOUND));
  out->mutable_error_response()->set_error_message(
      absl::StrCat(what, " not found"));
}

// The file `request` asks for; nullptr (and `*what` set) if unknown.
const FileDescriptor* RequestedFile(const rv::ServerReflectionRequest& request,
                                    std::string* what) {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  switch (request.message_request_case()) {
    case rv::ServerReflectionRequest::kFileByFilename:
      *what = absl::StrCat("file ", request.file_by_filename());
      return pool->FindFileByName(request.file_by_filename());
    case rv::ServerReflectionRequest::kFileContainingSymbol:
      *what = absl::StrCat("symbol ", request.file_containing_symbol());
      return pool->FindFileContainingSymbol(request.file_containing_symbol());
    default: {
      const auto& ext = request.file_containing_extension();
      *what = absl::StrCat("extension ", ext.extension_number(), " of ",
                           ext.containing_type());
      const auto* type = pool->FindMessageTypeByName(ext.containing_type());
      if (type == nullptr) return nullptr;
      const auto* field =
          pool->FindExtensionByNumber(type, ext.extension_number());
      return field == nullptr ? nullptr : field->file();
    }
  }
}

}  // namespace

rv::ServerReflectionResponse ReflectionService::Answer(
    const rv::ServerReflectionRequest& request) const {
  rv::ServerReflectionResponse out;
  out.set_valid_host(request.host());
  *out.mutable_original_request() = request;
  switch (request.message_request_case()) {
    case rv::ServerReflectionRequest::kListServices:
      for (const std::string& name : services_) {
        out.mutable_list_services_response()->add_service()->set_name(name);
      }
      return out;
    case rv::ServerReflectionRequest::kAllExtensionNumbersOfType: {
      const DescriptorPool* pool = DescriptorPool::generated_pool();
      const auto* type =
          pool->FindMessageTypeByName(request.all_extension_numbers_of_type());
      if (type == nullptr) {
        SetNotFound(
            absl::StrCat("type ", request.all_extension_numbers_of_type()),
            &out);
        return out;
      }
      std::vector<const google::protobuf::FieldDescriptor*> extensions;
      pool->FindAllExtensions(type, &extensions);
      auto* numbers = out.mutable_all_extension_numbers_response();
      numbers->set_base_type_name(type->full_name());
      for (const auto* e : extensions)
        numbers->add_extension_number(e->number());
      return out;
    }
    case rv::ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET:
      out.mutable_error_response()->set_error_code(
          static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
      out.mutable_error_response()->set_error_message(
          "message_request: none set");
      return out;
    default:
      break;
  }
  std::string what;
  const FileDescriptor* file = RequestedFile(request, &what);
  if (file == nullptr) {
    SetNotFound(what, &out);
    return out;
  }
  std::set<std::string> added;
  AddFileWithImports(file, added, out.mutable_file_descriptor_response());
  return out;
}

grpc::Status ReflectionService::ServerReflectionInfo(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<rv::ServerReflectionResponse,
                             rv::ServerReflectionRequest>* stream) {
  absl::StatusOr<auth::Principal> caller =
      AuthorizeCall(authorizer_, context, kMethod, "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  rv::ServerReflectionRequest request;
  while (stream->Read(&request)) {
    if (!stream->Write(Answer(request))) break;
  }
  return grpc::Status::OK;
}

}  // namespace cairn
