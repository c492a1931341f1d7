// The /metrics HTTP server: address validation, binding and fast shutdown.
#include "monitoring/http_exposer.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "prometheus/exposer.h"

namespace cairn::monitoring {

absl::Status ValidateListenAddress(const std::string& address) {
  if (address.empty()) return absl::OkStatus();
  size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535 ||
      address.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics listen address must be HOST:PORT with PORT in "
                     "[0, 65535], got \"",
                     address, "\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HttpExposer>> HttpExposer::Start(
    const std::string& address, int threads,
    const std::vector<std::weak_ptr<prometheus::Collectable>>& collectables) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(
        address, static_cast<size_t>(threads));
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": ", e.what()));
  }
  std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty()) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": not bound"));
  }
  for (const std::weak_ptr<prometheus::Collectable>& c : collectables) {
    exposer->RegisterCollectable(c);
  }
  return std::unique_ptr<HttpExposer>(
      new HttpExposer(address, std::move(exposer), ports.front()));
}

HttpExposer::HttpExposer(std::string address,
                         std::unique_ptr<prometheus::Exposer> exposer, int port)
    : address_(std::move(address)), exposer_(std::move(exposer)), port_(port) {}

HttpExposer::~HttpExposer() {
  // civetweb's accept loop polls with a 2 s timeout and only then sees the
  // stop request; connecting to the listening socket wakes it at once, so
  // cairnd shuts down without that delay.
  std::atomic<bool> stopped{false};
  std::thread waker([this, &stopped] {
    while (!stopped.load()) {
      WakeListener();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  exposer_.reset();
  stopped = true;
  waker.join();
}

void HttpExposer::WakeListener() const {
  std::string host = address_.substr(0, address_.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port_).c_str(), &hints,
                  &addresses) != 0) {
    return;
  }
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    connect(fd, a->ai_addr, a->ai_addrlen);  // non-blocking: SYN is enough
    close(fd);
    break;
  }
  freeaddrinfo(addresses);
}

}  // namespace cairn::monitoring
