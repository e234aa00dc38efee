// The explain log's shell (docs/operations.md "Explain log"): the selectors
// operators set through the admin API at run time, the switch the workers
// read them from, and the last traces, kept in a ring for `ctl explain` and
// written to the log at info level.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"
#include "gateway/explain.h"
#include "io/admin_server.h"

namespace rw::gateway_shell {

// A finished trace and where it stands in the ring.
struct StoredTrace {
  std::uint64_t sequence = 0;
  std::int64_t ended_unix_ms = 0;
  gateway::ExplainTrace trace;
};

class ExplainLog final : public gateway::ExplainObserver {
 public:
  // Keeps the last `capacity` traces.
  explicit ExplainLog(std::size_t capacity = 1000) : capacity_(capacity) {}

  // What request handlers are given (RequestHandlerFactory::set_explain).
  [[nodiscard]] gateway::ExplainSetup setup() { return {&switch_, this}; }

  // Adds a selector from a POST /explain body ({"user", "nas", "mac",
  // "fraction", "seconds"}) at `now`; the error says what is wrong with it.
  [[nodiscard]] Result<gateway::ExplainSelector, std::string> add(std::string_view body, Instant now);
  // Removes selector `id`; false when there is none.
  bool remove(std::uint64_t id);
  void clear();
  // The selectors in force at `now` (expired ones are dropped on the way).
  [[nodiscard]] std::vector<gateway::ExplainSelector> selectors(Instant now);

  // Traces after `after`, oldest first, at most `limit`, only `selector`'s when given.
  [[nodiscard]] std::vector<StoredTrace> traces_after(std::uint64_t after,
                                                      std::optional<std::uint64_t> selector,
                                                      std::size_t limit) const;
  [[nodiscard]] std::uint64_t last_sequence() const;

  // On a worker thread: stores the trace and logs it.
  void on_trace(gateway::ExplainTrace trace) override;

 private:
  void publish_locked();

  const std::size_t capacity_;
  gateway::ExplainSwitch switch_;
  mutable std::mutex mutex_;
  std::vector<gateway::ExplainSelector> selectors_;
  std::uint64_t next_selector_ = 1;
  std::deque<StoredTrace> ring_;
  std::uint64_t sequence_ = 0;
};

// One trace as the admin API returns it (a line of GET /explain/traces).
[[nodiscard]] nlohmann::ordered_json trace_json(const StoredTrace& stored);

// Registers GET, POST and DELETE /explain and GET /explain/traces
// (docs/admin_api.md). `log` must outlive the server's thread.
void add_explain_routes(io::AdminServer& server, ExplainLog& log);

}  // namespace rw::gateway_shell
