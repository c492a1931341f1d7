// Feeds arbitrary bytes, as a RocksDB key read back from disk, to every key
// parser of store/keys.h. Checks that each parse that succeeds re-encodes to
// exactly the same bytes (the encoding is a bijection on valid keys), and
// that ParseHexId accepts exactly what HexId produces.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "store/keys.h"

namespace {

namespace keys = cairn::store_keys;

void Check(bool ok) {
  if (!ok) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view key(reinterpret_cast<const char*>(data), size);
  int64_t a = 0, b = 0, c = 0;
  if (keys::ParseHexId(key, &a)) Check(a >= 0 && keys::HexId(a) == key);
  if (keys::ParseStudyKey(key, &a)) Check(keys::StudyKey(a) == key);
  if (keys::ParseMaxTrialKey(key, &a)) Check(keys::MaxTrialKey(a) == key);
  if (keys::ParseTrialKey(key, &a, &b)) Check(keys::TrialKey(a, b) == key);
  if (keys::ParseMeasurementKey(key, &a, &b, &c)) {
    Check(keys::MeasurementKey(a, b, c) == key);
  }
  if (!key.empty() && static_cast<unsigned char>(key.back()) != 0xff) {
    Check(keys::PrefixEnd(key) > key);
  }
  return 0;
}
