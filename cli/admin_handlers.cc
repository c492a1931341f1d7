// The cairn admin subcommands: backup.
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/handlers.h"

namespace cairn::cli {
namespace {

namespace v1 = cairn::v1;

// "48.0 KiB (49140 bytes)", "12.3 MiB (12897484 bytes)".
std::string Bytes(uint64_t bytes) {
  const bool mib = bytes >= (1 << 20);
  return absl::StrFormat("%.1f %s (%d bytes)",
                         static_cast<double>(bytes) / (mib ? 1 << 20 : 1 << 10),
                         mib ? "MiB" : "KiB", bytes);
}

}  // namespace

absl::Status Backup(Context& c) {
  v1::BackupRequest request;
  request.set_destination(c.opt.destination);
  auto response = c.Client().Call(&StudyClient::AdminStub::Backup, request);
  if (!response.ok()) return response.status();
  if (c.opt.json) return WriteJson(*response, *c.out);
  const double seconds =
      static_cast<double>(response->duration().seconds()) +
      static_cast<double>(response->duration().nanos()) * 1e-9;
  *c.out << absl::StrFormat(
      "backup written to %s on the cairnd machine in %.2f s\n"
      "  studies %d, trials %d, RocksDB sequence number %d\n"
      "  %d files, %s\n"
      "restore: stop cairnd and start it with --data-dir %s\n",
      response->destination(), seconds, response->study_count(),
      response->trial_count(), response->sequence_number(),
      response->file_count(), Bytes(response->size_bytes()),
      response->destination());
  return absl::OkStatus();
}

}  // namespace cairn::cli
