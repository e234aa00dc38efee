// The gateway's admin routes (docs/admin_api.md): GET /status with the
// submission state, GET /metrics with the submission metrics, GET /version.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/time.h"
#include "gateway/counters.h"
#include "gateway/eap_conversations.h"
#include "gateway_shell/audit_log.h"
#include "gateway_shell/eap_forwarder.h"
#include "gateway_shell/eap_pool.h"
#include "gateway_shell/published_state.h"
#include "gateway_shell/radsec_server.h"
#include "gateway_shell/submission_client.h"
#include "gateway_shell/udp_server.h"
#include "io/admin_metrics.h"
#include "io/admin_server.h"
#include "submission/forwarder.h"

namespace rw::gateway_shell {

// The "submission" object of the gateway's /status; `now` (monotonic)
// dates the oldest pending record's wait.
[[nodiscard]] nlohmann::ordered_json submission_status_json(const submission::ForwarderStatus& status,
                                                            Instant now);

// The gateway's /status body: role, uptime since `started_at` (monotonic,
// seen at `now`), and "submission" (null without accounting).
[[nodiscard]] nlohmann::ordered_json gateway_status_json(const submission::ForwarderStatus* status,
                                                         Instant started_at, Instant now);

// Adds the request handlers' counters, summed over `workers`, to a /metrics
// page: drops and rejects by reason, accounting, Simultaneous-Use and
// parked-request events.
void add_handler_metrics(io::PrometheusText& page,
                         const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers);

// Adds the answers and drops of the request handlers by NAS client, summed
// over `workers`, for the clients labelled `labels` (the client labels of the
// state in force, GatewayState::client_labels; a label given twice is shown
// once): radiusward_gateway_client_requests_total for every client, and
// radiusward_gateway_client_drops_total for the reasons that happened.
// Counts held under other labels (clients a reload removed) are not shown.
void add_client_metrics(io::PrometheusText& page,
                        const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers,
                        std::span<const std::string> labels);

// Adds Access-Request decisions by tenant (radiusward_tenant_access_requests_total)
// for the tenants named in `tenants` (the state in force's) to a /metrics page.
void add_tenant_metrics(io::PrometheusText& page,
                        const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers,
                        std::span<const std::string> tenants);

// Adds the EAP figures of the gateway (docs/admin_api.md "/metrics"):
// conversations started, expired and refused, those active now, and EAP
// decisions by method from the workers' counters.
void add_eap_metrics(io::PrometheusText& page, const gateway::EapConversations& conversations,
                     const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers);

// Adds the EAP pool's figures: steps waiting, refused at the queue bound,
// and steps by outcome (docs/admin_api.md "/metrics").
void add_eap_pool_metrics(io::PrometheusText& page, const EapPool& pool);

// Adds the UDP workers' reply latency, by listener, and their datagram
// counters to a /metrics page.
void add_udp_metrics(io::PrometheusText& page, const UdpServer& udp);

// Adds the RadSec listener's connection and packet counters to a /metrics page.
void add_radsec_metrics(io::PrometheusText& page, const RadSecServer& radsec);

// Registers /status, /metrics and /version on `server`. `client` (null
// without accounting), `workers` (the handlers' counters, one per worker,
// fixed once the UDP server started), `udp` and `published` (whose state
// in force names the clients /metrics shows) must outlive the server's
// thread, and so must `radsec` (null without RadSec). `audit` (one per
// tenant with an audit log) adds their metrics to /metrics. Requires: the server is not
// started. `eap` (null when EAP is not served), `forwarder` (null without
// eap.forward) and `eap_pool` (null: none) add their metrics.
void add_gateway_routes(io::AdminServer& server, const SubmissionClient* client,
                        const std::vector<std::unique_ptr<gateway::GatewayCounters>>& workers,
                        const UdpServer& udp, const PublishedState& published, std::string version,
                        Instant started_at, const RadSecServer* radsec = nullptr,
                        std::vector<const AuditLog*> audit = {},
                        const gateway::EapConversations* eap = nullptr,
                        const EapForwarder* forwarder = nullptr, const EapPool* eap_pool = nullptr);

}  // namespace rw::gateway_shell
