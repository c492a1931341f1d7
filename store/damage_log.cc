// See damage_log.h.
#include "store/damage_log.h"

#include <cstdio>
#include <utility>

#include "absl/strings/match.h"

namespace cairn {

DamageReport ParseDamageLine(const std::string& line) {
  DamageReport r;
  const size_t corruption = line.find("Corruption: ");
  if (corruption == std::string::npos) return r;
  r.detail = line.substr(corruption);
  // "<path>: dropping N bytes; Corruption: ..." or "<path>: Corruption: ...".
  size_t end = line.find(": dropping ");
  if (end == std::string::npos || end > corruption) end = corruption - 2;
  const std::string path = line.substr(0, end);
  if (absl::EndsWith(path, ".log") || absl::EndsWith(path, ".sst") ||
      absl::StrContains(path, "MANIFEST-")) {
    const size_t slash = path.rfind('/');
    r.file = slash == std::string::npos ? path : path.substr(slash + 1);
  }
  return r;
}

DamageLog::DamageLog(std::shared_ptr<rocksdb::Logger> target)
    : rocksdb::Logger(target->GetInfoLogLevel()), target_(std::move(target)) {}

void DamageLog::Logv(const rocksdb::InfoLogLevel level, const char* format,
                     va_list ap) {
  if (level >= rocksdb::InfoLogLevel::WARN_LEVEL) {
    va_list copy;
    va_copy(copy, ap);
    char line[1024];
    std::vsnprintf(line, sizeof(line), format, copy);
    va_end(copy);
    DamageReport r = ParseDamageLine(line);
    if (!r.detail.empty()) {
      absl::MutexLock lock(&mu_);
      if (first_.detail.empty() || (first_.file.empty() && !r.file.empty())) {
        first_ = std::move(r);
      }
    }
  }
  target_->Logv(level, format, ap);
}

void DamageLog::Logv(const char* format, va_list ap) {
  Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
}

void DamageLog::LogHeader(const char* format, va_list ap) {
  target_->LogHeader(format, ap);
}

size_t DamageLog::GetLogFileSize() const { return target_->GetLogFileSize(); }

void DamageLog::Flush() { target_->Flush(); }

DamageReport DamageLog::FirstDamage() const {
  absl::MutexLock lock(&mu_);
  return first_;
}

rocksdb::Status DamageLog::CloseImpl() { return target_->Close(); }

}  // namespace cairn
