// The reload serialisation, its log lines and its admin routes.
#include "io/reloader.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "io/clock.h"

namespace rw::io {

ReloadOutcome Reloader::reload(std::string_view trigger) {
  const std::lock_guard attempt(attempt_mutex_);
  spdlog::info("reload ({}): reading the configuration", trigger);
  auto applied = apply_();
  ReloadOutcome outcome;
  {
    const std::lock_guard lock(status_mutex_);
    if (applied) {
      ++status_.generation;
      ++status_.accepted;
    } else {
      ++status_.rejected;
    }
    outcome.accepted = applied.has_value();
    outcome.generation = status_.generation;
    if (!applied) outcome.errors = std::move(applied.error());
    status_.last = LastReload{.unix_ms = unix_now_ms(), .trigger = std::string(trigger), .outcome = outcome};
  }
  if (outcome.accepted) {
    spdlog::info("reload ({}): accepted; configuration generation {} in effect", trigger, outcome.generation);
  } else {
    spdlog::error("reload ({}): rejected with {} error(s); generation {} stays in effect", trigger,
                  outcome.errors.size(), outcome.generation);
    for (const config::ConfigError& error : outcome.errors) spdlog::error("reload: {}", error.to_string());
  }
  return outcome;
}

ReloadStatus Reloader::status() const {
  const std::lock_guard lock(status_mutex_);
  return status_;
}

nlohmann::ordered_json reload_outcome_json(const ReloadOutcome& outcome) {
  nlohmann::ordered_json errors = nlohmann::ordered_json::array();
  for (const config::ConfigError& error : outcome.errors) errors.push_back(error.to_string());
  return nlohmann::ordered_json{
      {"accepted", outcome.accepted}, {"generation", outcome.generation}, {"errors", std::move(errors)}};
}

nlohmann::ordered_json reload_status_json(const ReloadStatus& status) {
  nlohmann::ordered_json last = nullptr;
  if (status.last) {
    last = nlohmann::ordered_json{{"unix_ms", status.last->unix_ms}, {"trigger", status.last->trigger}};
    const nlohmann::ordered_json outcome = reload_outcome_json(status.last->outcome);
    for (const auto& item : outcome.items()) last[item.key()] = item.value();
  }
  return nlohmann::ordered_json{{"generation", status.generation},
                                {"reloads_accepted", status.accepted},
                                {"reloads_rejected", status.rejected},
                                {"last", std::move(last)}};
}

void add_reload_routes(AdminServer& server, Reloader& reloader) {
  const auto json = [](int status, const nlohmann::ordered_json& body) {
    return AdminResponse{status, "application/json",
                         body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"};
  };
  server.route("POST", "/reload", [&reloader, json](const AdminRequest&) {
    const ReloadOutcome outcome = reloader.reload("admin API");
    return json(outcome.accepted ? 200 : 422, reload_outcome_json(outcome));
  });
  server.route("GET", "/reload", [&reloader, json](const AdminRequest&) {
    return json(200, reload_status_json(reloader.status()));
  });
}

}  // namespace rw::io
