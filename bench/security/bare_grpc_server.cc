// bare_grpc_server: the gRPC library alone, for bench/security/run.sh.
//
//   bare_grpc_server --port-file FILE [--tls-cert FILE --tls-key FILE]
//
// Serves cairn.v1.StudyService on a free 127.0.0.1 port (written to
// --port-file once listening), plaintext or, with --tls-cert/--tls-key, TLS
// with gRPC's own SslServerCredentials. Every GetStudy answers NOT_FOUND at
// once and every other method UNIMPLEMENTED: no store, no interceptors, no
// token check, none of Cairn's code on the call's path. Measured with the
// same client as cairnd (cairn_bench_core --figures empty_rpc), its
// plaintext vs TLS ratio is what gRPC and OpenSSL cost per call on this
// machine, the floor under cairnd's own TLS overhead. Runs until SIGTERM or
// SIGINT.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "CLI/CLI.hpp"
#include "cairn/v1/study_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace {

class NotFoundStudies final : public cairn::v1::StudyService::Service {
  grpc::Status GetStudy(grpc::ServerContext*, const cairn::v1::GetStudyRequest*,
                        cairn::v1::Study*) override {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such study");
  }
};

// The whole of `path`; exits with a message naming `flag` if unreadable.
std::string ReadOrDie(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  if (in) contents << in.rdbuf();
  if (!in || contents.str().empty()) {
    std::fprintf(stderr, "bare_grpc_server: %s: cannot read '%s'\n", flag,
                 path.c_str());
    std::exit(2);
  }
  return contents.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string port_file, cert, key;
  CLI::App app{"bare_grpc_server: gRPC alone, plaintext or TLS"};
  app.add_option("--port-file", port_file, "write the bound port here")
      ->required();
  app.add_option("--tls-cert", cert, "PEM certificate chain (TLS)");
  app.add_option("--tls-key", key, "PEM private key (TLS)");
  CLI11_PARSE(app, argc, argv);
  if (cert.empty() != key.empty()) {
    std::fprintf(stderr,
                 "bare_grpc_server: --tls-cert and --tls-key go "
                 "together\n");
    return 2;
  }
  std::shared_ptr<grpc::ServerCredentials> credentials =
      grpc::InsecureServerCredentials();
  if (!cert.empty()) {
    grpc::SslServerCredentialsOptions options;
    options.pem_key_cert_pairs.push_back(
        {ReadOrDie(key, "--tls-key"), ReadOrDie(cert, "--tls-cert")});
    credentials = grpc::SslServerCredentials(options);
  }
  // Blocked before gRPC starts its threads, so only sigwait() sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  NotFoundStudies service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", credentials, &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "bare_grpc_server: cannot listen on 127.0.0.1\n");
    return 1;
  }
  {
    std::ofstream out(port_file + ".tmp");
    out << port << "\n";
  }
  std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  int signal = 0;
  sigwait(&stop_signals, &signal);
  server->Shutdown();
  return 0;
}
