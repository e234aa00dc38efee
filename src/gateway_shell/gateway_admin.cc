// The gateway's admin routes: JSON and Prometheus views of the submission
// client's published status and of the workers' counters. Handlers run on
// the admin thread and read only what is published thread-safely:
// SubmissionClient::status() and the state in force under their mutexes,
// the counters as relaxed atomics.
#include "gateway_shell/gateway_admin.h"

#include <algorithm>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/admin_metrics.h"
#include "io/clock.h"

namespace rw::gateway_shell {
namespace {

// The answers counted in radiusward_gateway_requests_total and, by client,
// radiusward_gateway_client_requests_total: one series per code and outcome.
struct AnsweredSeries {
  std::string_view code;
  std::string_view outcome;
  gateway::Counter gateway::GatewayCounters::*total;
  std::uint64_t gateway::ClientCounts::*by_client;
};
constexpr AnsweredSeries kAnswered[] = {
    {"Access-Request", "accept", &gateway::GatewayCounters::access_accepts,
     &gateway::ClientCounts::access_accepts},
    {"Access-Request", "reject", &gateway::GatewayCounters::access_rejects,
     &gateway::ClientCounts::access_rejects},
    {"Access-Request", "challenge", &gateway::GatewayCounters::access_challenges,
     &gateway::ClientCounts::access_challenges},
    {"Accounting-Request", "response", &gateway::GatewayCounters::accounting_responses,
     &gateway::ClientCounts::accounting_responses},
    {"Status-Server", "answered", &gateway::GatewayCounters::status_server,
     &gateway::ClientCounts::status_server},
};

}  // namespace

namespace {

nlohmann::ordered_json failover_json(const std::optional<submission::Failover>& failover) {
  if (!failover) return nullptr;
  return nlohmann::ordered_json{
      {"from", failover->from},
      {"to", failover->to},
      {"leader_after_ms", failover->leader_after.to_ms()},
      {"committed_after_ms", failover->committed_after.to_ms()},
      {"attempts", failover->attempts},
      {"records_in_flight", failover->records_in_flight},
      {"records_queued", failover->records_queued},
  };
}

// How long the oldest pending record has waited (zero with none), read
// against `now` from a status up to status_interval old.
Duration oldest_pending_wait(const submission::ForwarderStatus& status, Instant now) {
  if (!status.oldest_pending_accepted_at || now < *status.oldest_pending_accepted_at) return Duration{};
  return now - *status.oldest_pending_accepted_at;
}

}  // namespace

nlohmann::ordered_json submission_status_json(const submission::ForwarderStatus& status, Instant now) {
  nlohmann::ordered_json counters = nlohmann::ordered_json::object();
  for (const auto& [name, value] : submission::named_counters(status.counters)) {
    counters[std::string(name)] = value;
  }
  return nlohmann::ordered_json{
      {"state", std::string(submission::to_string(status.state))},
      {"address", status.address},
      {"pending_records", status.pending_records},
      {"pending_bytes", status.pending_bytes},
      {"queued_records", status.queued_records},
      {"in_flight_batches", status.in_flight_batches},
      {"in_flight_records", status.in_flight_records},
      {"oldest_pending_ms", oldest_pending_wait(status, now).to_ms()},
      {"counters", std::move(counters)},
      {"last_failover", failover_json(status.last_failover)},
  };
}

nlohmann::ordered_json gateway_status_json(const submission::ForwarderStatus* status, Instant started_at,
                                           Instant now) {
  return nlohmann::ordered_json{
      {"role", "gateway"},
      {"uptime_s", (now - started_at).ns / 1'000'000'000},
      {"submission",
       status != nullptr ? submission_status_json(*status, now) : nlohmann::ordered_json(nullptr)},
  };
}

// The request handlers' counters summed over the workers.
void add_handler_metrics(io::PrometheusText& page,
                         const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers) {
  const auto sum = [&](auto member) {
    std::uint64_t total = 0;
    for (const auto& counters : workers) total += ((*counters).*member).get();
    return total;
  };
  for (std::size_t i = 0; i < gateway::kDropReasonCount; ++i) {
    std::uint64_t total = 0;
    for (const auto& counters : workers) total += counters->drops[i].get();
    page.counter("radiusward_gateway_drops_total", "Datagrams dropped without an answer, by reason.", total,
                 {{"reason", gateway::to_string(static_cast<gateway::DropReason>(i))}});
  }
  for (std::size_t i = 0; i < gateway::kRejectReasonCount; ++i) {
    std::uint64_t total = 0;
    for (const auto& counters : workers) total += counters->rejects[i].get();
    page.counter("radiusward_gateway_rejects_total", "Access-Rejects sent, by reason.", total,
                 {{"reason", gateway::to_string(static_cast<gateway::RejectReason>(i))}});
  }
  // Drops have no answer and are counted by reason above, not here.
  constexpr std::string_view kRequests = "Requests answered, by request code and outcome.";
  for (const AnsweredSeries& series : kAnswered) {
    page.counter("radiusward_gateway_requests_total", kRequests, sum(series.total),
                 {{"code", series.code}, {"outcome", series.outcome}});
  }
  page.counter("radiusward_gateway_retransmissions_answered_total",
               "Retransmissions answered again from the duplicate cache.",
               sum(&gateway::GatewayCounters::retransmissions_answered));
  constexpr std::string_view kParked = "Access-Requests parked off the UDP workers, by what they waited for.";
  page.counter("radiusward_gateway_parked_total", kParked, sum(&gateway::GatewayCounters::user_lookups),
               {{"event", "user_lookup"}});
  page.counter("radiusward_gateway_parked_total", kParked, sum(&gateway::GatewayCounters::crypt_checks),
               {{"event", "crypt_check"}});
  page.counter("radiusward_gateway_parked_total", kParked, sum(&gateway::GatewayCounters::parked_stale),
               {{"event", "stale_answer"}});
  page.counter("radiusward_gateway_parked_total", kParked, sum(&gateway::GatewayCounters::eap_forwarded),
               {{"event", "eap_forward"}});
  page.counter("radiusward_gateway_parked_total", kParked,
               sum(&gateway::GatewayCounters::eap_forward_answered), {{"event", "eap_forward_answered"}});
  page.counter("radiusward_gateway_parked_total", kParked, sum(&gateway::GatewayCounters::eap_forward_stale),
               {{"event", "eap_forward_stale"}});
  constexpr std::string_view kHelp = "Accounting-Requests on the replicated path, by event.";
  page.counter("radiusward_gateway_accounting_total", kHelp,
               sum(&gateway::GatewayCounters::accounting_submitted), {{"event", "submitted"}});
  page.counter("radiusward_gateway_accounting_total", kHelp,
               sum(&gateway::GatewayCounters::accounting_responses), {{"event", "answered"}});
  page.counter("radiusward_gateway_accounting_total", kHelp,
               sum(&gateway::GatewayCounters::accounting_expired), {{"event", "expired"}});
  page.counter("radiusward_gateway_accounting_total", kHelp, sum(&gateway::GatewayCounters::accounting_stale),
               {{"event", "stale_answer"}});
  constexpr std::string_view kChecks = "Simultaneous-Use checks of the cluster's open sessions, by event.";
  for (const auto& [event, member] :
       {std::pair{"asked", &gateway::GatewayCounters::session_checks},
        std::pair{"unavailable", &gateway::GatewayCounters::session_checks_unavailable},
        std::pair{"rejected", &gateway::GatewayCounters::simultaneous_use_rejects},
        std::pair{"stale", &gateway::GatewayCounters::session_checks_stale}}) {
    page.counter("radiusward_gateway_session_checks_total", kChecks, sum(member), {{"event", event}});
  }
}

void add_eap_metrics(io::PrometheusText& page, const gateway::EapConversations& conversations,
                     const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers) {
  const gateway::EapFigures figures = conversations.figures();
  constexpr std::string_view kConversations = "EAP conversations, by event.";
  for (const auto& [event, value] :
       {std::pair{"started", figures.started}, std::pair{"expired", figures.expired},
        std::pair{"refused", figures.refused}, std::pair{"table_full", figures.full}}) {
    page.counter("radiusward_gateway_eap_conversations_total", kConversations, value, {{"event", event}});
  }
  page.gauge("radiusward_gateway_eap_conversations_active", "EAP conversations in progress now.",
             static_cast<std::int64_t>(figures.active));
  constexpr std::string_view kOutcomes = "EAP decisions (Access-Accept or Access-Reject), by EAP method.";
  for (std::size_t slot = 0; slot < gateway::kEapMethodSlots; ++slot) {
    std::uint64_t accepts = 0;
    std::uint64_t rejects = 0;
    for (const auto& counters : workers) {
      accepts += counters->eap_accepts[slot].get();
      rejects += counters->eap_rejects[slot].get();
    }
    const std::string_view method = gateway::eap_method_label(slot);
    page.counter("radiusward_gateway_eap_outcomes_total", kOutcomes, accepts,
                 {{"method", method}, {"outcome", "accept"}});
    page.counter("radiusward_gateway_eap_outcomes_total", kOutcomes, rejects,
                 {{"method", method}, {"outcome", "reject"}});
  }
}

void add_eap_pool_metrics(io::PrometheusText& page, const EapPool& pool) {
  const EapPoolStats stats = pool.stats();
  page.gauge("radiusward_gateway_eap_pool_queued", "EAP steps waiting for a thread of the EAP pool now.",
             static_cast<std::int64_t>(stats.queued));
  page.counter("radiusward_gateway_eap_pool_refused_total",
               "EAP steps refused at the pool's queue bound (the request is dropped as eap_queue_full).",
               stats.refused);
  constexpr std::string_view kSteps = "EAP steps the pool ran (TLS handshakes and tunnels), by outcome.";
  for (const auto& [outcome, value] :
       {std::pair{"request", stats.requests}, std::pair{"success", stats.successes},
        std::pair{"failure", stats.failures}, std::pair{"discard", stats.discards}}) {
    page.counter("radiusward_gateway_eap_pool_steps_total", kSteps, value, {{"outcome", outcome}});
  }
}

void add_client_metrics(io::PrometheusText& page,
                        const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers,
                        std::span<const std::string> labels) {
  // Sorted, each label once: clients that share a shortname share its
  // series. Counts are summed for the labels the workers hold a row for
  // (the clients that sent); every other label of the clients file is
  // printed with zeros without a ClientCounts of its own, so that a scrape
  // of a 10,000-client gateway does not build 10,000 of them.
  std::vector<std::string_view> sorted(labels.begin(), labels.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::map<std::string, gateway::ClientCounts, std::less<>> counted;
  for (const auto& counters : workers) counters->clients.add_counts_for(sorted, counted);
  static const gateway::ClientCounts kNothing{};
  const auto counts_of = [&](std::string_view label) -> const gateway::ClientCounts& {
    const auto at = counted.find(label);
    return at == counted.end() ? kNothing : at->second;
  };
  constexpr std::string_view kRequests =
      "Requests answered, by NAS client (shortname), request code and outcome.";
  for (const std::string_view label : sorted) {
    const gateway::ClientCounts& counts = counts_of(label);
    for (const AnsweredSeries& series : kAnswered) {
      page.counter("radiusward_gateway_client_requests_total", kRequests, counts.*series.by_client,
                   {{"client", label}, {"code", series.code}, {"outcome", series.outcome}});
    }
  }
  // Only the reasons that happened: 18 zeros per client would drown the
  // rest. A label without counts has none.
  constexpr std::string_view kDrops =
      "Datagrams dropped without an answer after their NAS client was known, by client (shortname) and "
      "reason.";
  for (const auto& [label, counts] : counted) {
    for (std::size_t i = 0; i < gateway::kDropReasonCount; ++i) {
      if (counts.drops[i] == 0) continue;
      page.counter("radiusward_gateway_client_drops_total", kDrops, counts.drops[i],
                   {{"client", label}, {"reason", gateway::to_string(static_cast<gateway::DropReason>(i))}});
    }
  }
}

// Decisions by tenant, for the tenants of the configuration in force.
void add_tenant_metrics(io::PrometheusText& page,
                        const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers,
                        std::span<const std::string> tenants) {
  std::map<std::string, gateway::ClientCounts, std::less<>> totals;
  for (const std::string& tenant : tenants) totals.try_emplace(tenant);
  for (const auto& counters : workers) counters->tenants.add_counts_to(totals);
  constexpr std::string_view kDecisions =
      "Access-Request decisions by tenant (docs/design.md \"Tenants\"): accept, reject, or challenge (an EAP "
      "round trip).";
  for (const auto& [tenant, counts] : totals) {
    for (const auto& [decision, value] :
         {std::pair{"accept", counts.access_accepts}, std::pair{"reject", counts.access_rejects},
          std::pair{"challenge", counts.access_challenges}}) {
      page.counter("radiusward_tenant_access_requests_total", kDecisions, value,
                   {{"tenant", tenant}, {"decision", decision}});
    }
  }
}

void add_udp_metrics(io::PrometheusText& page, const UdpServer& udp) {
  // Per-listener rather than per-code: Status-Server, the one code both
  // listeners take, is rare next to the requests of each.
  constexpr std::string_view kLatency =
      "Seconds from the batch a request arrived in to the sendmmsg of its reply, by listener; "
      "accounting replies wait for their record's commit.";
  page.histogram("radiusward_gateway_reply_latency_seconds", kLatency,
                 udp.latency(gateway::Listener::kAuthentication), 1e6, {{"listener", "authentication"}});
  page.histogram("radiusward_gateway_reply_latency_seconds", kLatency,
                 udp.latency(gateway::Listener::kAccounting), 1e6, {{"listener", "accounting"}});
  const WorkerCounters sum = total(udp.counters());
  constexpr std::string_view kDatagrams = "Datagrams of the UDP workers, by event.";
  for (const auto& [event, value] :
       {std::pair{"received", sum.received}, std::pair{"sent", sum.sent},
        std::pair{"oversized_dropped", sum.oversized_dropped}, std::pair{"send_errors", sum.send_errors},
        std::pair{"receive_errors", sum.receive_errors}}) {
    page.counter("radiusward_gateway_datagrams_total", kDatagrams, value, {{"event", event}});
  }
}

void add_radsec_metrics(io::PrometheusText& page, const RadSecServer& radsec) {
  const RadSecCounters counters = radsec.counters();
  page.gauge("radiusward_radsec_connections_open", "RadSec connections open now, handshaking or established.",
             static_cast<std::int64_t>(counters.open));
  page.counter("radiusward_radsec_connections_accepted_total",
               "RadSec TCP connections taken in for a TLS handshake.", counters.accepted);
  page.counter("radiusward_radsec_connections_established_total", "RadSec TLS handshakes completed.",
               counters.established);
  constexpr std::string_view kRefused = "RadSec connections refused before carrying a packet, by reason.";
  for (std::size_t i = 0; i < counters.refused.size(); ++i) {
    page.counter("radiusward_radsec_connections_refused_total", kRefused, counters.refused[i],
                 {{"reason", to_string(static_cast<RadSecRefusal>(i))}});
  }
  constexpr std::string_view kFailures =
      "RadSec TLS handshakes that failed (no or an unverified client certificate, protocol error) or timed "
      "out.";
  page.counter("radiusward_radsec_handshake_failures_total", kFailures,
               counters.refused[static_cast<std::size_t>(RadSecRefusal::kHandshakeFailed)],
               {{"reason", "failed"}});
  page.counter("radiusward_radsec_handshake_failures_total", kFailures,
               counters.refused[static_cast<std::size_t>(RadSecRefusal::kHandshakeTimeout)],
               {{"reason", "timeout"}});
  constexpr std::string_view kClosed = "Established RadSec connections closed, by reason.";
  for (std::size_t i = 0; i < counters.closed.size(); ++i) {
    page.counter("radiusward_radsec_connections_closed_total", kClosed, counters.closed[i],
                 {{"reason", to_string(static_cast<RadSecClose>(i))}});
  }
  constexpr std::string_view kPackets = "RADIUS packets on RadSec connections, by direction.";
  page.counter("radiusward_radsec_packets_total", kPackets, counters.packets_in, {{"direction", "in"}});
  page.counter("radiusward_radsec_packets_total", kPackets, counters.packets_out, {{"direction", "out"}});
  page.counter("radiusward_radsec_replies_orphaned_total",
               "Deferred replies not sent because their RadSec connection had closed.",
               counters.replies_orphaned);
  page.counter("radiusward_radsec_accept_errors_total", "accept(2) failures on the RadSec port.",
               counters.accept_errors);
}

void add_gateway_routes(io::AdminServer& server, const SubmissionClient* client,
                        const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers,
                        const UdpServer& udp, const PublishedState& published, std::string version,
                        Instant started_at, const RadSecServer* radsec, std::vector<const AuditLog*> audit,
                        const gateway::EapConversations* eap, const EapForwarder* forwarder,
                        const EapPool* eap_pool) {
  io::add_version_route(server, std::move(version), "gateway");
  server.route("GET", "/status", [client, started_at](const io::AdminRequest&) {
    std::optional<submission::ForwarderStatus> status;
    if (client != nullptr) status = client->status();
    const nlohmann::ordered_json body =
        gateway_status_json(status ? &*status : nullptr, started_at, io::monotonic_now());
    return io::AdminResponse{200, "application/json", body.dump() + "\n"};
  });
  io::add_metrics_route(server, [client, &workers, &udp, &published, radsec, audit = std::move(audit), eap,
                                 forwarder, eap_pool](io::PrometheusText& page) {
    add_handler_metrics(page, workers);
    if (eap != nullptr) add_eap_metrics(page, *eap, workers);
    if (forwarder != nullptr) add_eap_forward_metrics(page, *forwarder);
    if (eap_pool != nullptr) add_eap_pool_metrics(page, *eap_pool);
    add_audit_metrics(page, audit);
    // The clients of the configuration in force: a removed client's series
    // leaves /metrics with the reload that removed it.
    const std::shared_ptr<const gateway::GatewayState> state = published.current().second;
    add_client_metrics(page, workers, state->client_labels());
    add_tenant_metrics(page, workers, state->tenant_names());
    add_udp_metrics(page, udp);
    if (radsec != nullptr) add_radsec_metrics(page, *radsec);
    io::add_heap_metrics(page, "radiusward_gateway_heap_bytes");
    if (client == nullptr) return;
    const submission::ForwarderStatus status = client->status();
    for (const auto& [name, value] : submission::named_counters(status.counters)) {
      page.counter("radiusward_submission_events_total", "The submission forwarder's counters, by reason.",
                   value, {{"reason", name}});
    }
    page.counter("radiusward_submission_queue_refused_total",
                 "Records refused at the bound of the queue between the workers and the submission thread.",
                 client->queue_refused());
    page.gauge("radiusward_submission_pending_records", "Records accepted and not yet committed.",
               static_cast<std::int64_t>(status.pending_records));
    page.gauge("radiusward_submission_pending_bytes", "Record bytes accepted and not yet committed.",
               static_cast<std::int64_t>(status.pending_bytes));
    page.gauge("radiusward_submission_oldest_pending_ms",
               "How long the oldest record accepted and not yet committed has waited: how far behind "
               "the cluster is, as a NAS waits.",
               oldest_pending_wait(status, io::monotonic_now()).to_ms());
    page.gauge("radiusward_submission_in_flight_batches", "Submits awaiting an answer.",
               static_cast<std::int64_t>(status.in_flight_batches));
    page.gauge("radiusward_submission_connected", "1 when connected to the leader.",
               status.state == submission::LinkState::kReady ? 1 : 0);
    if (status.last_failover) {
      page.gauge("radiusward_submission_last_failover_ms",
                 "From the loss of the leader's connection to the next Committed, at the last failover.",
                 status.last_failover->committed_after.to_ms());
    }
  });
}

}  // namespace rw::gateway_shell
