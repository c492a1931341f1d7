// TLS on a real cairnd on loopback, with certificates this test makes with
// the openssl command line: TLS with and without the CA, plaintext clients,
// mTLS (no certificate, the right CA, another CA), certificate rotation
// while cairnd runs, the plaintext jobs port, the non-loopback --listen
// rule (--tls-cert, --insecure), and the web UI and REST API served over
// HTTPS only with the same files (curl as the client).
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "auth/client_tls.h"
#include "auth/client_token.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/jobs/study_fixture.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

namespace v1 = cairn::v1;
using testing::CairndProcess;
using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

// Certificates made with `openssl` in a directory: NAME.crt and NAME.key.
class Pki {
 public:
  explicit Pki(std::string dir) : dir_(std::move(dir)) {}

  std::string Crt(const std::string& name) const {
    return dir_ + "/" + name + ".crt";
  }
  std::string Key(const std::string& name) const {
    return dir_ + "/" + name + ".key";
  }

  // A self-signed CA named `name`.
  void MakeCa(const std::string& name) {
    Run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:P-256", "-nodes", "-keyout", Key(name), "-out",
         Crt(name), "-days", "2", "-subj", "/CN=" + name});
  }

  // A certificate for `name` signed by the CA `ca`, with subjectAltName
  // `san` (e.g. "IP:127.0.0.1,DNS:localhost").
  void MakeLeaf(const std::string& name, const std::string& ca,
                const std::string& san) {
    const std::string csr = dir_ + "/" + name + ".csr";
    const std::string ext = dir_ + "/" + name + ".ext";
    std::ofstream(ext) << "subjectAltName=" << san << "\n";
    Run({"openssl", "req", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:P-256", "-nodes", "-keyout", Key(name), "-out", csr,
         "-subj", "/CN=" + name});
    Run({"openssl", "x509", "-req", "-in", csr, "-CA", Crt(ca), "-CAkey",
         Key(ca), "-CAcreateserial", "-out", Crt(name), "-days", "2",
         "-extfile", ext});
  }

 private:
  static void Run(const std::vector<std::string>& argv) {
    const CommandResult r = RunCommand(argv);
    ASSERT_EQ(r.exit_code, 0) << argv[1] << ": " << r.err;
  }

  std::string dir_;
};

// A client that trusts the CA in `ca`.
auth::ClientTlsFiles Trust(const std::string& ca) {
  auth::ClientTlsFiles files;
  files.ca = ca;
  return files;
}

// The same, presenting the client certificate `cert` with its `key`.
auth::ClientTlsFiles Present(const std::string& ca, const std::string& cert,
                             const std::string& key) {
  auth::ClientTlsFiles files = Trust(ca);
  files.cert = cert;
  files.key = key;
  return files;
}

class TlsTest : public ::testing::Test {
 protected:
  // The certificates, made once for the suite; each test gets a copy.
  static void SetUpTestSuite() {
    shared_ = new TempDir();
    Pki pki(shared_->path());
    pki.MakeCa("ca");
    pki.MakeLeaf("server", "ca", "IP:127.0.0.1,DNS:localhost");
    pki.MakeLeaf("client", "ca", "DNS:client");
    pki.MakeCa("other");
    pki.MakeLeaf("intruder", "other", "DNS:intruder");
  }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }
  void SetUp() override {
    std::filesystem::copy(shared_->path(), pki_dir_,
                          std::filesystem::copy_options::recursive);
  }

  // Starts cairnd serving pki's "server" certificate, plus `extra` flags.
  void StartServer(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--tls-cert", pki_.Crt("server"),
                                     "--tls-key", pki_.Key("server")};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = std::make_unique<CairndProcess>(tmp_.path() + "/data", args);
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
  }

  // A StudyService stub on a fresh connection with `files` (plaintext when
  // none), as the admin; null (and a failure) when `files` do not load.
  std::unique_ptr<v1::StudyService::Stub> Stub(
      const auth::ClientTlsFiles& files, const std::string& host) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        auth::NewClientChannelCredentials(files);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    if (!credentials.ok()) return nullptr;
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return v1::StudyService::NewStub(
        auth::NewAuthChannel(absl::StrCat(host, ":", server_->port()),
                             server_->token(), *credentials, args));
  }

  // ListStudies over a fresh connection with `files` (plaintext when none).
  grpc::Status List(const auth::ClientTlsFiles& files,
                    const std::string& host = "127.0.0.1") {
    auto stub = Stub(files, host);
    if (stub == nullptr) return grpc::Status(grpc::StatusCode::INTERNAL, "");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(5));
    v1::ListStudiesResponse response;
    return stub->ListStudies(&context, v1::ListStudiesRequest(), &response);
  }

  static TempDir* shared_;
  TempDir tmp_;
  std::string pki_dir_ = tmp_.path() + "/pki";
  Pki pki_{pki_dir_};
  std::unique_ptr<CairndProcess> server_;
};

TempDir* TlsTest::shared_ = nullptr;

TEST_F(TlsTest, ServesTlsToClientsThatTrustTheCa) {
  StartServer();
  EXPECT_TRUE(List(Trust(pki_.Crt("ca"))).ok());
  EXPECT_TRUE(List(Trust(pki_.Crt("ca")), "localhost").ok());
  // Another CA, and plaintext, fail to connect.
  EXPECT_EQ(List(Trust(pki_.Crt("other"))).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(List({}).error_code(), grpc::StatusCode::UNAVAILABLE);
  // The token is still checked over TLS.
  server_->set_token("cairn_0000");
  EXPECT_EQ(List(Trust(pki_.Crt("ca"))).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(TlsTest, CliTakesTlsFlagsAndEnvironment) {
  StartServer();
  const std::string cairn = testing::BinDir() + "/cairn";
  const std::string server = server_->address();
  CommandResult r = RunCommand(
      {cairn, "--server", server, "--tls-ca", pki_.Crt("ca"), "study", "list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunCommand({cairn, "--server", server, "study", "list"},
                 {"CAIRN_TLS_CA=" + pki_.Crt("ca")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Plaintext against TLS: an error that points at the flag.
  r = RunCommand(
      {cairn, "--server", server, "--timeout", "5", "study", "list"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "--tls-ca")) << r.err;
  r = RunCommand({cairn, "--server", server, "--tls-ca", tmp_.path() + "/none",
                  "study", "list"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "--tls-ca: cannot read")) << r.err;
  r = RunCommand({cairn, "--server", server, "--tls-ca", pki_.Crt("ca"),
                  "--tls-cert", pki_.Crt("client"), "study", "list"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "--tls-cert needs --tls-key")) << r.err;
}

TEST_F(TlsTest, JobsReachCairndOnAPlaintextLoopbackPort) {
  StartServer();
  std::smatch m;
  const std::string log = server_->Log();
  ASSERT_TRUE(std::regex_search(
      log, m, std::regex("training jobs use plaintext 127.0.0.1:([0-9]+)")))
      << log;
  auto stub = v1::StudyService::NewStub(auth::NewAuthChannel(
      absl::StrCat("127.0.0.1:", m[1].str()), server_->token()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  v1::ListStudiesResponse response;
  EXPECT_TRUE(
      stub->ListStudies(&context, v1::ListStudiesRequest(), &response).ok());
}

// --job-server and --job-tls-ca: jobs on other machines reach cairnd at its
// TLS port (HOST alone takes --listen's port; 127.0.0.1 is in the
// certificate, and a name would make the job's CLI resolve it through
// c-ares, whose leak the job's clean environment does not suppress under
// ASan), verifying it with the CA they are given; the job reports through
// the CLI, which fails on a TLS port without that CA.
TEST_F(TlsTest, JobsReachCairndAtJobServerOverTls) {
  TempDir shared;  // Where the job user (nobody under root) can read the CA.
  ASSERT_EQ(chmod(shared.path().c_str(), 0755), 0);
  const std::string ca = shared.path() + "/ca.crt";
  std::filesystem::copy_file(pki_.Crt("ca"), ca);
  ASSERT_EQ(chmod(ca.c_str(), 0644), 0);
  StartServer({"--job-server", "127.0.0.1", "--job-tls-ca", ca});
  EXPECT_TRUE(absl::StrContains(
      server_->Log(), absl::StrCat("training jobs reach cairnd at 127.0.0.1:",
                                   server_->port(), ", CA ", ca)))
      << server_->Log();
  auto stub = Stub(Trust(pki_.Crt("ca")), "127.0.0.1");
  ASSERT_NE(stub, nullptr);
  v1::CreateStudyRequest create;
  create.mutable_study()->set_display_name("remote-jobs");
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        parameters { parameter_id: "x" type: INTEGER min_value: 1 max_value: 9 }
        metrics { metric_id: "loss" goal: MINIMIZE }
        algorithm: RANDOM_SEARCH
        max_trials: 1
      )pb",
      create.mutable_study()->mutable_spec()));
  auto* job = create.mutable_study()->mutable_spec()->mutable_job_template();
  job->add_command(testing::SourceDir() + "/tests/jobs/cli_reporter.sh");
  (*job->mutable_env())["TOY_BIN_DIR"] = testing::BinDir();
  v1::Study study;
  {
    grpc::ClientContext context;
    grpc::Status s = stub->CreateStudy(&context, create, &study);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  v1::Trial trial;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    grpc::ClientContext context;
    v1::ListTrialsRequest request;
    request.set_parent(study.name());
    v1::ListTrialsResponse response;
    ASSERT_TRUE(stub->ListTrials(&context, request, &response).ok());
    if (response.trials_size() == 1) trial = response.trials(0);
    if (trial.state() == v1::Trial::SUCCEEDED ||
        trial.state() == v1::Trial::FAILED) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(trial.state(), v1::Trial::SUCCEEDED) << trial.ShortDebugString();
  // Its last report (step 4) became the final measurement.
  EXPECT_EQ(trial.final_measurement().step_count(), 4)
      << trial.ShortDebugString();
}

TEST_F(TlsTest, MutualTlsNeedsAClientCertificateFromTheClientCa) {
  StartServer({"--tls-client-ca", pki_.Crt("ca")});
  EXPECT_EQ(List(Trust(pki_.Crt("ca"))).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(
      List(Present(pki_.Crt("ca"), pki_.Crt("client"), pki_.Key("client")))
          .ok());
  EXPECT_EQ(
      List(Present(pki_.Crt("ca"), pki_.Crt("intruder"), pki_.Key("intruder")))
          .error_code(),
      grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, RotatedCertificatesAreServedWithoutRestart) {
  StartServer({"--tls-refresh-seconds", "1"});
  pki_.MakeCa("ca2");
  pki_.MakeLeaf("server2", "ca2", "IP:127.0.0.1,DNS:localhost");
  ASSERT_EQ(List(Trust(pki_.Crt("ca2"))).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // Replace both files by rename, the key first (as an operator would).
  std::filesystem::copy_file(pki_.Key("server2"), pki_.Key("server") + ".new");
  std::filesystem::copy_file(pki_.Crt("server2"), pki_.Crt("server") + ".new");
  std::filesystem::rename(pki_.Key("server") + ".new", pki_.Key("server"));
  std::filesystem::rename(pki_.Crt("server") + ".new", pki_.Crt("server"));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  grpc::Status status;
  while (std::chrono::steady_clock::now() < deadline) {
    status = List(Trust(pki_.Crt("ca2")));
    if (status.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(List(Trust(pki_.Crt("ca"))).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

// `curl` against cairnd's HTTP port with `args` (URL path last); the
// output is the body, a newline and the HTTP status ("000" when no HTTP
// response came).
CommandResult Curl(int port, const std::string& scheme, const std::string& path,
                   std::vector<std::string> args) {
  std::vector<std::string> argv = {"curl", "-sS", "--max-time",
                                   "5",    "-w",  "\n%{http_code}"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(absl::StrCat(scheme, "://127.0.0.1:", port, path));
  return RunCommand(argv);
}

// The HTTP port cairnd logged.
int HttpPort(const CairndProcess& server) {
  std::smatch m;
  const std::string log = server.Log();
  if (!std::regex_search(log, m,
                         std::regex("web UI and REST API on (https?)://"
                                    "[^ ]+ \\(port ([0-9]+)\\)"))) {
    ADD_FAILURE() << "no HTTP port in the log: " << log;
    return 0;
  }
  EXPECT_EQ(m[1].str(), "https");
  return std::stoi(m[2].str());
}

TEST_F(TlsTest, WebUiAndRestServeHttpsOnlyWithTheSameFiles) {
  StartServer();
  const int port = HttpPort(*server_);
  const std::string auth = "Authorization: Bearer " + server_->token();
  CommandResult r = Curl(port, "https", "/v1/studies",
                         {"--cacert", pki_.Crt("ca"), "-H", auth});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::EndsWith(r.out, "\n200")) << r.out;
  // Tokens are checked as over gRPC.
  r = Curl(port, "https", "/v1/studies", {"--cacert", pki_.Crt("ca")});
  EXPECT_TRUE(absl::EndsWith(r.out, "\n401")) << r.out;
  // The UI itself.
  r = Curl(port, "https", "/", {"--cacert", pki_.Crt("ca")});
  EXPECT_TRUE(absl::EndsWith(r.out, "\n200")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "<html")) << r.out;
  // AI Platform's discovery document (no token) sends clients back over
  // HTTPS to the address they reached.
  r = Curl(port, "https", "/discovery/v1/apis/ml/v1/rest",
           {"--cacert", pki_.Crt("ca")});
  EXPECT_TRUE(absl::EndsWith(r.out, "\n200")) << r.out;
  EXPECT_TRUE(absl::StrContains(
      r.out, absl::StrCat("\"rootUrl\":\"https://127.0.0.1:", port, "/\"")))
      << r.out.substr(0, 300);
  // Never compressed (cpp-httplib would brotli-compress for browsers, at a
  // cost of seconds for large studies).
  r = Curl(port, "https", "/v1/studies",
           {"--cacert", pki_.Crt("ca"), "-H", auth, "-H",
            "Accept-Encoding: gzip, deflate, br", "-D", "-"});
  EXPECT_TRUE(absl::EndsWith(r.out, "\n200")) << r.out;
  EXPECT_FALSE(
      absl::StrContains(absl::AsciiStrToLower(r.out), "content-encoding"))
      << r.out;
  // Bodies over 4 MB: 413 with the REST error shape.
  const std::string big = tmp_.path() + "/big.json";
  std::ofstream(big) << std::string(size_t{5} << 20, ' ');
  r = Curl(
      port, "https", "/v1/studies",
      {"--cacert", pki_.Crt("ca"), "-H", auth, "--data-binary", "@" + big});
  EXPECT_TRUE(absl::EndsWith(r.out, "\n413")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\"status\":\"RESOURCE_EXHAUSTED\""))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\"code\":413")) << r.out;
  // Another CA does not verify; plaintext gets no HTTP answer.
  r = Curl(port, "https", "/v1/studies", {"--cacert", pki_.Crt("other")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::EndsWith(r.out, "000")) << r.out;
  r = Curl(port, "http", "/v1/studies", {"-H", auth});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::EndsWith(r.out, "000")) << r.out;
}

TEST_F(TlsTest, HttpsNeedsTheClientCertificateAndFollowsRotation) {
  const std::string client_ca = tmp_.path() + "/client-ca.pem";
  std::filesystem::copy_file(pki_.Crt("ca"), client_ca);
  StartServer({"--tls-client-ca", client_ca});
  const int port = HttpPort(*server_);
  const std::string auth = "Authorization: Bearer " + server_->token();
  const std::vector<std::string> client = {
      "--cert", pki_.Crt("client"), "--key", pki_.Key("client"), "-H", auth};
  auto with = [&](const std::string& ca, std::vector<std::string> more) {
    more.insert(more.begin(), {"--cacert", ca});
    return Curl(port, "https", "/v1/studies", more);
  };
  EXPECT_TRUE(absl::EndsWith(with(pki_.Crt("ca"), client).out, "\n200"));
  // No client certificate, or one from another CA: no HTTP answer.
  EXPECT_TRUE(absl::EndsWith(with(pki_.Crt("ca"), {"-H", auth}).out, "000"));
  EXPECT_TRUE(absl::EndsWith(
      with(pki_.Crt("ca"), {"--cert", pki_.Crt("intruder"), "--key",
                            pki_.Key("intruder"), "-H", auth})
          .out,
      "000"));
  // Rotate the server certificate to one from ca2: the next connection
  // gets it, without a restart.
  pki_.MakeCa("ca2");
  pki_.MakeLeaf("server2", "ca2", "IP:127.0.0.1,DNS:localhost");
  std::filesystem::copy_file(pki_.Key("server2"), pki_.Key("server") + ".new");
  std::filesystem::copy_file(pki_.Crt("server2"), pki_.Crt("server") + ".new");
  std::filesystem::rename(pki_.Key("server") + ".new", pki_.Key("server"));
  std::filesystem::rename(pki_.Crt("server") + ".new", pki_.Crt("server"));
  CommandResult r = with(pki_.Crt("ca2"), client);
  EXPECT_TRUE(absl::EndsWith(r.out, "\n200")) << r.out << r.err;
  EXPECT_TRUE(absl::EndsWith(with(pki_.Crt("ca"), client).out, "000"));
  // Rotate the client CA to ca2: its clients get in, ca's no longer.
  pki_.MakeLeaf("client2", "ca2", "DNS:client2");
  std::filesystem::copy_file(pki_.Crt("ca2"), client_ca + ".new");
  std::filesystem::rename(client_ca + ".new", client_ca);
  const std::vector<std::string> client2 = {
      "--cert", pki_.Crt("client2"), "--key", pki_.Key("client2"), "-H", auth};
  r = with(pki_.Crt("ca2"), client2);
  EXPECT_TRUE(absl::EndsWith(r.out, "\n200")) << r.out << r.err;
  EXPECT_TRUE(absl::EndsWith(with(pki_.Crt("ca2"), client).out, "000"));
}

TEST_F(TlsTest, NetworkListenNeedsTlsOrInsecure) {
  const std::string cairnd = testing::BinDir() + "/cairnd";
  CommandResult r =
      RunCommand({cairnd, "--data-dir", tmp_.path() + "/refused", "--listen",
                  "0.0.0.0:0", "--metrics-listen", ""});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "--tls-cert")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--insecure")) << r.err;
  r = RunCommand({cairnd, "--data-dir", tmp_.path() + "/refused", "--listen",
                  "127.0.0.1:0", "--metrics-listen", "", "--tls-cert",
                  pki_.Crt("server"), "--tls-key", pki_.Key("client")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "--tls-key")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "does not match")) << r.err;

  // A bad --job-server is refused before the store is created.
  r = RunCommand({cairnd, "--data-dir", tmp_.path() + "/refused-job-server",
                  "--listen", "127.0.0.1:0", "--metrics-listen", "",
                  "--job-server", "cairnd:99999"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.err, "--job-server: 'cairnd:99999'"))
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() + "/refused-job-server"));

  CairndProcess insecure(tmp_.path() + "/insecure",
                         {"--listen", "0.0.0.0:0", "--insecure"});
  std::string error;
  ASSERT_TRUE(insecure.Start(&error)) << error;
  EXPECT_TRUE(absl::StrContains(insecure.Log(), "warning cairnd: --insecure"))
      << insecure.Log();
  CairndProcess tls(tmp_.path() + "/tls",
                    {"--listen", "0.0.0.0:0", "--tls-cert", pki_.Crt("server"),
                     "--tls-key", pki_.Key("server")});
  ASSERT_TRUE(tls.Start(&error)) << error;
  EXPECT_FALSE(absl::StrContains(tls.Log(), "--insecure")) << tls.Log();
}

}  // namespace
}  // namespace cairn
