// Looking a user up in an SqlUserCache the way a worker does (find, then
// fetch and wait for the answer), for tests only.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <string_view>

#include "gateway_shell/sql_user_cache.h"

namespace rw::gateway_shell {

// The cached user, or the fetch's answer (status kFound with a null user
// when the database could not answer, kMiss when the fetch could not be
// queued or did not come within `wait`).
inline gateway::UserStore::Lookup lookup_and_wait(SqlUserCache& cache, std::string_view name,
                                                  std::chrono::milliseconds wait = std::chrono::seconds(30)) {
  gateway::UserStore::Lookup found = cache.find(name);
  if (found.status == gateway::UserStore::Status::kFound) return found;
  auto answered = std::make_shared<std::promise<std::shared_ptr<const auth::SqlUser>>>();
  std::future<std::shared_ptr<const auth::SqlUser>> answer = answered->get_future();
  cache.set_answer_sink([answered](const gateway::Answer& a) {
    try {
      answered->set_value(a.user);
    } catch (const std::future_error&) {  // A second answer for the same waiter: cannot happen.
    }
  });
  if (!cache.fetch(name, gateway::make_ticket(0, 0, 1))) return {};
  if (answer.wait_for(wait) != std::future_status::ready) return {};
  return {gateway::UserStore::Status::kFound, answer.get()};
}

}  // namespace rw::gateway_shell
