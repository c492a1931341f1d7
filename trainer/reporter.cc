// Metric reporters (see reporter.h).
#include "trainer/reporter.h"

#include <grpcpp/grpcpp.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "auth/client_token.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "trainer/checkpoint.h"
#include "util/time_proto.h"

namespace cairn::trainer {

std::string ShortestDouble(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

namespace {

class PrintReporter final : public Reporter {
 public:
  explicit PrintReporter(FILE* out) : out_(out) {}
  absl::Status Report(const EpochReport& r) override {
    std::vector<std::string> parts;
    for (const auto& [k, v] : r.metrics) {
      parts.push_back(absl::StrCat(k, "=", ShortestDouble(v)));
    }
    std::fprintf(out_, "epoch %lld/%lld step %llu (%.1fs): %s\n",
                 static_cast<long long>(r.epoch),
                 static_cast<long long>(r.epochs),
                 static_cast<unsigned long long>(r.step), r.elapsed_seconds,
                 absl::StrJoin(parts, " ").c_str());
    std::fflush(out_);
    return absl::OkStatus();
  }
  std::string Describe() const override { return "stdout"; }

 private:
  FILE* out_;
};

class HypertuneReporter final : public Reporter {
 public:
  HypertuneReporter(std::string path, std::string tag, std::string trial)
      : path_(std::move(path)),
        tag_(std::move(tag)),
        trial_(std::move(trial)) {}

  absl::Status Report(const EpochReport& r) override {
    auto it = r.metrics.find(tag_);
    if (it == r.metrics.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hypertune metric '", tag_, "' is not among the reported metrics"));
    }
    std::vector<std::string> lines;
    {
      std::ifstream in(path_);
      std::string line;
      while (std::getline(in, line)) {
        if (!line.empty()) lines.push_back(line);
      }
    }
    const double now = std::chrono::duration<double>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    // Keys sorted; the tag may sort anywhere among the fixed keys.
    std::map<std::string, std::string> fields;
    fields["global_step"] = absl::StrCat("\"", r.step, "\"");
    fields[tag_] = absl::StrCat("\"", ShortestDouble(it->second), "\"");
    fields["timestamp"] = ShortestDouble(now);
    fields["trial"] = absl::StrCat("\"", trial_, "\"");
    std::vector<std::string> kv;
    for (const auto& [k, v] : fields)
      kv.push_back(absl::StrCat("\"", k, "\": ", v));
    lines.push_back(absl::StrCat("{", absl::StrJoin(kv, ", "), "}"));
    constexpr size_t kKeep = 100;
    if (lines.size() > kKeep) lines.erase(lines.begin(), lines.end() - kKeep);
    const size_t slash = path_.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      absl::Status made = MakeDirs(path_.substr(0, slash));
      if (!made.ok()) return made;
    }
    return WriteFileAtomically(path_,
                               absl::StrCat(absl::StrJoin(lines, "\n"), "\n"));
  }
  std::string Describe() const override {
    return absl::StrCat("hypertune file ", path_, " (metric ", tag_, ")");
  }

 private:
  const std::string path_, tag_, trial_;
};

class GrpcReporter final : public Reporter {
 public:
  GrpcReporter(const std::string& server, std::string trial_name,
               const std::string& token)
      : server_(server),
        trial_name_(std::move(trial_name)),
        stub_(cairn::v1::StudyService::NewStub(
            auth::NewAuthChannel(server, token))) {}

  absl::Status Report(const EpochReport& r) override {
    cairn::v1::AddTrialMeasurementRequest req;
    req.set_trial_name(trial_name_);
    cairn::v1::Measurement* m = req.mutable_measurement();
    m->set_step_count(static_cast<int64_t>(r.step));
    // Truncated toward zero to whole nanoseconds.
    *m->mutable_elapsed_duration() = util::ToProtoDuration(
        absl::Nanoseconds(static_cast<int64_t>(r.elapsed_seconds * 1e9)));
    for (const auto& [k, v] : r.metrics) {
      cairn::v1::Metric* metric = m->add_metrics();
      metric->set_metric_id(k);
      metric->set_value(v);
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    cairn::v1::Trial reply;
    grpc::Status s = stub_->AddTrialMeasurement(&ctx, req, &reply);
    if (s.ok()) return absl::OkStatus();
    return absl::Status(
        static_cast<absl::StatusCode>(s.error_code()),
        absl::StrCat("AddTrialMeasurement(", trial_name_, ") at ", server_,
                     ": ", s.error_message()));
  }
  std::string Describe() const override {
    return absl::StrCat("Cairn server ", server_, " (", trial_name_, ")");
  }

 private:
  const std::string server_, trial_name_;
  std::unique_ptr<cairn::v1::StudyService::Stub> stub_;
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

std::unique_ptr<Reporter> NewPrintReporter(FILE* out) {
  return std::make_unique<PrintReporter>(out);
}

std::unique_ptr<Reporter> NewHypertuneReporter(std::string path,
                                               std::string metric_tag,
                                               std::string trial_id) {
  return std::make_unique<HypertuneReporter>(
      std::move(path), std::move(metric_tag), std::move(trial_id));
}

std::unique_ptr<Reporter> NewGrpcReporter(const std::string& server,
                                          std::string trial_name,
                                          const std::string& token) {
  return std::make_unique<GrpcReporter>(server, std::move(trial_name), token);
}

absl::StatusOr<std::unique_ptr<Reporter>> NewReporterFromEnv(
    const std::string& hypertune_metric) {
  const std::string server = Env("CAIRN_SERVER"), trial = Env("CAIRN_TRIAL_ID");
  if (!server.empty() && !trial.empty()) {
    std::string name = trial;
    if (!absl::StrContains(trial, '/')) {
      const std::string study = Env("CAIRN_STUDY");
      if (study.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "CAIRN_TRIAL_ID=", trial,
            " is a bare id, so CAIRN_STUDY (e.g. studies/3) must be set"));
      }
      name = absl::StrCat(study, "/trials/", trial);
    }
    absl::StatusOr<std::string> token =
        auth::ReadClientToken(Env("CAIRN_TOKEN_FILE"));
    if (!token.ok()) return token.status();
    return NewGrpcReporter(server, name, *token);
  }
  const std::string file = Env("CLOUD_ML_HP_METRIC_FILE");
  if (!file.empty()) {
    std::string trial_id = Env("CLOUD_ML_TRIAL_ID");
    if (trial_id.empty()) trial_id = "0";
    return NewHypertuneReporter(file, hypertune_metric, trial_id);
  }
  return std::unique_ptr<Reporter>();
}

}  // namespace cairn::trainer
