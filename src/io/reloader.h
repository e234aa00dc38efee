// One reload path per process: SIGHUP on the main thread and POST /reload on
// the admin thread both call Reloader::reload, which runs one attempt at a
// time, logs its outcome and keeps the last one for GET /reload
// (docs/operations.md "Reload", docs/admin_api.md "Reload").
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"
#include "config/gateway_config.h"
#include "io/admin_server.h"

namespace rw::io {

// The outcome of one attempt.
struct ReloadOutcome {
  bool accepted = false;
  // The configuration generation in effect after the attempt: 0 is the one
  // the process started with; each accepted reload adds 1, a rejected one
  // leaves it.
  std::uint64_t generation = 0;
  config::ConfigErrors errors{};  // Every error, when rejected.
};

// The last attempt: when (Unix ms), what asked for it, and its outcome.
struct LastReload {
  std::int64_t unix_ms = 0;
  std::string trigger{};
  ReloadOutcome outcome{};
};

struct ReloadStatus {
  std::uint64_t generation = 0;
  std::uint64_t accepted = 0;  // Reloads accepted since start.
  std::uint64_t rejected = 0;  // Reloads rejected since start.
  std::optional<LastReload> last{};
};

// Thread-safe.
class Reloader {
 public:
  // Reads the configuration and every file it names, validates the whole and
  // only then switches the process over; on any error it changes nothing and
  // returns every error. Called with the reloader's lock held, so never twice
  // at once.
  using Apply = std::function<Result<void, config::ConfigErrors>()>;

  explicit Reloader(Apply apply) : apply_(std::move(apply)) {}

  // Runs one attempt (waiting for one in progress to end first) and logs it:
  // `trigger` says what asked, e.g. "SIGHUP" or "admin API".
  ReloadOutcome reload(std::string_view trigger);

  [[nodiscard]] ReloadStatus status() const;

 private:
  Apply apply_;
  std::mutex attempt_mutex_;         // Held for a whole attempt: one at a time.
  mutable std::mutex status_mutex_;  // Guards status_ only, so GET /reload never waits for an attempt.
  ReloadStatus status_{};
};

// {"accepted": bool, "generation": N, "errors": ["file:line:col: what", ...]}
[[nodiscard]] nlohmann::ordered_json reload_outcome_json(const ReloadOutcome& outcome);
// {"generation", "reloads_accepted", "reloads_rejected", "last": null or
// {"unix_ms", "trigger", "accepted", "generation", "errors"}}.
[[nodiscard]] nlohmann::ordered_json reload_status_json(const ReloadStatus& status);

// Registers POST /reload (runs an attempt: 200 when accepted, 422 with the
// errors when rejected) and GET /reload (the status). `reloader` must outlive
// the server's thread. Requires: the server is not started.
void add_reload_routes(AdminServer& server, Reloader& reloader);

}  // namespace rw::io
