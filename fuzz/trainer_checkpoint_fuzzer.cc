// Feeds bytes to cairn-train's checkpoint decoding. An even first byte: the
// rest is a whole checkpoint file, decoded and also loaded by a
// CheckpointManager from a per-process temp dir. An odd first byte: the rest
// is a payload, wrapped in a valid header (magic, version, length, CRC) so the
// fuzzer reaches the payload decoder past the checksum. Checks that decoding
// never crashes or trips a sanitizer and that a decoded checkpoint re-encodes
// to the same bytes.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/checkpoint.h"

namespace {

const std::string& TempDir() {
  static const std::string* dir = [] {
    char tmpl[] = "/tmp/cairn_fuzz_ckpt.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) abort();
    return new std::string(tmpl);
  }();
  return *dir;
}

template <typename T>
void Append(T v, std::string* out) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// The header EncodeCheckpoint writes, around `payload`.
std::string Wrap(std::string_view payload) {
  std::string out("CAIRNCKP");
  Append<uint32_t>(1, &out);  // Version.
  Append<uint32_t>(0, &out);  // Flags.
  Append<uint64_t>(payload.size(), &out);
  Append<uint32_t>(static_cast<uint32_t>(
                       crc32(0L, reinterpret_cast<const Bytef*>(payload.data()),
                             static_cast<uInt>(payload.size()))),
                   &out);
  out.append(payload);
  return out;
}

void DecodeAndCheck(const std::string& bytes) {
  absl::StatusOr<cairn::trainer::Checkpoint> ckpt =
      cairn::trainer::DecodeCheckpoint(bytes);
  if (ckpt.ok() && cairn::trainer::EncodeCheckpoint(*ckpt) != bytes) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1),
                              size - 1);
  if (data[0] % 2 == 1) {
    DecodeAndCheck(Wrap(rest));
    return 0;
  }
  DecodeAndCheck(std::string(rest));
  const std::string path = TempDir() + "/ckpt-1.bin";
  // A plain write: WriteFileAtomically's fsyncs would slow every run.
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) abort();
  if (!rest.empty() && fwrite(rest.data(), 1, rest.size(), f) != rest.size()) {
    abort();
  }
  fclose(f);
  cairn::trainer::CheckpointManager manager(TempDir(), 1);
  std::vector<std::string> skipped;
  (void)manager.LoadLatest(&skipped);
  return 0;
}
