// The configuration a process runs with, as the admin API's /config answers
// it (docs/admin_api.md "/config"): one immutable body, built at start from
// the parsed configuration and the files it named (config/config_view.h),
// and replaced whole by whoever loads another configuration (a reload), so
// that /config always shows the configuration in force and never a mix.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/config_view.h"
#include "io/admin_server.h"

namespace rw::io {

// Fills sha256, size and loaded_unix_ms of each file by reading it now. A
// file that cannot be read keeps an empty sha256 and says why in `what`.
[[nodiscard]] std::vector<config::LoadedFile> digest_files(std::vector<config::LoadedFile> files);

// Thread-safe: any thread may replace() while the admin thread reads body().
class ConfigInForce {
 public:
  void replace(std::string body) {
    auto next = std::make_shared<const std::string>(std::move(body));
    std::lock_guard lock(mutex_);
    body_ = std::move(next);
  }
  [[nodiscard]] std::shared_ptr<const std::string> body() const {
    std::lock_guard lock(mutex_);
    return body_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const std::string> body_;
};

// Adds GET /config, answering `config`'s body (503 before the first
// replace()). `config` must outlive the server's thread.
void add_config_route(AdminServer& server, const ConfigInForce& config);

}  // namespace rw::io
