// The explain log's core (docs/operations.md "Explain log"): which requests
// an operator asked to follow (by user, NAS, MAC or a sampled fraction), and
// the trace of how each such request was decided or dropped. Workers pay one
// atomic load per datagram while nothing is followed; a followed request
// collects its steps as text and hands the trace to the shell when it ends.
// Pure apart from ExplainSwitch, the one object the admin thread and the
// workers share (an atomic generation and a mutex, as GatewayCounters share
// atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "base/time.h"
#include "gateway/datagram.h"

namespace rw::radius {
class Packet;
}

namespace rw::gateway {

class GatewayState;
struct AccessOutcome;

// One request an operator follows. A request matches when every field set
// matches: `user` the User-Name exactly, `nas` the client's shortname or the
// source address, `mac` the Calling-Station-Id as a MAC in any notation; and
// then, when `fraction` is below 1, a random draw keeps that fraction.
struct ExplainSelector {
  std::uint64_t id = 0;
  std::string user{};
  std::string nas{};
  std::optional<Endpoint> nas_address{};  // `nas` parsed as an address (port ignored), when it is one.
  std::string mac{};                      // Canonical (aa:bb:cc:dd:ee:ff); empty: any.
  double fraction = 1.0;                  // 0 < fraction <= 1.
  Instant until{};                        // Requests arriving from then on are not followed.
};

// What an operator may ask for: at most kMaxSelectors at once, each for at
// most kMaxSeconds (an explain left on by mistake stops by itself).
inline constexpr std::size_t kMaxExplainSelectors = 16;
inline constexpr double kMaxExplainSeconds = 86'400;
inline constexpr double kDefaultExplainSeconds = 600;

// The selectors in force; immutable once published.
struct ExplainFilter {
  std::vector<ExplainSelector> selectors{};
};

// The id of the first selector `filter` has for a request from `from`
// (client `client`, null when none matched), or nothing. `packet` is null
// for a datagram that did not parse. Draws from `random` only for sampled
// selectors.
[[nodiscard]] std::optional<std::uint64_t> explain_match(const ExplainFilter& filter, Instant now,
                                                         const Endpoint& from, std::string_view client,
                                                         const radius::Packet* packet, RandomSource& random);

// How one followed request went, step by step.
struct ExplainTrace {
  std::uint64_t selector = 0;
  Instant started{};
  Endpoint from{};
  std::string client{};   // Shortname, or empty when no client matched.
  std::string tenant{};   // The client's tenant, or empty when no client matched.
  std::string request{};  // "Access-Request id 7", or what was received.
  std::string user{};     // User-Name as received (printable), or empty.
  std::vector<std::string> steps{};
  std::string outcome{};  // The last word: "Access-Accept", "dropped: unknown_client", ...

  void step(std::string text) { steps.push_back(std::move(text)); }
};

// Receives every finished trace on the worker thread that finished it.
class ExplainObserver {
 public:
  virtual ~ExplainObserver() = default;
  virtual void on_trace(ExplainTrace trace) = 0;
};

// The filter in force, shared by the admin thread (publish) and the workers
// (refresh). Thread-safe.
class ExplainSwitch {
 public:
  void publish(std::shared_ptr<const ExplainFilter> filter);
  // Refreshes a worker's copy when the filter changed since `seen`; one
  // acquire load when it did not. `cached` is null while nothing is followed.
  void refresh(std::shared_ptr<const ExplainFilter>& cached, std::uint64_t& seen) const;

 private:
  std::atomic<std::uint64_t> generation_{0};
  mutable std::mutex mutex_;
  std::shared_ptr<const ExplainFilter> filter_;  // Null when empty.
};

// What a request handler needs to explain; both borrowed and outliving it.
struct ExplainSetup {
  const ExplainSwitch* control = nullptr;
  ExplainObserver* observer = nullptr;
};

// The steps an Access-Request's decision adds to its trace: the store and
// users-file entries that matched, the method and password form, the verdict
// and the reply items (secret values masked).
void explain_access(const GatewayState& state, const AccessOutcome& outcome, ExplainTrace& trace);

// Printable text of attribute bytes that a NAS sent (User-Name, ...):
// control characters and non-ASCII bytes escaped, at most 64 characters.
[[nodiscard]] std::string printable(Bytes value);

}  // namespace rw::gateway
