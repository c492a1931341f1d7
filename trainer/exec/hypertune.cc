// cloudml-hypertune metric file parsing.
#include "trainer/exec/hypertune.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace cairn::exec {
namespace {

bool ToDouble(const nlohmann::json& v, double* out) {
  if (v.is_number()) {
    *out = v.get<double>();
    return true;
  }
  return v.is_string() && absl::SimpleAtod(v.get<std::string>(), out);
}

}  // namespace

std::vector<HypertuneEntry> ParseHypertune(const std::string& text) {
  std::vector<HypertuneEntry> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    HypertuneEntry e;
    if (!j.contains("timestamp") || !ToDouble(j["timestamp"], &e.timestamp)) {
      continue;
    }
    bool ok = true;
    for (auto it = j.begin(); it != j.end() && ok; ++it) {
      const std::string& key = it.key();
      if (key == "timestamp" || key == "trial") continue;
      double value = 0;
      ok = ToDouble(it.value(), &value);
      if (!ok) break;
      if (key == "global_step") {
        e.global_step = static_cast<int64_t>(value);
      } else {
        e.metrics[key] = value;
      }
    }
    if (ok && !e.metrics.empty()) out.push_back(std::move(e));
  }
  return out;
}

std::vector<HypertuneEntry> ReadHypertuneSince(const std::string& path,
                                               double after_timestamp) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<HypertuneEntry> out;
  for (HypertuneEntry& e : ParseHypertune(ss.str())) {
    if (e.timestamp > after_timestamp) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace cairn::exec
