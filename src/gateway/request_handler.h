// The gateway's request handling for one worker (RFC 2865, 2866, 3579,
// 5080, 5997): checks each datagram, answers retransmissions from the
// duplicate cache, decides Access-Requests (PAP, CHAP, MS-CHAPv1/v2, MAB)
// from the users policy, and encodes the signed reply. Pure: the shell feeds
// datagrams and the time, and sends what is returned.
#pragma once

#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "gateway/access.h"
#include "gateway/counters.h"
#include "gateway/datagram.h"
#include "gateway/duplicate_cache.h"
#include "gateway/gateway_state.h"
#include "radius/attribute_crypto.h"
#include "radius/packet.h"

namespace rw::gateway {

// One line of the decision log: what was decided for whom and why. The views
// point into the request and the state; valid only during the call.
struct Decision {
  Instant now;
  Endpoint from;
  std::string_view client;  // The client's shortname.
  std::string_view user_name;
  AuthMethod method = AuthMethod::kNone;
  bool accepted = false;
  std::string_view reason;  // Why rejected ("wrong password", ...), or "ok".
};

// Receives every decision; the shell logs it (cores do not log, STYLE.md §5).
class DecisionObserver {
 public:
  virtual ~DecisionObserver() = default;
  virtual void on_decision(const Decision& decision) = 0;
};

class RequestHandler final : public DatagramHandler {
 public:
  // Requires: `random`, `counters` and `observer` (when not null) outlive the
  // handler; `random` is a CSPRNG in production (salts, MS-CHAP challenges).
  RequestHandler(std::shared_ptr<const GatewayState> state, RandomSource& random, GatewayCounters& counters,
                 DecisionObserver* observer);

  [[nodiscard]] std::size_t on_datagram(Instant now, Listener listener, const Endpoint& from, Bytes datagram,
                                        MutableBytes reply) override;
  void on_tick(Instant now) override;

  // Replaces the shared state (a reload); the duplicate cache is kept, what
  // `auto` clients taught this worker is forgotten.
  void set_state(std::shared_ptr<const GatewayState> state) {
    state_ = std::move(state);
    learned_message_authenticator_.assign(state_->client_count(), false);
  }

  [[nodiscard]] const DuplicateCache& duplicates() const { return duplicates_; }

 private:
  struct Request;
  [[nodiscard]] bool verify_request(const Request& request);
  std::size_t handle_status_server(const Request& request, MutableBytes reply);
  std::size_t handle_access_request(const Request& request, MutableBytes reply);
  std::size_t finish_reply(const Request& request, radius::PacketBuilder& builder);
  void add_ms_chap_results(radius::PacketBuilder& builder, const AccessOutcome& outcome,
                           const Request& request, radius::SaltSequence& salts) const;

  std::shared_ptr<const GatewayState> state_;
  RandomSource& random_;
  GatewayCounters& counters_;
  DecisionObserver* observer_;
  DuplicateCache duplicates_;
  AccessOutcome outcome_;
  // For clients with require_message_authenticator = auto: whether this
  // worker has seen one send a valid Message-Authenticator (then it must).
  std::vector<bool>
      learned_message_authenticator_;  // Reused per request: large, and the packet path allocates nothing.
};

// Makes one RequestHandler per worker, all sharing one state and each with
// its own counters.
class RequestHandlerFactory final : public DatagramHandlerFactory {
 public:
  RequestHandlerFactory(std::shared_ptr<const GatewayState> state, RandomSource& random,
                        DecisionObserver* observer);
  [[nodiscard]] std::unique_ptr<DatagramHandler> make_handler(int worker_index) override;

  // Counters of every handler made so far, for metrics and the exit summary.
  [[nodiscard]] const std::vector<std::unique_ptr<GatewayCounters>>& counters() const { return counters_; }

 private:
  std::shared_ptr<const GatewayState> state_;
  RandomSource& random_;
  DecisionObserver* observer_;
  std::vector<std::unique_ptr<GatewayCounters>> counters_;
};

}  // namespace rw::gateway
