// HttpExposer: prometheus-cpp's pull Exposer serving GET /metrics, with a
// shutdown that does not wait out civetweb's accept-loop poll interval.
#ifndef CAIRN_MONITORING_HTTP_EXPOSER_H_
#define CAIRN_MONITORING_HTTP_EXPOSER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "prometheus/collectable.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace cairn::monitoring {

// Returns InvalidArgument unless `address` is HOST:PORT with PORT a decimal
// in [0, 65535]; "" (no HTTP server) is valid.
absl::Status ValidateListenAddress(const std::string& address);

// Serves the collectables it was started with until destroyed. Destruction
// waits for in-flight scrapes and takes milliseconds, not civetweb's 2 s.
// Thread-compatible: create and destroy it on one thread; the HTTP threads
// call the collectables concurrently with anything else.
class HttpExposer {
 public:
  // Binds `address` (HOST:PORT; port 0 binds a free port) and serves the
  // families of `collectables`, in that order, with `threads` HTTP threads.
  // The collectables must outlive the exposer. Returns Unavailable when the
  // address cannot be bound.
  // REQUIRES: ValidateListenAddress(address).ok() and threads >= 1.
  static absl::StatusOr<std::unique_ptr<HttpExposer>> Start(
      const std::string& address, int threads,
      const std::vector<std::weak_ptr<prometheus::Collectable>>& collectables);

  HttpExposer(const HttpExposer&) = delete;
  HttpExposer& operator=(const HttpExposer&) = delete;
  ~HttpExposer();

  // The bound TCP port.
  int port() const { return port_; }

 private:
  HttpExposer(std::string address, std::unique_ptr<prometheus::Exposer> exposer,
              int port);

  // Opens and closes a TCP connection to the listening socket, which wakes
  // civetweb's accept loop at once.
  void WakeListener() const;

  const std::string address_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  const int port_;
};

}  // namespace cairn::monitoring

#endif  // CAIRN_MONITORING_HTTP_EXPOSER_H_
