// The gateway's request handling for one worker (RFC 2865, 2866, 3579,
// 5080, 5997): checks each datagram, answers retransmissions from the
// duplicate cache, decides Access-Requests (PAP, CHAP, MS-CHAPv1/v2, MAB)
// from the users policy, and encodes the signed reply. Accounting-Requests
// become records handed to an AccountingSink; their Accounting-Response is
// built when the shell says the record is committed. A user with a
// Simultaneous-Use limit waits, the same way, for the cluster's count of
// their open sessions (docs/authentication.md). Pure: the shell feeds
// datagrams, answers and the time, and sends what is returned.
#pragma once

#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "accounting/record.h"
#include "base/random.h"
#include "gateway/access.h"
#include "gateway/accounting_sink.h"
#include "gateway/counters.h"
#include "gateway/datagram.h"
#include "gateway/duplicate_cache.h"
#include "gateway/gateway_state.h"
#include "gateway/ticket_slots.h"
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

// Receives every decision; the shell logs it (cores do not log, docs/style.md §5).
class DecisionObserver {
 public:
  virtual ~DecisionObserver() = default;
  virtual void on_decision(const Decision& decision) = 0;
};

// How a handler replicates accounting. Without a sink, Accounting-Requests
// are dropped unanswered (kAccountingNotReplicated).
struct AccountingSetup {
  // Borrowed; outlives every handler. Null: accounting is off.
  AccountingSink* sink = nullptr;
  // The session-key recipe records are built with. Requires: set with a sink.
  std::shared_ptr<const accounting::KeyRecipe> recipe{};
  // Requests waiting for their record's commit, per worker (each holds a
  // duplicate-cache entry in progress). At the bound new ones are dropped
  // (kAccountingTableFull) and the NAS retries. Requires: 1..65536.
  std::size_t deferred_max = 4096;
  // A request waiting longer is forgotten (counted as accounting_expired):
  // its slot and duplicate-cache entry are freed, and the NAS's next
  // retransmission is submitted afresh (the record key makes that safe).
  Duration deferred_timeout = Duration::seconds(30);
};

class RequestHandler final : public DatagramHandler {
 public:
  // Requires: `random`, `counters` and `observer` (when not null) outlive the
  // handler; `random` is a CSPRNG in production (salts, MS-CHAP challenges).
  // `worker` goes into the tickets of deferred requests.
  RequestHandler(std::shared_ptr<const GatewayState> state, RandomSource& random, GatewayCounters& counters,
                 DecisionObserver* observer, AccountingSetup accounting = {}, std::uint16_t worker = 0);

  [[nodiscard]] std::size_t on_datagram(Instant now, const Arrival& arrival, const Endpoint& from,
                                        Bytes datagram, MutableBytes reply) override;
  void on_tick(Instant now) override;
  // Builds the Accounting-Response (RFC 2866 §3) of a deferred request and
  // completes its duplicate-cache entry with it. Stale tickets: nothing.
  [[nodiscard]] std::optional<DeferredReply> on_answer(Instant now, Ticket ticket,
                                                       MutableBytes reply) override;
  void on_refused(Instant now, Ticket ticket) override;
  // Decides a Simultaneous-Use check: Access-Accept (the one built when the
  // password was checked) below the limit, Access-Reject with FreeRADIUS's
  // Reply-Message at or above it, the unavailable policy without a count.
  [[nodiscard]] std::optional<DeferredReply> on_session_count(Instant now, Ticket ticket,
                                                              std::optional<std::uint32_t> open_sessions,
                                                              MutableBytes reply) override;
  // Decides the first check past its session_query_timeout by the
  // unavailable policy (drops are carried out and skipped).
  [[nodiscard]] std::optional<DeferredReply> next_timed_reply(Instant now, MutableBytes reply) override;

  // Deferred requests held now.
  [[nodiscard]] std::size_t deferred_size() const { return deferred_.used(); }
  // Access-Requests waiting for a Simultaneous-Use count now.
  [[nodiscard]] std::size_t session_checks_size() const { return session_checks_.used(); }

  // Replaces the shared state (a reload); the duplicate cache is kept, what
  // `auto` clients taught this worker is forgotten.
  void set_state(std::shared_ptr<const GatewayState> state) {
    state_ = std::move(state);
    learned_message_authenticator_.assign(state_->client_count(), false);
  }

  [[nodiscard]] const DuplicateCache& duplicates() const { return duplicates_; }

  // The store that serves `sql` in users_stores (gateway_shell::SqlUserCache); it must
  // outlive the handler. Null (the default): SQL is skipped.
  void set_user_store(UserStore* store) { user_store_ = store; }

 private:
  struct Request;
  // An Accounting-Request waiting for its record's commit.
  struct Deferred {
    RequestKey key{};  // Also the reply's destination and Identifier.
    Arrival arrival{};
    std::shared_ptr<const GatewayState> state{};  // Keeps `secret` alive across a reload.
    const radius::SharedSecret* secret = nullptr;
    bool message_authenticator = false;        // The request had one: so does the reply.
    std::vector<std::uint8_t> proxy_states{};  // RFC 2866 §4.2: copied into the reply, in order.
    Instant deadline{};
  };

  // An Access-Request whose password was accepted, waiting for the count of
  // its user's open sessions (Simultaneous-Use). Its buffers grow on the
  // slot's first use and are reused after: a warm slot allocates nothing.
  struct SessionCheck {
    RequestKey key{};
    Arrival arrival{};
    std::shared_ptr<const GatewayState> state{};  // Keeps `secret` and `client` alive across a reload.
    const radius::SharedSecret* secret = nullptr;
    std::string_view client{};                 // The client's shortname, in `state`.
    std::vector<std::uint8_t> proxy_states{};  // RFC 2865 §5.33: TLVs copied into a reject.
    std::vector<std::uint8_t> accept{};        // The signed Access-Accept, sent below the limit.
    std::array<char, 253> user_name{};
    std::size_t user_name_length = 0;
    AuthMethod method = AuthMethod::kNone;
    std::uint32_t limit = 0;
    Instant deadline{};
  };
  // What deciding a check needs, from a slot or from the request at hand.
  struct CheckInputs {
    Instant now;
    const Endpoint& from;
    const RequestKey& key;
    const radius::SharedSecret& secret;
    std::string_view client;
    std::string_view user_name;
    AuthMethod method;
    std::uint32_t limit;
    Bytes proxy_states;
    Bytes accept;
  };
  // Sentinel of handle_access_request: the answer comes later.
  static constexpr std::size_t kDeferredReply = static_cast<std::size_t>(-1);

  [[nodiscard]] bool verify_request(const Request& request);
  // Hands an Accounting-Request's record to the sink; true when it is now
  // deferred (its duplicate-cache entry stays in progress).
  [[nodiscard]] bool defer_accounting_request(const Request& request, const RequestKey& key);
  void release(Deferred& deferred);
  std::size_t handle_status_server(const Request& request, MutableBytes reply);
  std::size_t handle_access_request(const Request& request, const RequestKey& key, MutableBytes reply);
  std::size_t build_access_reply(const Request& request, MutableBytes reply);
  void log_decision(Instant now, const Endpoint& from, std::string_view client, std::string_view user_name,
                    AuthMethod method, bool accepted, std::string_view reason);
  // With a Simultaneous-Use limit: asks for the count (kDeferredReply) or
  // decides at once when it cannot be asked. `reply` holds the Access-Accept.
  std::size_t check_simultaneous_use(const Request& request, const RequestKey& key, std::uint32_t limit,
                                     std::size_t accept_length, MutableBytes reply);
  // The reply of a check given the count (none: unavailable); 0 to drop.
  std::size_t decide_session_check(const CheckInputs& check, std::optional<std::uint32_t> open_sessions,
                                   MutableBytes reply);
  std::optional<DeferredReply> finish_session_check(Instant now, SessionCheck& check,
                                                    std::optional<std::uint32_t> open_sessions,
                                                    MutableBytes reply);
  void release(SessionCheck& check);
  std::size_t finish_reply(const Request& request, radius::PacketBuilder& builder);
  void add_ms_chap_results(radius::PacketBuilder& builder, const AccessOutcome& outcome,
                           const Request& request, radius::SaltSequence& salts) const;

  std::shared_ptr<const GatewayState> state_;
  UserStore* user_store_ = nullptr;
  RandomSource& random_;
  GatewayCounters& counters_;
  DecisionObserver* observer_;
  DuplicateCache duplicates_;
  AccessOutcome outcome_;
  // For clients with require_message_authenticator = auto: whether this
  // worker has seen one send a valid Message-Authenticator (then it must).
  std::vector<bool>
      learned_message_authenticator_;  // Reused per request: large, and the packet path allocates nothing.

  AccountingSetup accounting_;
  std::uint16_t worker_ = 0;
  TicketSlots<Deferred> deferred_;          // accounting_.deferred_max slots; none without accounting.
  std::vector<std::uint8_t> record_bytes_;  // Reused for each encoded record.

  TicketSlots<SessionCheck> session_checks_;  // access.session_checks_max slots.
  std::vector<std::uint8_t> proxy_scratch_;   // A request's Proxy-State TLVs, for an immediate reject.
};

// Makes one RequestHandler per worker, all sharing one state and each with
// its own counters.
class RequestHandlerFactory final : public DatagramHandlerFactory {
 public:
  RequestHandlerFactory(std::shared_ptr<const GatewayState> state, RandomSource& random,
                        DecisionObserver* observer, AccountingSetup accounting = {});
  [[nodiscard]] std::unique_ptr<DatagramHandler> make_handler(int worker_index) override;
  // Handlers made from now on read SQL users through `store` (see
  // RequestHandler::set_user_store).
  void set_user_store(UserStore* store) { user_store_ = store; }

  // Counters of every handler made so far, for metrics and the exit summary.
  [[nodiscard]] const std::vector<std::unique_ptr<GatewayCounters>>& counters() const { return counters_; }

 private:
  std::shared_ptr<const GatewayState> state_;
  RandomSource& random_;
  DecisionObserver* observer_;
  AccountingSetup accounting_;
  UserStore* user_store_ = nullptr;
  std::vector<std::unique_ptr<GatewayCounters>> counters_;
};

}  // namespace rw::gateway
