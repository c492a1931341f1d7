// See permissions.h.
#include "auth/permissions.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace cairn::auth {
namespace {

using Table = absl::flat_hash_map<std::string, MethodRule>;

constexpr char kStudy[] = "/cairn.v1.StudyService/";
constexpr char kAdmin[] = "/cairn.v1.AdminService/";
constexpr char kJobs[] = "/cairn.v1.JobService/";

// AI Platform jobs: viewers read, editors submit and cancel.
void AddJobRules(Table* t) {
  for (const char* m : {"GetJob", "ListJobs", "ReadJobLogs"}) {
    (*t)[absl::StrCat(kJobs, m)] = MethodRule{Permission::kRead};
  }
  for (const char* m : {"SubmitTrainingJob", "CancelJob"}) {
    (*t)[absl::StrCat(kJobs, m)] = MethodRule{Permission::kWrite, false, true};
  }
}

void AddStudyRules(Table* t) {
  const MethodRule read{Permission::kRead};
  const MethodRule write{Permission::kWrite, false, true};
  const MethodRule job_read{Permission::kRead, true};
  const MethodRule job_write{Permission::kWrite, true, true};
  for (const char* m :
       {"GetStudy", "ListStudies", "LookupStudy", "ListTrials",
        "ListOptimalTrials", "GetMetricHistory", "ReadTrialLogs"}) {
    (*t)[absl::StrCat(kStudy, m)] = read;
  }
  // DeleteStudy: an editor may delete the studies it created, an admin any
  // (the owner check is in the service, which knows the study).
  for (const char* m :
       {"CreateStudy", "DeleteStudy", "SetStudyState", "UpdateStudyLabels",
        "SuggestTrials", "CreateTrial", "DeleteTrial", "StopTrial"}) {
    (*t)[absl::StrCat(kStudy, m)] = write;
  }
  (*t)[absl::StrCat(kStudy, "GetTrial")] = job_read;
  (*t)[absl::StrCat(kStudy, "CheckTrialEarlyStoppingState")] = job_read;
  for (const char* m :
       {"AddTrialMeasurement", "ReportMeasurements", "CompleteTrial"}) {
    (*t)[absl::StrCat(kStudy, m)] = job_write;
  }
}

const Table& TheTable() {
  static const Table* table = [] {
    auto* t = new Table();
    AddStudyRules(t);
    AddJobRules(t);
    for (const char* m : {"Backup", "CreateToken", "RevokeToken"}) {
      (*t)[absl::StrCat(kAdmin, m)] =
          MethodRule{Permission::kAdmin, false, true};
    }
    (*t)["/cairn.v1.SageMakerKeyService/GetAwsAccessKey"] =
        MethodRule{Permission::kAdmin, false, true};
    for (const char* m : {"ListTokens", "ListAuditEvents"}) {
      (*t)[absl::StrCat(kAdmin, m)] = MethodRule{Permission::kAdmin};
    }
    (*t)["/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"] =
        MethodRule{Permission::kRead};
    return t;
  }();
  return *table;
}

}  // namespace

std::optional<MethodRule> RuleFor(absl::string_view full_method) {
  auto it = TheTable().find(full_method);
  if (it == TheTable().end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> MethodsInTable() {
  std::vector<std::string> methods;
  for (const auto& [name, rule] : TheTable()) methods.push_back(name);
  return methods;
}

bool RoleAllows(cairn::v1::Role role, Permission permission) {
  switch (permission) {
    case Permission::kRead:
      return role >= cairn::v1::VIEWER;
    case Permission::kWrite:
      return role >= cairn::v1::EDITOR;
    case Permission::kAdmin:
      return role == cairn::v1::ADMIN;
  }
  return false;
}

absl::string_view PermissionName(Permission permission) {
  switch (permission) {
    case Permission::kRead:
      return "studies.read";
    case Permission::kWrite:
      return "studies.write";
    case Permission::kAdmin:
      return "admin";
  }
  return "unknown";
}

}  // namespace cairn::auth
