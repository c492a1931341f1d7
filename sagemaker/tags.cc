// See tags.h.
#include "sagemaker/tags.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "sagemaker/training_job_request.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::SageMakerTag;
using nlohmann::json;

constexpr char kArnPrefix[] = "arn:aws:sagemaker:local:000000000000:";

// SageMaker's tag pattern [\p{L}\p{Z}\p{N}_.:/=+\-@]*: ASCII letters,
// digits, space and those marks; bytes of non-ASCII characters pass.
bool IsTagText(absl::string_view text) {
  for (unsigned char c : text) {
    if (c < 0x80 && !absl::ascii_isalnum(c) &&
        absl::string_view(" _.:/=+-@").find(static_cast<char>(c)) ==
            absl::string_view::npos) {
      return false;
    }
  }
  return true;
}

absl::Status ValidateTag(absl::string_view field, const SageMakerTag& tag) {
  if (tag.key().empty() || tag.key().size() > 128 || !IsTagText(tag.key())) {
    return InvalidField(absl::StrCat(field, ".Key"), tag.key(),
                        "must be 1 to 128 letters, digits, spaces or _.:/=+-@");
  }
  if (absl::StartsWithIgnoreCase(tag.key(), "aws:")) {
    return InvalidField(absl::StrCat(field, ".Key"), tag.key(),
                        "the aws: prefix is reserved");
  }
  if (tag.value().size() > 256 || !IsTagText(tag.value())) {
    return InvalidField(absl::StrCat(field, ".Value"), tag.value(),
                        "must be up to 256 letters, digits, spaces or "
                        "_.:/=+-@");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TaggedResource> ParseResourceArn(absl::string_view arn) {
  absl::string_view rest = arn;
  TaggedResource out;
  if (absl::ConsumePrefix(&rest, kArnPrefix)) {
    if (absl::ConsumePrefix(&rest, "hyper-parameter-tuning-job/")) {
      out.tuning_job = true;
    } else if (!absl::ConsumePrefix(&rest, "training-job/")) {
      rest = "";
    }
  } else {
    rest = "";
  }
  out.name = std::string(rest);
  absl::Status s =
      ValidateJobName("ResourceArn", out.name, out.tuning_job ? 32 : 63);
  if (!s.ok()) {
    return InvalidField("ResourceArn", arn,
                        absl::StrCat("must be ", kArnPrefix,
                                     "training-job/NAME or "
                                     "hyper-parameter-tuning-job/NAME"));
  }
  return out;
}

absl::Status ValidateTags(absl::string_view field,
                          const std::vector<SageMakerTag>& tags) {
  if (tags.size() > static_cast<size_t>(kMaxTags)) {
    return InvalidField(field, absl::StrCat(tags.size()),
                        absl::StrCat("at most ", kMaxTags, " tags"));
  }
  std::set<std::string> keys;
  for (const SageMakerTag& tag : tags) {
    if (absl::Status s = ValidateTag(field, tag); !s.ok()) return s;
    if (!keys.insert(tag.key()).second) {
      return InvalidField(absl::StrCat(field, ".Key"), tag.key(),
                          "is given twice");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SageMakerTag>> ParseTags(absl::string_view field,
                                                    const json& tags) {
  if (!tags.is_array() || tags.empty()) {
    return InvalidField(field, "", "must be a list of 1 or more tags");
  }
  std::vector<SageMakerTag> out;
  for (const json& tag : tags) {
    const json key = tag.is_object() ? tag.value("Key", json()) : json();
    const json value = tag.is_object() ? tag.value("Value", json("")) : json();
    if (!key.is_string() || !value.is_string() || tag.size() > 2) {
      return InvalidField(field, "",
                          "each tag must be {\"Key\": ..., \"Value\": ...}");
    }
    SageMakerTag& t = out.emplace_back();
    t.set_key(key.get<std::string>());
    t.set_value(value.get<std::string>());
  }
  if (absl::Status s = ValidateTags(field, out); !s.ok()) return s;
  return out;
}

std::string TagLabelPrefix(int64_t trial_id) {
  return trial_id == 0 ? kTagLabelPrefix
                       : absl::StrCat(kTrialTagLabelPrefix, trial_id, ":");
}

std::map<std::string, std::string> TagLabels(
    const std::vector<SageMakerTag>& tags, int64_t trial_id) {
  const std::string prefix = TagLabelPrefix(trial_id);
  std::map<std::string, std::string> out;
  for (const SageMakerTag& tag : tags) {
    out[absl::StrCat(prefix, tag.key())] = tag.value();
  }
  return out;
}

std::map<std::string, std::string> TagsOf(const cairn::v1::Study& study,
                                          int64_t trial_id) {
  std::map<std::string, std::string> tags;
  const std::string own = TagLabelPrefix(trial_id);
  // A tuning job's tags first: its training jobs inherit them.
  for (const std::string& prefix : {std::string(kTagLabelPrefix), own}) {
    for (const auto& [label, value] : study.spec().labels()) {
      absl::string_view key = label;
      if (absl::ConsumePrefix(&key, prefix)) tags[std::string(key)] = value;
    }
    if (own == kTagLabelPrefix) break;
  }
  return tags;
}

json TagsJson(const cairn::v1::Study& study, int64_t trial_id) {
  json out = json::array();
  for (const auto& [key, value] : TagsOf(study, trial_id)) {
    out.push_back({{"Key", key}, {"Value", value}});
  }
  return out;
}

absl::Status CheckTagRoom(const cairn::v1::Study& study,
                          const std::vector<SageMakerTag>& tags,
                          int64_t trial_id) {
  std::map<std::string, std::string> all = TagsOf(study, trial_id);
  for (const SageMakerTag& tag : tags) all[tag.key()] = tag.value();
  if (all.size() > static_cast<size_t>(kMaxTags)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("Tags: the resource would have ", all.size(),
                     " tags; at most ", kMaxTags));
  }
  return absl::OkStatus();
}

absl::Status CheckOwnTag(const cairn::v1::Study& study, const std::string& key,
                         int64_t trial_id) {
  const auto& labels = study.spec().labels();
  if (trial_id == 0 || labels.contains(TagLabelPrefix(trial_id) + key) ||
      !labels.contains(kTagLabelPrefix + key)) {
    return absl::OkStatus();
  }
  return InvalidField(
      "TagKeys", key,
      absl::StrCat("is inherited from tuning job '", study.display_name(),
                   "'; delete it from the tuning job"));
}

}  // namespace cairn::sagemaker
