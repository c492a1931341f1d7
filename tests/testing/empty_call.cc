// A unary call through grpc::GenericStub with an empty request.
#include "tests/testing/empty_call.h"

#include <chrono>
#include <vector>

#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"

namespace cairn::testing {

grpc::Status CallWithEmptyRequest(const std::shared_ptr<grpc::Channel>& channel,
                                  const std::string& method,
                                  const std::string& token,
                                  std::string* response) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  grpc::Slice empty("", 0);
  grpc::ByteBuffer request(&empty, 1);
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&ctx, method, request, &cq);
  call->StartCall();
  grpc::ByteBuffer reply;
  grpc::Status status;
  call->Finish(&reply, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  if (!cq.Next(&tag, &ok)) {
    return grpc::Status(grpc::StatusCode::UNKNOWN, "no completion for call");
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  if (status.ok() && response != nullptr) {
    std::vector<grpc::Slice> slices;
    if (!reply.Dump(&slices).ok()) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "unreadable response");
    }
    response->clear();
    for (const grpc::Slice& s : slices) {
      response->append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
  }
  return status;
}

}  // namespace cairn::testing
