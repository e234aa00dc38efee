// The gateway's request handling for one worker (RFC 2865, 2866, 3579,
// 5080, 5997): the dispatcher checks each datagram, answers retransmissions
// from the duplicate cache and hands the request to the handler of its kind
// (access_handler.h, accounting_handler.h); what a handler waits for
// (a commit, a session count, an SQL user, a crypt(3) verdict) parks the
// request in one pending table until the shell brings the answer. Pure: the
// shell feeds datagrams, answers and the time, and sends what is returned.
#pragma once

#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "accounting/record.h"
#include "base/random.h"
#include "gateway/access.h"
#include "gateway/access_handler.h"
#include "gateway/accounting_handler.h"
#include "gateway/accounting_sink.h"
#include "gateway/action.h"
#include "gateway/counters.h"
#include "gateway/datagram.h"
#include "gateway/duplicate_cache.h"
#include "gateway/eap_conversations.h"
#include "gateway/explain.h"
#include "gateway/gateway_state.h"
#include "gateway/pending_request.h"
#include "gateway/reasons.h"
#include "gateway/ticket_slots.h"
#include "gateway/user_store.h"
#include "radius/attribute_crypto.h"
#include "radius/packet.h"

namespace rw::gateway {

// One line of the decision log: what was decided for whom and why. The views
// point into the request and the state; valid only during the call.
struct Decision {
  Instant now;
  Endpoint from;
  std::string_view client;     // The client's shortname.
  std::string_view tenant{};   // The client's tenant (docs/design.md "Tenants"); empty: `default`.
  std::string_view user_name;  // For EAP the decided identity.
  AuthMethod method = AuthMethod::kNone;
  std::uint8_t eap_type = 0;          // The EAP method (eap::Type), 0 when none or not EAP.
  std::string_view outer_identity{};  // EAP: the request's User-Name, the outer identity.
  bool accepted = false;
  RejectReason reject = RejectReason::kUnknownUser;  // Why rejected (when not accepted).
  AcceptNote note = AcceptNote::kNone;               // The caveat of an accept, if any.
  // The policy rule that decided (docs/policy.md): a rule's name, "default",
  // "mab.deny"; empty without a policy or when authentication rejected.
  std::string_view rule{};
  // The users entry that decided (Verdict::rule_file, rule_line).
  std::string_view rule_file{};
  int rule_line = 0;
  // The reason's name as /metrics shows it: to_string(reject), or of `note`.
  [[nodiscard]] std::string_view reason() const { return accepted ? to_string(note) : to_string(reject); }
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

// Where Access-Requests wait off the worker: the SQL user store and the
// crypt(3) pool (docs/limits.md).
struct ParkingSetup {
  // Serves `sql` in the default tenant's users_stores; borrowed, outlives
  // every handler. Null: SQL is skipped.
  UserStore* user_store = nullptr;
  // The same for other tenants, by tenant name (docs/design.md "Tenants"):
  // a tenant's requests are looked up in its own store only; a tenant
  // without one here skips SQL.
  std::vector<std::pair<std::string, UserStore*>> tenant_user_stores{};
  // Checks crypt(3) passwords; borrowed. Null: they are checked on the
  // worker (tests and tools; the gateway always has a pool).
  CryptVerifier* crypt = nullptr;
  // A request whose SQL user does not come within this is dropped
  // unanswered (user_store_unavailable): sql_users.miss_wait.
  Duration lookup_timeout = Duration::milliseconds(20);
  // A request whose crypt(3) verdict does not come within this is dropped
  // (crypt_unavailable); the pool's queue bound keeps it from happening.
  Duration crypt_timeout = Duration::seconds(2);
  // Steps EAP-TLS, PEAP and EAP-TTLS conversations; borrowed. Null: they
  // are stepped on the worker (tests and tools).
  EapStepper* eap = nullptr;
  // A request whose EAP step does not come back within this is dropped
  // (eap_unavailable) and its conversation ends when the step comes back.
  Duration eap_timeout = Duration::seconds(5);
  // Access-Requests waiting for SQL, crypt(3) or an EAP step, per worker. At
  // the bound new ones are dropped (parked_table_full). Requires: 1..16384.
  std::size_t parked_max = 1024;
  // Takes EAP follow-ups whose State names a peer gateway (eap.forward);
  // borrowed. Null: they are refused (eap_state_other_gateway). They wait
  // in the parked share, up to forward_timeout, then are dropped
  // (eap_forward_timeout) and the NAS retransmits.
  EapForwardSink* forwarder = nullptr;
  Duration forward_timeout = Duration::seconds(1);
};

// The dispatcher of one worker: checks each datagram (structure, client,
// duplicate cache, authenticators), hands it to the handler of its kind
// (AccessHandler, AccountingHandler, Status-Server) and carries out the
// Action it returns. Requests that wait for another thread sit in one
// pending table (TicketSlots<PendingRequest>); answers come back through
// on_answer and resume them.
class RequestHandler final : public DatagramHandler {
 public:
  // Requires: `random`, `counters` and `observer` (when not null) outlive the
  // handler; `random` is a CSPRNG in production (salts, MS-CHAP challenges).
  // `worker` goes into the tickets of pending requests.
  RequestHandler(std::shared_ptr<const GatewayState> state, RandomSource& random, GatewayCounters& counters,
                 DecisionObserver* observer, AccountingSetup accounting = {}, std::uint16_t worker = 0,
                 ParkingSetup parking = {});

  [[nodiscard]] std::size_t on_datagram(Instant now, const Arrival& arrival, const Endpoint& from,
                                        Bytes datagram, MutableBytes reply) override;
  // Expires the duplicate cache, committed-record waits past
  // deferred_timeout and lookups and crypt checks past their timeouts.
  void on_tick(Instant now) override;
  [[nodiscard]] std::optional<DeferredReply> on_answer(Instant now, const Answer& answer,
                                                       MutableBytes reply) override;
  // Decides the first Simultaneous-Use check past its session_query_timeout
  // by the unavailable policy (drops are carried out and skipped).
  [[nodiscard]] std::optional<DeferredReply> next_timed_reply(Instant now, MutableBytes reply) override;

  // Pending requests of `kind` held now.
  [[nodiscard]] std::size_t pending(PendingKind kind) const {
    return pending_by_kind_[static_cast<std::size_t>(kind)];
  }
  [[nodiscard]] std::size_t deferred_size() const { return pending(PendingKind::kRecord); }
  [[nodiscard]] std::size_t session_checks_size() const { return pending(PendingKind::kSessionCount); }

  // Replaces the shared state (a reload); the duplicate cache is kept, what
  // `auto` clients taught this worker is forgotten. Each client counts on
  // under its label (counters.h, ClientCounterTable): the rows the worker
  // holds are found again by label, once per reload; a client without one
  // gets it on its first packet.
  void set_state(std::shared_ptr<const GatewayState> state);

  [[nodiscard]] const DuplicateCache& duplicates() const { return duplicates_; }

  // The store that serves `sql` in users_stores; it must outlive the handler.
  void set_user_store(UserStore* store) { parking_.user_store = store; }

  // The gateway's EAP conversations, shared by its workers; they must
  // outlive the handler. Null (the default): EAP is not served.
  void set_eap_conversations(EapConversations* conversations) {
    eap_ = conversations;
    access_.set_eap_conversations(conversations);
  }
  // The EAP methods this handler makes (EapHandler::set_methods); null: the
  // built-in ones.
  void set_eap_methods(eap::MethodFactory* factory) { access_.set_eap_methods(factory); }

  // Follows the requests `setup.control` selects and hands their traces to
  // `setup.observer` (docs/operations.md "Explain log").
  void set_explain(ExplainSetup setup) { explain_ = setup; }

 private:
  // What became of a request in hand.
  struct Outcome {
    enum class What : std::uint8_t { kReply, kDrop, kParked } what = What::kDrop;
    std::size_t length = 0;
  };

  [[nodiscard]] bool verify_request(const RequestContext& request);
  // Unhides the User-Password once (into password_) and decides.
  [[nodiscard]] Action decide_fresh(const RequestContext& request, MutableBytes reply);
  // Carries out `action` for the request; `parked` is its slot when it is
  // already pending (a resumed Access-Request), else null.
  Outcome carry_out(const RequestContext& request, const RequestKey& key, const Action& action,
                    MutableBytes reply, PendingRequest* parked);
  // Copies the request (and its unhidden password) into `pending`, to decide it again.
  void keep_request(const RequestContext& request, PendingRequest& pending);
  // Takes a slot of `kind` for the request (or moves `parked` to `kind`);
  // null when `kind`'s share of the table is used up (counted as a drop).
  PendingRequest* park(const RequestContext& request, const RequestKey& key, PendingKind kind,
                       PendingRequest* parked);
  // Decides a parked Access-Request again with what its slot now holds.
  std::optional<DeferredReply> resume_access(Instant now, PendingRequest& pending, const Answer* verdict,
                                             MutableBytes reply);
  // Relays the reply of the gateway a pending follow-up was forwarded to.
  std::optional<DeferredReply> relay_forwarded(Instant now, PendingRequest& pending, const Answer& answer,
                                               MutableBytes reply);
  std::optional<DeferredReply> finish_session_check(Instant now, PendingRequest& pending,
                                                    std::optional<std::uint32_t> open_sessions,
                                                    MutableBytes reply);
  // Sends or drops the reply of a pending request and frees its slot.
  std::optional<DeferredReply> finish(Instant now, PendingRequest& pending, const Outcome& outcome,
                                      MutableBytes reply);
  void report(Instant now, const Endpoint& from, std::string_view client, std::string_view tenant,
              const Verdict& verdict);
  // The row `client` (of state_) counts under, asked of counters_.clients
  // on its first packet in this state only.
  [[nodiscard]] ClientCounters* client_row(const config::ClientDef& client);
  void count_drop(DropReason reason);
  // Counts a drop, and says so in the trace of a followed request.
  void note_drop(DropReason reason);
  void release(PendingRequest& pending);
  // The SQL store of the request's tenant, or null.
  [[nodiscard]] UserStore* user_store_for(const RequestContext& request) const;

  // Explain log: starts a trace when the filter in force selects the
  // request; `client` null when none matched, `packet` null when it did not parse.
  void follow(Instant now, const Endpoint& from, Listener listener, const config::ClientDef* client,
              const radius::Packet* packet, std::size_t length);
  // Adds what the access handler decided (or waits for) to the trace.
  void explain_decision(const RequestContext& request, const Action& action);
  // Hands the trace of the request in hand to the observer, ended by `outcome`.
  void end_trace(std::string outcome);
  // The trace's last word for an outcome whose reply (if any) is in `reply`.
  void end_trace(const Outcome& outcome, Bytes reply);

  std::shared_ptr<const GatewayState> state_;
  GatewayCounters& counters_;
  DecisionObserver* observer_;
  DuplicateCache duplicates_;
  // For clients with require_message_authenticator = auto: whether this
  // worker has seen one send a valid Message-Authenticator (then it must).
  std::vector<bool> learned_message_authenticator_;
  // The row of each client of state_ in counters_.clients, by its index;
  // null until the client sends (client_row), so that a configured client
  // that never sends costs this pointer and no row.
  std::vector<ClientCounters*> client_rows_;
  // The row of the client of the request in hand (a parked request keeps
  // its own); null when no client matched.
  ClientCounters* client_counters_ = nullptr;
  // The row of each tenant of state_ in counters_.tenants, by index, and
  // that of the request in hand's tenant (decisions only).
  std::vector<ClientCounters*> tenant_rows_;
  ClientCounters* tenant_counters_ = nullptr;

  AccountingSetup accounting_;
  ParkingSetup parking_;
  EapConversations* eap_ = nullptr;
  std::uint16_t worker_ = 0;
  AccessHandler access_;
  std::optional<AccountingHandler> accounting_handler_;  // With a sink only.

  // The one pending table, and each kind's share of it: records up to
  // deferred_max, session checks up to session_checks_max, lookups and
  // crypt checks together up to parked_max.
  TicketSlots<PendingRequest> pending_;
  std::array<std::size_t, static_cast<std::size_t>(PendingKind::kCount)> pending_by_kind_{};
  // The User-Password of the request in hand, unhidden once.
  std::array<std::uint8_t, radius::kMaxUserPasswordLength> password_{};
  std::optional<std::string_view> fresh_password_;  // Its plaintext, in password_.
  bool fresh_password_malformed_ = false;

  // Explain log: where the filter comes from, this worker's copy of it (null
  // while nothing is followed), and the trace of the request in hand.
  ExplainSetup explain_{};
  std::shared_ptr<const ExplainFilter> explain_filter_;
  std::uint64_t explain_seen_ = 0;
  std::shared_ptr<ExplainTrace> trace_;
  std::optional<DropReason> trace_drop_;  // The drop noted in `trace_`.
  RandomSource& random_;
};

// Makes one RequestHandler per worker, all sharing one state and each with
// its own counters.
class RequestHandlerFactory final : public DatagramHandlerFactory {
 public:
  RequestHandlerFactory(std::shared_ptr<const GatewayState> state, RandomSource& random,
                        DecisionObserver* observer, AccountingSetup accounting = {});
  [[nodiscard]] std::unique_ptr<DatagramHandler> make_handler(int worker_index) override;
  // The same, typed: for a shell that replaces the handler's state on reload.
  [[nodiscard]] std::unique_ptr<RequestHandler> make_request_handler(int worker_index);
  // Handlers made from now on read SQL users through `store` (see
  // RequestHandler::set_user_store).
  void set_user_store(UserStore* store) { parking_.user_store = store; }
  // Handlers made from now on park Access-Requests as `parking` says.
  void set_parking(const ParkingSetup& parking) { parking_ = parking; }
  // Handlers made from now on follow what `explain` selects.
  void set_explain(ExplainSetup explain) { explain_ = explain; }
  // Handlers made from now on serve EAP in `conversations` (see
  // RequestHandler::set_eap_conversations).
  void set_eap_conversations(EapConversations* conversations) { eap_ = conversations; }

  // Lets go of the state handlers are made with, so that once a reload
  // replaces it nothing but the factory's own handlers hold it and it is
  // freed (gateway_shell::PublishedState). Call it once every handler is
  // made: making one afterwards is a programming error (asserted).
  void forget_state() { state_.reset(); }

  // Counters of every handler made so far, for metrics and the exit summary.
  [[nodiscard]] const std::vector<std::unique_ptr<GatewayCounters>>& counters() const { return counters_; }

 private:
  std::shared_ptr<const GatewayState> state_;
  RandomSource& random_;
  DecisionObserver* observer_;
  AccountingSetup accounting_;
  ParkingSetup parking_;
  ExplainSetup explain_;
  EapConversations* eap_ = nullptr;
  std::vector<std::unique_ptr<GatewayCounters>> counters_;
};

}  // namespace rw::gateway
