// See list_query.h.
#include "sagemaker/list_query.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "sagemaker/training_job_request.h"

namespace cairn::sagemaker {
namespace {

using nlohmann::json;

absl::Status ParseMember(const std::string& key, const json& v, ListQuery* q) {
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (key == "MaxResults") {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
        v.get<int64_t>() > 100) {
      return InvalidField("MaxResults", text, "must be 1 to 100");
    }
    q->max_results = v.get<int>();
  } else if (key == "NextToken") {
    if (!v.is_string() || !absl::SimpleAtoi(text, &q->offset) ||
        q->offset > 1000000) {
      return InvalidField("NextToken", text, "is not a token this list gave");
    }
  } else if (key == "NameContains" && v.is_string() && text.size() <= 63) {
    q->name_contains = text;
  } else if (key == "StatusEquals") {
    if (text != "InProgress" && text != "Completed" && text != "Failed" &&
        text != "Stopping" && text != "Stopped") {
      return InvalidField("StatusEquals", text,
                          "must be InProgress, Completed, Failed, Stopping or "
                          "Stopped");
    }
    q->status_equals = text;
  } else if ((key == "CreationTimeAfter" || key == "CreationTimeBefore") &&
             v.is_number()) {
    (key == "CreationTimeAfter" ? q->creation_after : q->creation_before) =
        v.get<double>();
  } else if (key == "SortBy" &&
             (text == "Name" || text == "CreationTime" || text == "Status")) {
    q->sort_by = text;
  } else if (key == "SortOrder" &&
             (text == "Ascending" || text == "Descending")) {
    q->descending = text == "Descending";
  } else {
    return InvalidField(key, text, "is not a valid ListTrainingJobs member");
  }
  return absl::OkStatus();
}

bool Selected(const json& s, const ListQuery& q) {
  const double created = s["CreationTime"].get<double>();
  return absl::StrContains(
             absl::AsciiStrToLower(s[q.name_key].get<std::string>()),
             absl::AsciiStrToLower(q.name_contains)) &&
         (q.status_equals.empty() || s[q.status_key] == q.status_equals) &&
         (!q.creation_after || created > *q.creation_after) &&
         (!q.creation_before || created < *q.creation_before);
}

}  // namespace

absl::StatusOr<ListQuery> ParseListQuery(absl::string_view body) {
  ListQuery q;
  const json j = json::parse(body.empty() ? absl::string_view("{}") : body,
                             nullptr, false);
  if (!j.is_object()) {
    return absl::InvalidArgumentError("request body: not a JSON object");
  }
  for (const auto& [key, value] : j.items()) {
    if (absl::Status s = ParseMember(key, value, &q); !s.ok()) return s;
  }
  return q;
}

ListPage SelectPage(std::vector<json> summaries, const ListQuery& q) {
  summaries.erase(
      std::remove_if(summaries.begin(), summaries.end(),
                     [&q](const json& s) { return !Selected(s, q); }),
      summaries.end());
  const std::string key = q.sort_by == "Name"     ? q.name_key
                          : q.sort_by == "Status" ? q.status_key
                                                  : "CreationTime";
  std::stable_sort(summaries.begin(), summaries.end(),
                   [&](const json& a, const json& b) {
                     return q.descending ? b[key] < a[key] : a[key] < b[key];
                   });
  ListPage page;
  const size_t end =
      std::min(summaries.size(), q.offset + static_cast<size_t>(q.max_results));
  for (size_t i = q.offset; i < end; ++i)
    page.summaries.push_back(summaries[i]);
  if (end < summaries.size()) page.next_token = absl::StrCat(end);
  return page;
}

}  // namespace cairn::sagemaker
