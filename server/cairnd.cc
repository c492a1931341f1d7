// Assembles and runs the server components.
#include "server/cairnd.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server_builder.h"
#include "spdlog/spdlog.h"

namespace cairn {

absl::StatusOr<std::unique_ptr<Cairnd>> Cairnd::Start(
    const CairndOptions& options) {
  std::unique_ptr<Cairnd> d(new Cairnd());
  std::error_code ec;
  const std::filesystem::path store_path =
      std::filesystem::path(options.data_dir) / "store";
  std::filesystem::create_directories(store_path, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("--data-dir: cannot create '", store_path.string(),
                     "': ", ec.message()));
  }
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(StoreOptions(), store_path.string());
  if (!store.ok()) return store.status();
  d->store_ = std::move(*store);
  absl::StatusOr<std::unique_ptr<StudyManager>> manager =
      StudyManager::Open(d->store_.get(), StudyManagerOptions());
  if (!manager.ok()) return manager.status();
  d->manager_ = std::move(*manager);
  d->service_ = std::make_unique<StudyServiceImpl>(d->manager_.get());

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(),
                           &d->port_);
  builder.RegisterService(d->service_.get());
  builder.SetMaxReceiveMessageSize(64 << 20);
  d->server_ = builder.BuildAndStart();
  if (d->server_ == nullptr || d->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("--listen: cannot listen on '", options.listen,
                     "' (address in use or invalid)"));
  }
  if (!options.port_file.empty()) {
    const std::string tmp = options.port_file + ".tmp";
    {
      std::ofstream out(tmp);
      out << d->port_ << "\n";
    }
    std::filesystem::rename(tmp, options.port_file, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          absl::StrCat("--port-file: cannot write '", options.port_file, "'"));
    }
  }
  spdlog::info(
      "cairnd {} started: store {} holds {} studies and {} trials; "
      "serving on port {}",
      CAIRN_VERSION, std::filesystem::absolute(store_path).string(),
      d->manager_->num_studies(), d->manager_->num_trials(), d->port_);
  return d;
}

Cairnd::~Cairnd() {
  if (server_ != nullptr) {
    Shutdown();
    server_->Wait();
  }
}

void Cairnd::Wait() { server_->Wait(); }

void Cairnd::Shutdown() {
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

}  // namespace cairn
