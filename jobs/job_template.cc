// Job dirs under the jobs root, and the placement checks of job templates.
#include "jobs/job_template.h"

#include <system_error>

#include "absl/strings/str_cat.h"

namespace cairn::jobs {
namespace {

namespace fs = std::filesystem;

// Resolves a template's job_dir against the jobs root; InvalidArgument if
// it escapes the root.
absl::StatusOr<fs::path> ResolveUnderRoot(const std::string& root,
                                          const std::string& job_dir,
                                          const std::string& default_name) {
  std::error_code ec;
  const fs::path root_c = fs::weakly_canonical(fs::absolute(root), ec);
  fs::path p = job_dir.empty()                   ? root_c / default_name
               : fs::path(job_dir).is_absolute() ? fs::path(job_dir)
                                                 : root_c / job_dir;
  p = fs::weakly_canonical(p, ec);
  const fs::path rel = p.lexically_relative(root_c);
  if (rel.empty() || rel == "." || *rel.begin() == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("job_template.job_dir: '", job_dir,
                     "' is outside the jobs root '", root_c.string(), "'"));
  }
  return p;
}

}  // namespace

absl::Status ValidateJobPlacement(const std::string& jobs_root, int gpus,
                                  const cairn::v1::StudySpec& spec) {
  if (!spec.has_job_template()) return absl::OkStatus();
  const cairn::v1::TrialJobTemplate& t = spec.job_template();
  absl::StatusOr<fs::path> dir = ResolveUnderRoot(jobs_root, t.job_dir(), "x");
  if (!dir.ok()) return dir.status();
  if (t.gpus_per_trial() > gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job_template.gpus_per_trial: ", t.gpus_per_trial(), " exceeds the ",
        gpus, " GPU(s) this cairnd schedules (--gpus)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<fs::path> CreateTrialJobDir(const std::string& jobs_root,
                                           const cairn::v1::StudySpec& spec,
                                           int64_t study_id, int64_t trial_id) {
  absl::StatusOr<fs::path> study_dir =
      ResolveUnderRoot(jobs_root, spec.job_template().job_dir(),
                       absl::StrCat("study-", study_id));
  if (!study_dir.ok()) {
    return absl::FailedPreconditionError(
        "job_template.job_dir is outside the jobs root");
  }
  const fs::path dir = *study_dir / absl::StrCat("trial-", trial_id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create job dir '", dir.string(), "': ", ec.message()));
  }
  return dir;
}

}  // namespace cairn::jobs
