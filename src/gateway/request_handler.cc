// RequestHandler, the dispatcher: the order of checks follows docs/design.md
// invariant 5 and the BlastRADIUS advisory (CVE-2024-3596): structure,
// client, duplicate cache, then Message-Authenticator or the
// Accounting-Request authenticator before anything else reads the packet.
// Then the handler of the request's kind decides, and the dispatcher carries
// out its Action.
#include "gateway/request_handler.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "base/assert.h"
#include "gateway/explain.h"
#include "gateway/replies.h"
#include "radius/attribute_crypto.h"
#include "radius/authenticator.h"
#include "radius/packet.h"

namespace rw::gateway {
namespace {

using radius::Code;
namespace attr = radius::attr;

std::size_t index_of(PendingKind kind) { return static_cast<std::size_t>(kind); }

}  // namespace

RequestHandler::RequestHandler(std::shared_ptr<const GatewayState> state, RandomSource& random,
                               GatewayCounters& counters, DecisionObserver* observer,
                               AccountingSetup accounting, std::uint16_t worker, ParkingSetup parking)
    : state_(std::move(state)),
      counters_(counters),
      observer_(observer),
      duplicates_([&] {
        DuplicateCache::Options options = state_->options().duplicates;
        std::uint64_t seed = 0;
        random.fill(MutableBytes(reinterpret_cast<std::uint8_t*>(&seed), sizeof seed));
        options.hash_seed = seed;
        return options;
      }()),
      learned_message_authenticator_(state_->client_count(), false),
      client_rows_(counters_.clients.rows_held(state_->client_labels())),
      tenant_rows_(counters_.tenants.rows_for(state_->tenant_names())),
      accounting_(std::move(accounting)),
      parking_(parking),
      worker_(worker),
      access_(random),
      random_(random) {
  const std::size_t checks = state_->options().access.session_checks_max;
  RW_ASSERT(checks >= 1 && checks <= 65536);
  RW_ASSERT(parking_.parked_max >= 1 && parking_.parked_max <= 16384);
  std::size_t size = checks + parking_.parked_max;
  if (accounting_.sink != nullptr) {
    RW_ASSERT(accounting_.recipe != nullptr);
    RW_ASSERT(accounting_.deferred_max >= 1 && accounting_.deferred_max <= 65536);
    accounting_handler_.emplace(accounting_.recipe);
    size += accounting_.deferred_max;
  }
  // Slots only: their buffers grow on first use and are reused after. Each
  // kind's share is enforced in park(); the table holds at most 65536 (a
  // ticket's slot is 16 bits), which the shares rarely all reach at once.
  pending_.reset(worker_, std::min<std::size_t>(size, 65536));
}

void RequestHandler::set_state(std::shared_ptr<const GatewayState> state) {
  state_ = std::move(state);
  learned_message_authenticator_.assign(state_->client_count(), false);
  client_rows_ = counters_.clients.rows_held(state_->client_labels());
  tenant_rows_ = counters_.tenants.rows_for(state_->tenant_names());
}

ClientCounters* RequestHandler::client_row(const config::ClientDef& client) {
  const std::size_t index = state_->index_of(client);
  ClientCounters*& row = client_rows_[index];
  // The client's first packet to this worker under its label: the one
  // allocation of its row for the life of the process (later states find
  // it in set_state). Every later packet counts through the pointer.
  if (row == nullptr) [[unlikely]]
    row = counters_.clients.row_for(state_->client_labels()[index]);
  return row;
}

void RequestHandler::on_tick(Instant now) {
  duplicates_.expire(now);
  if (eap_ != nullptr) eap_->expire(now);
  pending_.for_each_used([&](PendingRequest& pending) {
    if (now < pending.deadline) return;
    client_counters_ = pending.client_counters;
    tenant_counters_ = pending.tenant_counters;
    switch (pending.kind) {
      case PendingKind::kRecord:
        counters_.accounting_expired.add();
        break;
      case PendingKind::kUserLookup:
        note_drop(DropReason::kUserStoreUnavailable);
        break;
      case PendingKind::kCryptCheck:
        note_drop(DropReason::kCryptUnavailable);
        break;
      case PendingKind::kForward:
        note_drop(DropReason::kEapForwardTimeout);
        break;
      case PendingKind::kEapStep:
        // The conversation ends when its step comes back (a stale answer).
        note_drop(DropReason::kEapUnavailable);
        break;
      case PendingKind::kSessionCount:
      case PendingKind::kCount:
        return;  // Decided by next_timed_reply: the policy may answer.
    }
    if (pending.trace) {
      trace_ = std::move(pending.trace);
      end_trace(pending.kind == PendingKind::kRecord ? "no answer: the commit did not come in time"
                                                     : "dropped: the answer did not come in time");
    }
    duplicates_.abandon(pending.key);
    release(pending);
  });
}

std::size_t RequestHandler::on_datagram(Instant now, const Arrival& arrival, const Endpoint& from,
                                        Bytes datagram, MutableBytes reply) {
  const Listener listener = arrival.listener;
  counters_.received.add();
  client_counters_ = nullptr;
  tenant_counters_ = nullptr;
  if (explain_.control != nullptr) explain_.control->refresh(explain_filter_, explain_seen_);
  auto packet = radius::Packet::parse(datagram);
  if (!packet) {
    // Looked up for garbage too, so that a NAS that sends it shows in its own series.
    const config::ClientDef* client = state_->find_client(from, listener);
    if (explain_filter_) follow(now, from, listener, client, nullptr, datagram.size());
    if (client != nullptr) client_counters_ = client_row(*client);
    note_drop(DropReason::kMalformed);
    counters_.malformed_by_reason[static_cast<std::size_t>(packet.error())].add();
    if (trace_) end_trace("dropped: malformed (" + std::string(radius::to_string(packet.error())) + ")");
    return 0;
  }
  const config::ClientDef* client = state_->find_client(from, listener);
  if (explain_filter_) follow(now, from, listener, client, &*packet, datagram.size());
  if (client == nullptr) {
    note_drop(DropReason::kUnknownClient);
    if (trace_) end_trace("dropped: unknown_client");
    return 0;
  }
  client_counters_ = client_row(*client);
  tenant_counters_ = tenant_rows_[client->tenant];
  const Code code = packet->code();
  // RFC 6614 §2.3: one RadSec connection carries both kinds of request.
  const bool expected = code == Code::kStatusServer ||
                        (listener != Listener::kAccounting && code == Code::kAccessRequest) ||
                        (listener != Listener::kAuthentication && code == Code::kAccountingRequest);
  if (!expected) {
    note_drop(DropReason::kUnexpectedCode);
    if (trace_) end_trace("dropped: unexpected_code");
    return 0;
  }

  RequestKey key{.from = from, .listener = listener, .identifier = packet->identifier()};
  std::copy_n(packet->authenticator().begin(), key.authenticator.size(), key.authenticator.begin());
  const DuplicateCache::Lookup lookup = duplicates_.begin(now, key);
  switch (lookup.state) {
    case DuplicateCache::State::kAnswered:
      if (lookup.reply.size() > reply.size()) return 0;
      counters_.retransmissions_answered.add();
      std::copy(lookup.reply.begin(), lookup.reply.end(), reply.begin());
      if (trace_) trace_->step("duplicate cache: a retransmission of an answered request");
      if (trace_) {
        end_trace(std::string(radius::to_string(static_cast<Code>(lookup.reply[0]))) +
                  " (the cached reply, again)");
      }
      return lookup.reply.size();
    case DuplicateCache::State::kInProgress:
      note_drop(DropReason::kDuplicateInProgress);
      if (trace_) end_trace("dropped: duplicate_in_progress (the first copy is still being decided)");
      return 0;
    case DuplicateCache::State::kFull:
      note_drop(DropReason::kTooManyInProgress);
      if (trace_) end_trace("dropped: too_many_in_progress");
      return 0;
    case DuplicateCache::State::kNew:
      if (trace_) trace_->step("duplicate cache: new request");
      break;
  }

  const RequestContext request{.now = now,
                               .arrival = arrival,
                               .from = from,
                               .packet = *packet,
                               .state = *state_,
                               .client = *client,
                               .secret = state_->secret_of(*client)};
  Outcome outcome;
  if (verify_request(request)) {
    Action action;
    switch (code) {
      case Code::kStatusServer:
        counters_.status_server.add();
        client_counters_->status_server.add();
        action = answer_status_server(request, reply);
        break;
      case Code::kAccessRequest:
        action = decide_fresh(request, reply);
        if (trace_) explain_decision(request, action);
        break;
      default:
        action = accounting_handler_ ? accounting_handler_->submit(request)
                                     : Action::dropped(DropReason::kAccountingNotReplicated);
        if (trace_ && action.kind == Action::Kind::kSubmit) {
          trace_->step(
              "accounting: record built; submitted for replication, answered once committed on a majority");
        }
        break;
    }
    outcome = carry_out(request, key, action, reply, nullptr);
  }
  if (trace_ && outcome.what != Outcome::What::kParked) end_trace(outcome, reply);
  switch (outcome.what) {
    case Outcome::What::kParked:
      // The entry stays in progress until the answer: NAS retransmissions
      // meanwhile are coalesced (RFC 5080 §2.2.2), never re-submitted.
      return 0;
    case Outcome::What::kDrop:
      duplicates_.abandon(key);
      return 0;
    case Outcome::What::kReply:
      break;
  }
  duplicates_.complete(now, key, reply.first(outcome.length));
  return outcome.length;
}

// RFC 3579 §3.2 and RFC 5997 §3: Message-Authenticator is checked before any
// other attribute is read; RFC 2866 §3 for Accounting-Request.
bool RequestHandler::verify_request(const RequestContext& request) {
  const radius::Packet& packet = request.packet;
  if (packet.code() == Code::kAccountingRequest) {
    if (!radius::verify_request_authenticator(packet, request.secret)) {
      note_drop(DropReason::kBadRequestAuthenticator);
      return false;
    }
    // RFC 3579 §3.2: a Message-Authenticator, when present, must be valid.
    if (radius::check_request_message_authenticator(packet, request.secret) ==
        radius::MessageAuthenticatorStatus::kInvalid) {
      note_drop(DropReason::kBadMessageAuthenticator);
      return false;
    }
    if (trace_) trace_->step("Request Authenticator: valid for the client's secret");
    return true;
  }
  const std::size_t client = state_->index_of(request.client);
  const bool has_eap = packet.find(attr::kEapMessage).has_value();
  switch (radius::check_request_message_authenticator(packet, request.secret)) {
    case radius::MessageAuthenticatorStatus::kValid:
      // FreeRADIUS's `auto`: a client that sent one without EAP must from now on.
      if (!has_eap && request.client.require_message_authenticator == config::ClientCheck::kAuto) {
        learned_message_authenticator_[client] = true;
      }
      if (trace_) trace_->step("Message-Authenticator: valid for the client's secret");
      return true;
    case radius::MessageAuthenticatorStatus::kInvalid:
      note_drop(DropReason::kBadMessageAuthenticator);
      return false;
    case radius::MessageAuthenticatorStatus::kAbsent:
      break;
  }
  // Status-Server (RFC 5997 §3) and EAP (RFC 3579 §3.2) always need it.
  const config::ClientCheck policy = request.client.require_message_authenticator;
  bool required = packet.code() == Code::kStatusServer || has_eap || policy == config::ClientCheck::kYes ||
                  (policy == config::ClientCheck::kAuto && learned_message_authenticator_[client]);
  // BlastRADIUS: a forged Access-Reject/Accept rides on Proxy-State; a request
  // carrying it without Message-Authenticator is refused unless the client opts out.
  if (!required && packet.code() == Code::kAccessRequest && packet.find(attr::kProxyState).has_value() &&
      request.client.limit_proxy_state != config::ClientCheck::kNo) {
    required = true;
  }
  if (!required) {
    if (trace_) trace_->step("Message-Authenticator: absent, not required of this client");
    return true;
  }
  note_drop(DropReason::kMissingMessageAuthenticator);
  return false;
}

Action RequestHandler::decide_fresh(const RequestContext& request, MutableBytes reply) {
  // The User-Password is unhidden here, once, and its plaintext goes to
  // whoever needs it: the MAB test, PAP, the crypt(3) pool.
  fresh_password_.reset();
  fresh_password_malformed_ = false;
  AccessInputs inputs;
  inputs.user_store = user_store_for(request);
  inputs.crypt_elsewhere = parking_.crypt != nullptr;
  inputs.forwarder = parking_.forwarder;
  inputs.eap_elsewhere = parking_.eap != nullptr && eap_ != nullptr;
  if (const auto hidden = request.packet.find(attr::kUserPassword)) {
    auto plain = radius::unhide_user_password(hidden->value, request.packet.authenticator(), request.secret,
                                              password_);
    if (plain) {
      inputs.password = as_chars(*plain);
    } else {
      inputs.password_malformed = true;
    }
  }
  fresh_password_ = inputs.password;
  fresh_password_malformed_ = inputs.password_malformed;
  return access_.decide(request, inputs, reply);
}

PendingRequest* RequestHandler::park(const RequestContext& request, const RequestKey& key, PendingKind kind,
                                     PendingRequest* parked) {
  const auto used = [&](PendingKind k) { return pending_by_kind_[index_of(k)]; };
  bool room = true;
  DropReason full = DropReason::kParkedTableFull;
  switch (kind) {
    case PendingKind::kRecord:
      room = used(kind) < accounting_.deferred_max;
      full = DropReason::kAccountingTableFull;
      break;
    case PendingKind::kSessionCount:
      room = used(kind) < request.state.options().access.session_checks_max;
      full = DropReason::kSessionCheckTableFull;
      break;
    case PendingKind::kUserLookup:
    case PendingKind::kCryptCheck:
    case PendingKind::kForward:
    case PendingKind::kEapStep:
      // A lookup that moves on to a crypt check keeps its place.
      room = (parked != nullptr && parked->kind != PendingKind::kSessionCount) ||
             used(PendingKind::kUserLookup) + used(PendingKind::kCryptCheck) + used(PendingKind::kForward) +
                     used(PendingKind::kEapStep) <
                 parking_.parked_max;
      break;
    case PendingKind::kCount:
      RW_ASSERT(false);
  }
  if (parked == nullptr && pending_.full()) room = false;
  if (!room) {
    note_drop(full);
    return nullptr;
  }
  PendingRequest* pending = parked;
  if (pending == nullptr) {
    pending = &pending_.acquire();
    pending->trace = std::move(trace_);
    pending->key = key;
    pending->arrival = request.arrival;
    pending->state = state_;
    pending->secret = &request.secret;
    pending->client_counters = client_counters_;
    pending->tenant_counters = tenant_counters_;
  } else {
    --pending_by_kind_[index_of(pending->kind)];
  }
  pending->kind = kind;
  ++pending_by_kind_[index_of(kind)];
  return pending;
}

RequestHandler::Outcome RequestHandler::carry_out(const RequestContext& request, const RequestKey& key,
                                                  const Action& action, MutableBytes reply,
                                                  PendingRequest* parked) {
  const Outcome drop{};
  const Outcome parked_outcome{.what = Outcome::What::kParked};
  switch (action.kind) {
    case Action::Kind::kReply:
      if (action.verdict) {
        report(request.now, request.from, request.client.shortname, request.tenant().name(), *action.verdict);
      }
      return Outcome{.what = Outcome::What::kReply, .length = action.length};
    case Action::Kind::kDrop:
      count_drop(action.drop);
      return drop;
    case Action::Kind::kSubmit: {
      RW_ASSERT(parked == nullptr && accounting_.sink != nullptr);
      if (pending_by_kind_[index_of(PendingKind::kRecord)] >= accounting_.deferred_max || pending_.full()) {
        note_drop(DropReason::kAccountingTableFull);
        return drop;
      }
      if (!accounting_.sink->submit(*action.record_key, action.record, pending_.next_ticket())) {
        note_drop(DropReason::kAccountingRefused);
        return drop;
      }
      PendingRequest* pending = park(request, key, PendingKind::kRecord, nullptr);
      RW_ASSERT(pending != nullptr);
      pending->message_authenticator = request.packet.find(attr::kMessageAuthenticator).has_value();
      pending->deadline = request.now + accounting_.deferred_timeout;
      copy_proxy_state_tlvs(request.packet, pending->proxy_states);
      counters_.accounting_submitted.add();
      return parked_outcome;
    }
    case Action::Kind::kEapStep: {
      // The job holds the conversation: whatever happens here, it goes back.
      std::shared_ptr<EapStepJob> job = access_.take_eap_job();
      RW_ASSERT(job != nullptr && eap_ != nullptr && parking_.eap != nullptr);
      PendingRequest* pending = park(request, key, PendingKind::kEapStep, parked);
      if (pending == nullptr) {
        eap_->put_back(request.now, std::move(job->held));
        return drop;
      }
      if (parked == nullptr) keep_request(request, *pending);
      pending->deadline = request.now + parking_.eap_timeout;
      if (!parking_.eap->step(job, pending_.ticket_of(*pending))) {
        // Unchanged: the NAS's retransmission continues it.
        eap_->put_back(request.now, std::move(job->held));
        note_drop(DropReason::kEapQueueFull);
        if (parked == nullptr) release(*pending);  // A resumed request's slot is freed by its caller.
        return drop;
      }
      return parked_outcome;
    }
    case Action::Kind::kLookup:
    case Action::Kind::kVerify: {
      const bool lookup = action.kind == Action::Kind::kLookup;
      PendingRequest* pending =
          park(request, key, lookup ? PendingKind::kUserLookup : PendingKind::kCryptCheck, parked);
      if (pending == nullptr) return drop;
      const Ticket ticket = pending_.ticket_of(*pending);
      if (parked == nullptr) keep_request(request, *pending);
      bool asked = false;
      if (lookup) {
        pending->deadline = request.now + parking_.lookup_timeout;
        asked = user_store_for(request)->fetch(action.name, ticket);
        if (asked) counters_.user_lookups.add();
      } else {
        pending->deadline = request.now + parking_.crypt_timeout;
        asked = parking_.crypt->verify(action.crypt_setting, action.password, ticket);
        if (asked) counters_.crypt_checks.add();
      }
      if (!asked) {
        note_drop(lookup ? DropReason::kUserStoreUnavailable : DropReason::kCryptQueueFull);
        if (parked == nullptr) release(*pending);  // A resumed request's slot is freed by its caller.
        return drop;
      }
      return parked_outcome;
    }
    case Action::Kind::kCountSessions: {
      PendingRequest* pending = park(request, key, PendingKind::kSessionCount, parked);
      if (pending == nullptr) return drop;
      const Ticket ticket = pending_.ticket_of(*pending);
      if (accounting_.sink == nullptr || !accounting_.sink->count_sessions(action.name, ticket)) {
        // A resumed request's slot is freed by its caller.
        if (parked == nullptr) release(*pending);
        const Action now =
            access_.decide_check_now(request, action.limit, action.length, std::nullopt, reply);
        return carry_out(request, key, now, reply, nullptr);
      }
      counters_.session_checks.add();
      pending->client = request.client.shortname;
      pending->tenant = request.tenant().name();
      copy_proxy_state_tlvs(request.packet, pending->proxy_states);
      pending->accept.assign(reply.begin(), reply.begin() + static_cast<std::ptrdiff_t>(action.length));
      pending->user_name_length = action.name.size();
      std::copy(action.name.begin(), action.name.end(), pending->user_name.begin());
      pending->method = access_.outcome().method;
      pending->eap_type = access_.outcome().eap.type;
      pending->rule = access_.outcome().rule;
      pending->limit = action.limit;
      pending->deadline = request.now + request.state.options().access.session_query_timeout;
      return parked_outcome;
    }
    case Action::Kind::kForward: {
      // Only a fresh request forwards (EapHandler never parks one).
      RW_ASSERT(parked == nullptr && parking_.forwarder != nullptr);
      PendingRequest* pending = park(request, key, PendingKind::kForward, nullptr);
      if (pending == nullptr) return drop;
      if (!parking_.forwarder->forward(action.gateway, pending_.ticket_of(*pending), request.arrival.listener,
                                       request.from, request.packet.wire())) {
        note_drop(DropReason::kEapForwardQueueFull);
        release(*pending);
        return drop;
      }
      counters_.eap_forwarded.add();
      pending->deadline = request.now + parking_.forward_timeout;
      return parked_outcome;
    }
  }
  return drop;
}

void RequestHandler::keep_request(const RequestContext& request, PendingRequest& pending) {
  // Kept to decide the request again with the answer, with the plaintext
  // unhidden on arrival.
  const Bytes datagram = request.packet.wire();
  pending.datagram.assign(datagram.begin(), datagram.end());
  pending.has_password = fresh_password_.has_value();
  pending.password_malformed = fresh_password_malformed_;
  pending.password_length = fresh_password_ ? fresh_password_->size() : 0;
  if (fresh_password_) std::copy(fresh_password_->begin(), fresh_password_->end(), pending.password.begin());
  pending.fetched = false;
  pending.fetched_user.reset();
}

void RequestHandler::report(Instant now, const Endpoint& from, std::string_view client,
                            std::string_view tenant, const Verdict& verdict) {
  if (verdict.challenge) {
    // A round trip of an EAP conversation, not a decision.
    counters_.access_challenges.add();
    if (client_counters_ != nullptr) client_counters_->access_challenges.add();
    if (tenant_counters_ != nullptr) tenant_counters_->access_challenges.add();
    return;
  }
  if (verdict.method == AuthMethod::kEap) {
    (verdict.accepted ? counters_.eap_accepts : counters_.eap_rejects)[eap_method_slot(verdict.eap_type)]
        .add();
  }
  if (verdict.accepted) {
    counters_.access_accepts.add();
  } else {
    counters_.access_rejects.add();
    counters_.reject(verdict.reject);
  }
  if (client_counters_ != nullptr) {
    (verdict.accepted ? client_counters_->access_accepts : client_counters_->access_rejects).add();
  }
  if (tenant_counters_ != nullptr) {
    (verdict.accepted ? tenant_counters_->access_accepts : tenant_counters_->access_rejects).add();
  }
  if (verdict.reject == RejectReason::kSimultaneousUse && !verdict.accepted) {
    counters_.simultaneous_use_rejects.add();
  }
  if ((!verdict.accepted && verdict.reject == RejectReason::kSimultaneousUseUnavailable) ||
      (verdict.accepted && verdict.note == AcceptNote::kSimultaneousUseUnavailable)) {
    counters_.session_checks_unavailable.add();
  }
  if (observer_ == nullptr) return;
  observer_->on_decision({.now = now,
                          .from = from,
                          .client = client,
                          .tenant = tenant,
                          .user_name = verdict.user_name,
                          .method = verdict.method,
                          .eap_type = verdict.eap_type,
                          .outer_identity = verdict.outer_identity,
                          .accepted = verdict.accepted,
                          .reject = verdict.reject,
                          .note = verdict.note,
                          .rule = verdict.rule,
                          .rule_file = verdict.rule_file,
                          .rule_line = verdict.rule_line});
}

UserStore* RequestHandler::user_store_for(const RequestContext& request) const {
  if (request.client.tenant == 0) return parking_.user_store;
  // A short list, scanned without allocating: one entry per tenant with SQL.
  const std::string& tenant = request.tenant().name();
  for (const auto& [name, store] : parking_.tenant_user_stores) {
    if (name == tenant) return store;
  }
  return nullptr;
}

void RequestHandler::count_drop(DropReason reason) {
  note_drop(reason);
  if (reason == DropReason::kSessionCountUnavailable) counters_.session_checks_unavailable.add();
}

void RequestHandler::note_drop(DropReason reason) {
  counters_.drop(reason);
  if (client_counters_ != nullptr) client_counters_->drop(reason);
  if (trace_) {
    trace_->step("dropped: " + std::string(to_string(reason)));
    trace_drop_ = reason;
  }
}

void RequestHandler::release(PendingRequest& pending) {
  // A followed request dropped while parking takes its trace back, to end it.
  if (pending.trace && !trace_) trace_ = std::move(pending.trace);
  pending.trace.reset();
  --pending_by_kind_[index_of(pending.kind)];
  pending.state.reset();
  pending.secret = nullptr;
  pending.client_counters = nullptr;
  pending.tenant_counters = nullptr;
  pending.client = {};
  pending.tenant = {};
  pending.fetched_user.reset();
  // The plaintext must not outlive the request.
  std::fill(pending.password.begin(), pending.password.end(), '\0');
  pending.password_length = 0;
  pending_.release(pending);  // Answers still on their way for this use are now stale.
}

std::optional<DeferredReply> RequestHandler::finish(Instant now, PendingRequest& pending,
                                                    const Outcome& outcome, MutableBytes reply) {
  std::optional<DeferredReply> out;
  if (outcome.what == Outcome::What::kParked) {
    if (trace_) pending.trace = std::move(trace_);
  } else if (trace_) {
    end_trace(outcome, reply);
  }
  switch (outcome.what) {
    case Outcome::What::kParked:
      return std::nullopt;  // Waits for something else now; same slot, same ticket.
    case Outcome::What::kDrop:
      duplicates_.abandon(pending.key);
      break;
    case Outcome::What::kReply:
      duplicates_.complete(now, pending.key, reply.first(outcome.length));
      out = DeferredReply{.arrival = pending.arrival, .to = pending.key.from, .length = outcome.length};
      break;
  }
  release(pending);
  return out;
}

std::optional<DeferredReply> RequestHandler::resume_access(Instant now, PendingRequest& pending,
                                                           const Answer* verdict, MutableBytes reply) {
  // The request was parsed, verified and decided up to here on arrival, with
  // the state the slot holds: it parses again, and its client is still there.
  trace_ = std::move(pending.trace);
  client_counters_ = pending.client_counters;
  tenant_counters_ = pending.tenant_counters;
  EapStepJob* stepped =
      verdict != nullptr && verdict->kind == AnswerKind::kEapStep ? verdict->eap_step.get() : nullptr;
  if (trace_) {
    trace_->step(stepped != nullptr   ? "resumed: the EAP pool stepped the conversation"
                 : verdict != nullptr ? "resumed: the crypt(3) pool answered"
                                      : "resumed: the SQL store answered");
  }
  // Whatever becomes of the request, the conversation the step holds goes
  // back to the table or ends.
  const auto end_held = [&] {
    if (stepped != nullptr && stepped->held.conversation != nullptr && eap_ != nullptr)
      eap_->end(std::move(stepped->held));
  };
  auto packet = radius::Packet::parse(pending.datagram);
  const config::ClientDef* client = pending.state->find_client(pending.key.from, pending.key.listener);
  if (!packet || client == nullptr) {
    end_held();
    return finish(now, pending, Outcome{}, reply);
  }
  const RequestContext request{.now = now,
                               .arrival = pending.arrival,
                               .from = pending.key.from,
                               .packet = *packet,
                               .state = *pending.state,
                               .client = *client,
                               .secret = *pending.secret};
  const AccessInputs inputs{.password = pending.plaintext(),
                            .password_malformed = pending.password_malformed,
                            .user_store = user_store_for(request),
                            .fetched_user = pending.fetched ? &pending.fetched_user : nullptr,
                            .crypt_elsewhere = parking_.crypt != nullptr,
                            .crypt_verdict = stepped == nullptr ? verdict : nullptr,
                            .eap_elsewhere = parking_.eap != nullptr && eap_ != nullptr,
                            .eap_stepped = stepped};
  const Action action = access_.decide(request, inputs, reply);
  end_held();
  if (trace_) explain_decision(request, action);
  return finish(now, pending, carry_out(request, pending.key, action, reply, &pending), reply);
}

std::optional<DeferredReply> RequestHandler::relay_forwarded(Instant now, PendingRequest& pending,
                                                             const Answer& answer, MutableBytes reply) {
  trace_ = std::move(pending.trace);
  client_counters_ = pending.client_counters;
  // The peer is trusted to decide, not to send the NAS anything: its reply
  // must answer this very request under the NAS's secret, as if decided here.
  const std::vector<std::uint8_t>* wire = answer.forwarded.get();
  std::size_t length = 0;
  if (wire != nullptr && wire->size() <= reply.size()) {
    auto packet = radius::Packet::parse(*wire);
    const bool answers =
        packet && packet->identifier() == pending.key.identifier &&
        (packet->code() == Code::kAccessAccept || packet->code() == Code::kAccessReject ||
         packet->code() == Code::kAccessChallenge) &&
        radius::verify_response_authenticator(*packet, pending.key.authenticator, *pending.secret);
    if (answers) length = packet->wire().size();
  }
  if (length == 0) {
    note_drop(DropReason::kEapForwardBadReply);
    return finish(now, pending, Outcome{}, reply);
  }
  if (trace_) trace_->step("relayed: the reply of the gateway that holds the conversation");
  std::copy_n(wire->begin(), length, reply.begin());
  counters_.eap_forward_answered.add();
  return finish(now, pending, Outcome{.what = Outcome::What::kReply, .length = length}, reply);
}

std::optional<DeferredReply> RequestHandler::finish_session_check(Instant now, PendingRequest& pending,
                                                                  std::optional<std::uint32_t> open_sessions,
                                                                  MutableBytes reply) {
  trace_ = std::move(pending.trace);
  client_counters_ = pending.client_counters;
  tenant_counters_ = pending.tenant_counters;
  if (trace_) {
    trace_->step(open_sessions ? "Simultaneous-Use: the cluster counts " + std::to_string(*open_sessions) +
                                     " open session(s), limit " + std::to_string(pending.limit)
                               : "Simultaneous-Use: no count came in time; the unavailable policy decides");
  }
  const SessionCheckView check{.key = pending.key,
                               .secret = *pending.secret,
                               .policy = pending.state->options().access.simultaneous_use_unavailable,
                               .user_name = pending.user(),
                               .method = pending.method,
                               .eap_type = pending.eap_type,
                               .limit = pending.limit,
                               .proxy_states = pending.proxy_states,
                               .accept = pending.accept,
                               .rule = pending.rule};
  const Action action = access_.decide_check(check, open_sessions, reply);
  Outcome outcome;
  if (action.kind == Action::Kind::kReply) {
    report(now, pending.key.from, pending.client, pending.tenant, *action.verdict);
    outcome = Outcome{.what = Outcome::What::kReply, .length = action.length};
  } else {
    count_drop(action.drop);
  }
  return finish(now, pending, outcome, reply);
}

std::optional<DeferredReply> RequestHandler::on_answer(Instant now, const Answer& answer,
                                                       MutableBytes reply) {
  PendingRequest* pending = pending_.find(answer.ticket);
  client_counters_ = nullptr;
  tenant_counters_ = nullptr;
  const auto stale = [&](Counter& counter) {
    counter.add();
    return std::nullopt;
  };
  switch (answer.kind) {
    case AnswerKind::kRecord: {
      if (pending == nullptr || pending->kind != PendingKind::kRecord)
        return stale(counters_.accounting_stale);
      trace_ = std::move(pending->trace);
      client_counters_ = pending->client_counters;
      tenant_counters_ = pending->tenant_counters;
      if (trace_)
        trace_->step(answer.committed ? "accounting: committed on a majority" : "accounting: refused");
      if (!answer.committed) {
        note_drop(DropReason::kAccountingRefused);
        return finish(now, *pending, Outcome{}, reply);
      }
      const std::size_t length = AccountingHandler::respond(*pending, reply);
      if (length == 0) {
        // Cannot happen: the reply is smaller than its request. Let the NAS retry.
        note_drop(DropReason::kReplyTooLarge);
        return finish(now, *pending, Outcome{}, reply);
      }
      counters_.accounting_responses.add();
      if (client_counters_ != nullptr) client_counters_->accounting_responses.add();
      return finish(now, *pending, Outcome{.what = Outcome::What::kReply, .length = length}, reply);
    }
    case AnswerKind::kSessionCount:
      if (pending == nullptr || pending->kind != PendingKind::kSessionCount) {
        return stale(counters_.session_checks_stale);
      }
      return finish_session_check(now, *pending, answer.open_sessions, reply);
    case AnswerKind::kUserLookup:
      if (pending == nullptr || pending->kind != PendingKind::kUserLookup)
        return stale(counters_.parked_stale);
      pending->fetched = true;
      pending->fetched_user = answer.user;
      return resume_access(now, *pending, nullptr, reply);
    case AnswerKind::kCryptVerdict:
      if (pending == nullptr || pending->kind != PendingKind::kCryptCheck)
        return stale(counters_.parked_stale);
      return resume_access(now, *pending, &answer, reply);
    case AnswerKind::kForwarded:
      if (pending == nullptr || pending->kind != PendingKind::kForward)
        return stale(counters_.eap_forward_stale);
      return relay_forwarded(now, *pending, answer, reply);
    case AnswerKind::kEapStep:
      if (pending == nullptr || pending->kind != PendingKind::kEapStep) {
        // Its request was dropped meanwhile: the conversation cannot go on
        // (the peer's response was consumed), so it ends.
        if (answer.eap_step != nullptr && answer.eap_step->held.conversation != nullptr && eap_ != nullptr)
          eap_->end(std::move(answer.eap_step->held));
        return stale(counters_.parked_stale);
      }
      return resume_access(now, *pending, &answer, reply);
  }
  return std::nullopt;
}

void RequestHandler::follow(Instant now, const Endpoint& from, Listener listener,
                            const config::ClientDef* client, const radius::Packet* packet,
                            std::size_t length) {
  const std::string_view name = client != nullptr ? std::string_view(client->shortname) : std::string_view{};
  const std::optional<std::uint64_t> selector =
      explain_match(*explain_filter_, now, from, name, packet, random_);
  if (!selector) return;
  trace_ = std::make_shared<ExplainTrace>();
  trace_drop_.reset();
  trace_->selector = *selector;
  trace_->started = now;
  trace_->from = from;
  trace_->client = name;
  if (client != nullptr) trace_->tenant = state_->tenant_of(*client).name();
  const std::string port = listener == Listener::kAuthentication ? "authentication"
                           : listener == Listener::kAccounting   ? "accounting"
                                                                 : "RadSec";
  if (packet != nullptr) {
    trace_->request =
        std::string(radius::to_string(packet->code())) + " id " + std::to_string(packet->identifier());
    if (const auto user = packet->find(attr::kUserName)) trace_->user = printable(user->value);
  } else {
    trace_->request = "a datagram that does not parse";
  }
  trace_->step("received on the " + port + " port, " + std::to_string(length) + " octets");
  trace_->step(client != nullptr ? "client: " + trace_->client
                                 : std::string("client: none matches the source address"));
}

void RequestHandler::explain_decision(const RequestContext& request, const Action& action) {
  const AccessOutcome& outcome = access_.outcome();
  if (outcome.store_unavailable) {
    trace_->step("user store: sql could not answer (the request is dropped; the NAS retransmits)");
    return;
  }
  switch (outcome.need) {
    case AccessNeed::kUserLookup:
      trace_->step("user store: sql holds no row for " + printable(as_bytes(outcome.lookup_name)) +
                   " in memory; waiting for the database");
      return;
    case AccessNeed::kEapStep:
      trace_->step("EAP: the TLS step is handed to the EAP pool");
      return;
    case AccessNeed::kCryptCheck:
    case AccessNeed::kNothing:
      break;
  }
  if (outcome.eap.active) {
    trace_->step("EAP: " + std::string(access_.eap_note()));
    if (action.kind == Action::Kind::kForward) {
      trace_->step("forwarded to gateway " + std::to_string(action.gateway) +
                   ", which holds the conversation");
      return;
    }
    if (outcome.eap.drop) return;
    if (outcome.eap.challenge) {
      trace_->step("Access-Challenge: the conversation goes on");
      return;
    }
  }
  explain_access(request.state, outcome, *trace_);
  if (action.kind == Action::Kind::kCountSessions) {
    trace_->step("Simultaneous-Use: asking the cluster for " + printable(as_bytes(action.name)) +
                 "'s open sessions, limit " + std::to_string(action.limit));
  }
}

void RequestHandler::end_trace(std::string outcome) {
  if (!trace_) return;
  trace_->outcome = std::move(outcome);
  if (explain_.observer != nullptr) explain_.observer->on_trace(std::move(*trace_));
  trace_.reset();
  trace_drop_.reset();
}

void RequestHandler::end_trace(const Outcome& outcome, Bytes reply) {
  if (outcome.what == Outcome::What::kReply && outcome.length > 0) {
    end_trace(std::string(radius::to_string(static_cast<Code>(reply[0]))));
  } else {
    end_trace(trace_drop_ ? "dropped: " + std::string(to_string(*trace_drop_)) : std::string("dropped"));
  }
}

std::optional<DeferredReply> RequestHandler::next_timed_reply(Instant now, MutableBytes reply) {
  // The first expired check that has a reply; expired checks that are
  // dropped are finished on the way.
  std::optional<DeferredReply> out;
  pending_.for_each_used([&](PendingRequest& pending) {
    if (!out && pending.kind == PendingKind::kSessionCount && now >= pending.deadline) {
      out = finish_session_check(now, pending, std::nullopt, reply);
    }
  });
  return out;
}

}  // namespace rw::gateway

namespace rw::gateway {

RequestHandlerFactory::RequestHandlerFactory(std::shared_ptr<const GatewayState> state, RandomSource& random,
                                             DecisionObserver* observer, AccountingSetup accounting)
    : state_(std::move(state)), random_(random), observer_(observer), accounting_(std::move(accounting)) {}

std::unique_ptr<DatagramHandler> RequestHandlerFactory::make_handler(int worker_index) {
  return make_request_handler(worker_index);
}

std::unique_ptr<RequestHandler> RequestHandlerFactory::make_request_handler(int worker_index) {
  RW_ASSERT(state_ != nullptr);
  counters_.push_back(std::make_unique<GatewayCounters>());
  auto handler = std::make_unique<RequestHandler>(state_, random_, *counters_.back(), observer_, accounting_,
                                                  static_cast<std::uint16_t>(worker_index), parking_);
  handler->set_explain(explain_);
  handler->set_eap_conversations(eap_);
  return handler;
}

}  // namespace rw::gateway
