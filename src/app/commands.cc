// The subcommands: construction and wiring only; every decision lives in
// config/ and io/.
#include "app/commands.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "app/exit_codes.h"
#include "app/referenced_files.h"
#include "config/config_view.h"
#include "config/gateway_reload.h"
#include "config/member_config.h"
#include "eap/conversation.h"
#include "gateway_shell/audit_log.h"
#include "gateway_shell/crypt_pool.h"
#include "gateway_shell/decision_log.h"
#include "gateway_shell/eap_forwarder.h"
#include "gateway_shell/explain_log.h"
#include "gateway_shell/gateway_admin.h"
#include "gateway_shell/published_state.h"
#include "gateway_shell/radsec_server.h"
#include "gateway_shell/sql_user_cache.h"
#include "gateway_shell/submission_client.h"
#include "gateway_shell/udp_server.h"
#include "io/admin_server.h"
#include "io/clock.h"
#include "io/config_in_force.h"
#include "io/csprng.h"
#include "io/heap.h"
#include "io/logging.h"
#include "io/reloader.h"
#include "io/signals.h"
#include "io/socket_address.h"
#include "policy/policy_file.h"

namespace rw::app {
namespace {

void print_errors(const config::ConfigErrors& errors) {
  for (const config::ConfigError& error : errors) std::fprintf(stderr, "%s\n", error.to_string().c_str());
}

// What `check` adds for the cluster transport: the TLS files load and match,
// or plaintext only towards loopback addresses (docs/security.md).
config::ConfigErrors check_cluster_security(const std::optional<config::ClusterTlsConfig>& tls,
                                            bool insecure_plaintext, io::TlsRole role,
                                            const std::vector<config::HostPort>& addresses) {
  config::ConfigErrors errors;
  if (tls) {
    if (auto context = cluster_tls_context(*tls, role); !context) errors.push_back(context.error());
  }
  if (insecure_plaintext) {
    for (const config::HostPort& address : addresses) {
      if (!is_loopback_address(address)) {
        errors.push_back(
            address.where.error("insecure_plaintext_cluster is set but " + address.text +
                                " is not a loopback address: configure the cluster certificates"));
      }
    }
  }
  return errors;
}

// check_cluster_security for the gateway's `accounting:` section, if any.
config::ConfigErrors check_accounting_security(const config::GatewayConfig& config) {
  if (!config.accounting) return {};
  std::vector<config::HostPort> addresses;
  for (const config::SubmissionAddress& member : config.accounting->members)
    addresses.push_back(member.address);
  return check_cluster_security(config.accounting->tls, config.accounting->insecure_plaintext_cluster,
                                io::TlsRole::kClient, addresses);
}

// The audit key (audit.key_file) reads and is long enough; the error points
// at the key that named the file.
config::ConfigErrors check_audit_key(const config::GatewayConfig& config) {
  config::ConfigErrors errors;
  const auto check = [&](const std::optional<config::AuditConfig>& audit) {
    if (!audit || !audit->key_file) return;
    auto key = gateway_shell::read_audit_key(audit->key_file->path);
    if (!key) errors.push_back(audit->key_file->where.error(key.error()));
  };
  check(config.audit);
  for (const config::TenantConfig& tenant : config.tenants) check(tenant.audit);
  return errors;
}

// The EAP forwarding key (eap.forward.key_file) reads and is long enough.
config::ConfigErrors check_eap_forward_key(const config::GatewayConfig& config) {
  if (!config.eap.forward) return {};
  auto key = gateway_shell::read_forward_key(config.eap.forward->key_file.path);
  if (key) return {};
  return {config.eap.forward->key_file.where.error(key.error())};
}

// The forwarder's handler is worker 65535 in the tickets: past any UDP
// worker and the RadSec listener (one per CPU, then one).
constexpr int kEapForwarderWorker = 65535;

// The options of `eap.forward`, with its key read.
Result<gateway_shell::EapForwarderOptions, std::string> eap_forwarder_options(
    const config::GatewayConfig& config) {
  const config::EapForwardConfig& forward = *config.eap.forward;
  gateway_shell::EapForwarderOptions options;
  const auto endpoint = [](const config::HostPort& address) {
    return gateway::Endpoint{.address = address.bytes, .is_v6 = address.is_v6, .port = address.port};
  };
  options.listen = endpoint(forward.listen);
  options.self = *config.eap.gateway_id;
  for (const config::EapForwardPeer& peer : forward.peers)
    options.peers.push_back({.gateway_id = peer.gateway_id, .address = endpoint(peer.address)});
  auto key = gateway_shell::read_forward_key(forward.key_file.path);
  if (!key) return fail(key.error());
  options.key = std::move(*key);
  options.timeout = forward.timeout;
  options.in_flight_max = forward.in_flight_max;
  return options;
}

Result<config::GatewayConfig, config::ConfigErrors> gateway_config(const GatewayCommand& command) {
  if (!command.config_file)
    return config::apply_overrides(config::quick_start_gateway_config(), command.overrides);
  auto loaded = config::load_gateway_config(*command.config_file);
  if (!loaded) return loaded;
  return config::apply_overrides(std::move(*loaded), command.overrides);
}

struct Loaded {
  config::GatewayConfig config;
  LoadedFiles files;
};

// Loads the files `config` names; prints every error and returns nothing if
// the config or any file is wrong.
std::optional<Loaded> load_or_print_errors(Result<config::GatewayConfig, config::ConfigErrors> config) {
  if (!config) {
    print_errors(config.error());
    return std::nullopt;
  }
  auto files = load_referenced_files(*config);
  if (!files) {
    print_errors(files.error());
    return std::nullopt;
  }
  return Loaded{std::move(*config), std::move(*files)};
}

void log_listeners(const gateway_shell::UdpServer& server) {
  for (const gateway_shell::BoundListener& bound : server.listeners()) {
    spdlog::info("listening on {} ({})", io::to_string(bound.local),
                 bound.listener == gateway::Listener::kAuthentication ? "authentication" : "accounting");
  }
}

// The submission client of `accounting:`, not started yet; null without it.
Result<std::unique_ptr<gateway_shell::SubmissionClient>, std::string> make_submission_client(
    const config::GatewayConfig& config, RandomSource& random) {
  if (!config.accounting) return std::unique_ptr<gateway_shell::SubmissionClient>();
  const config::AccountingConfig& accounting = *config.accounting;
  gateway_shell::SubmissionClientOptions options;
  for (const config::SubmissionAddress& member : accounting.members) {
    options.forwarder.members.push_back(member.address.text);
    options.member_ids[member.address.text] = member.member_id;
  }
  if (accounting.tls) {
    auto tls = cluster_tls_context(*accounting.tls, io::TlsRole::kClient);
    if (!tls) return fail(tls.error().to_string());
    options.tls = std::move(*tls);
  } else {
    spdlog::warn(
        "accounting.insecure_plaintext_cluster: submissions travel in plaintext and members are not "
        "authenticated; use accounting.tls outside a test cluster on one host");
  }
  // Announced in Hello for the members' logs only.
  random.fill(MutableBytes(reinterpret_cast<std::uint8_t*>(&options.forwarder.gateway_id),
                           sizeof options.forwarder.gateway_id));
  options.forwarder.pending_records_max = accounting.pending_records_max;
  options.forwarder.batch_records_max = accounting.batch_records_max;
  options.forwarder.batch_delay = accounting.batch_delay;
  // The forwarder forgets a query when the request handler stops waiting for it.
  options.forwarder.session_query_timeout = accounting.session_query_timeout;
  options.queue_records_max =
      std::min<std::size_t>(accounting.pending_records_max, options.queue_records_max);
  auto client = gateway_shell::SubmissionClient::create(std::move(options));
  if (!client) return fail(client.error().to_string());
  return std::move(*client);
}

// "EAP-MD5, EAP-TLS": the methods offered, in order.
std::string eap_method_list(const gateway::EapOptions& eap) {
  std::string text;
  for (const eap::Type type : eap.methods) text += (text.empty() ? "" : ", ") + eap::to_string(type);
  return text;
}

// Every tenant's certificate loads and matches its key, and its CA and CRL load.
void check_tenant_tls(const config::GatewayConfig& config, config::ConfigErrors& errors) {
  if (config.tls) {
    if (auto tls = gateway_tls_context(*config.tls); !tls) errors.push_back(tls.error());
  }
  for (const config::TenantConfig& tenant : config.tenants) {
    if (!tenant.tls) continue;
    if (auto tls = gateway_tls_context(*tenant.tls); !tls) errors.push_back(tls.error());
  }
}

// The /config body of the gateway's configuration and the files it loaded.
std::string gateway_config_body(const config::GatewayConfig& config, const LoadedFiles& files) {
  return config::config_body("gateway", config::gateway_config_json(config, files.state->clients()),
                             io::digest_files(config::named_files(config)));
}

// Starts the admin API on `admin_socket`, when configured.
Result<std::unique_ptr<io::AdminServer>, std::string> start_admin(
    const config::GatewayConfig& config, const gateway_shell::SubmissionClient* client,
    const gateway::RequestHandlerFactory& factory, const gateway_shell::UdpServer& udp,
    const gateway_shell::PublishedState& published, const io::ConfigInForce& config_in_force,
    gateway_shell::ExplainLog& explain, io::Reloader& reloader, Instant started_at,
    const gateway_shell::RadSecServer* radsec, const std::vector<const gateway_shell::AuditLog*>& audit,
    const gateway::EapConversations* eap, const gateway_shell::EapForwarder* forwarder,
    const gateway_shell::EapPool* eap_pool) {
  if (!config.admin_socket) return std::unique_ptr<io::AdminServer>();
  auto server = std::make_unique<io::AdminServer>();
  gateway_shell::add_gateway_routes(*server, client, factory.counters(), udp, published, RW_VERSION,
                                    started_at, radsec, audit, eap, forwarder, eap_pool);
  if (!audit.empty()) gateway_shell::add_audit_routes(*server, audit);
  io::add_config_route(*server, config_in_force);
  gateway_shell::add_explain_routes(*server, explain);
  io::add_reload_routes(*server, reloader);
  auto options =
      io::admin_server_options(config.admin_socket->path, config.admin_listen, config.admin_token_file);
  if (!options) return fail(options.error());
  auto started = server->start(std::move(*options));
  if (!started) return fail(started.error().to_string());
  spdlog::info("admin API on {}", config.admin_socket->path);
  if (server->tcp_port()) spdlog::info("admin API on TCP {} (bearer token)", config.admin_listen->text);
  return server;
}

// The writer of an `audit:` section (docs/operations.md "Audit log") for
// `tenant`'s decisions, started.
Result<std::unique_ptr<gateway_shell::AuditLog>, std::string> start_audit_log(
    const config::AuditConfig& audit, std::string_view tenant) {
  gateway_shell::AuditLogOptions options{.path = audit.path.path,
                                         .rotate_bytes = audit.rotate_bytes,
                                         .keep = audit.keep,
                                         .fsync_interval = audit.fsync_interval,
                                         .queue_lines_max = audit.queue_lines_max,
                                         .tenant = std::string(tenant)};
  if (audit.key_file) {
    auto key = gateway_shell::read_audit_key(audit.key_file->path);
    if (!key) return fail(key.error());
    options.key = std::move(*key);
  }
  return gateway_shell::AuditLog::open(std::move(options));
}

// One writer per tenant with an `audit:` section, the default tenant's first.
Result<std::vector<std::unique_ptr<gateway_shell::AuditLog>>, std::string> start_audit_logs(
    const config::GatewayConfig& config) {
  std::vector<std::unique_ptr<gateway_shell::AuditLog>> logs;
  const auto start = [&](const std::optional<config::AuditConfig>& audit,
                         std::string_view tenant) -> Result<void, std::string> {
    if (!audit) return {};
    auto log = start_audit_log(*audit, tenant);
    if (!log) return fail(log.error());
    logs.push_back(std::move(*log));
    return {};
  };
  if (auto started = start(config.audit, config::kDefaultTenantName); !started) return fail(started.error());
  for (const config::TenantConfig& tenant : config.tenants) {
    if (auto started = start(tenant.audit, tenant.name); !started) return fail(started.error());
  }
  return logs;
}

// The SQL user store of an `sql_users:` section (docs/authentication.md):
// the default tenant's or another's, each with its own cache and
// connections. Reads go to the read replica when one is configured and reachable.
std::unique_ptr<gateway_shell::SqlUserCache> make_sql_user_cache(const config::SqlUsersConfig& sql,
                                                                 const LoadedFiles& files) {
  gateway_shell::SqlUserCacheOptions options;
  options.ttl = sql.cache_ttl;
  options.negative_ttl = sql.negative_ttl;
  options.entries_max = sql.cache_entries_max;
  options.connections = sql.connections;
  gateway_shell::SqlUserCache::Connect connect;
  if (sql.sqlite) {
    connect = [path = sql.sqlite->path] { return gateway_shell::open_sqlite_user_source(path); };
    spdlog::info("sql users: SQLite {}", sql.sqlite->path);
  } else {
    connect = [primary = *sql.postgresql, replica = sql.read_replica]() {
      return gateway_shell::open_postgres_user_source_preferring_replica(
          primary, replica, [](const std::string& error) {
            spdlog::warn("sql users: read replica unreachable, reading from the primary: {}", error);
          });
    };
    spdlog::info("sql users: PostgreSQL{}", sql.read_replica ? " (reads on the read replica)" : "");
  }
  // The dictionary alone, not the start state: a reload must free that.
  std::shared_ptr<const radius::Dictionary> dictionary = files.state->shared_dictionary();
  return std::make_unique<gateway_shell::SqlUserCache>(
      options, std::move(connect), std::move(dictionary), [] { return io::monotonic_now(); },
      [](const std::string& error) { spdlog::warn("sql users: {}", error); });
}

// Carries answers to the thread whose handler holds their ticket: a UDP
// worker, or the RadSec listener (whose handler is the worker after the
// last UDP worker). Either may not run yet, or any more: its answers are
// then dropped and their requests time out (the NAS retries).
struct AnswerRoutes {
  std::atomic<gateway_shell::UdpServer*> udp{nullptr};
  std::atomic<gateway_shell::RadSecServer*> radsec{nullptr};
  std::atomic<gateway_shell::EapForwarder*> forwarder{nullptr};

  void post(int worker, std::span<const gateway_shell::AnswerNotice> answers) const {
    gateway_shell::RadSecServer* radsec_server = radsec.load();
    gateway_shell::EapForwarder* eap_forwarder = forwarder.load();
    if (eap_forwarder != nullptr && worker == eap_forwarder->worker()) {
      eap_forwarder->post_answers(answers);
    } else if (radsec_server != nullptr && worker == radsec_server->worker()) {
      radsec_server->post_answers(answers);
    } else if (gateway_shell::UdpServer* udp_server = udp.load()) {
      udp_server->post_answers(worker, answers);
    }
  }
};

// Starts the RadSec listener of `radsec:` with the context of `tls:` and a
// handler for worker `worker`; null without the section.
Result<std::unique_ptr<gateway_shell::RadSecServer>, std::string> start_radsec(
    const config::GatewayConfig& config, io::TlsContext tls, gateway::DatagramHandlerFactory& factory,
    const gateway_shell::PublishedState& published, int worker) {
  if (!config.radsec) return std::unique_ptr<gateway_shell::RadSecServer>();
  gateway_shell::RadSecServerOptions options = gateway_shell::radsec_server_options(config);
  options.tls = std::move(tls);
  // One context per tenant with a tls section: the gateway's server
  // certificate (one listener, one handshake identity) and the tenant's CA
  // and CRL, which its RadSec clients' certificates must chain to.
  std::map<std::string, io::TlsContext, std::less<>> tenant_tls;
  for (const config::TenantConfig& tenant : config.tenants) {
    if (!tenant.tls) continue;
    io::TlsFiles files{.ca = tenant.tls->ca.path, .cert = config.tls->cert.path, .key = config.tls->key.path};
    if (tenant.tls->crl) files.crl = tenant.tls->crl->path;
    auto context = io::make_tls_context(files, io::TlsRole::kServer, io::TlsVersions::k12And13);
    if (!context) return fail(tenant.tls->where.error(context.error().to_string()).to_string());
    tenant_tls.emplace(tenant.name, std::move(*context));
  }
  // The client entry of a peer, in the state in force (a reload changes
  // who may connect from the next connection on), and its tenant's CA.
  auto lookup = [&published, tenant_tls = std::move(tenant_tls)](
                    const gateway::Endpoint& peer) -> std::optional<gateway_shell::RadSecPeer> {
    const std::shared_ptr<const gateway::GatewayState> state = published.current().second;
    const config::ClientDef* client = state->find_client(peer, gateway::Listener::kRadSec);
    if (client == nullptr) return std::nullopt;
    if (client->tenant == 0)
      return gateway_shell::RadSecPeer{.client = client->name, .certificate_name = client->certificate_name};
    const std::string& tenant = state->tenant_of(*client).name();
    const auto context = tenant_tls.find(tenant);
    // Never the default CA for another tenant's client: without its own
    // context (a tls section added by a reload, which needs a restart) it is refused.
    if (context == tenant_tls.end()) return std::nullopt;
    return gateway_shell::RadSecPeer{.client = tenant + "/" + client->name,
                                     .tls = context->second,
                                     .certificate_name = client->certificate_name};
  };
  auto server = gateway_shell::RadSecServer::start(std::move(options), factory.make_handler(worker), worker,
                                                   std::move(lookup));
  if (!server) return fail(server.error().to_string());
  for (const gateway::Endpoint& local : (*server)->listeners())
    spdlog::info("listening on {} (RadSec, TLS over TCP)", io::to_string(local));
  return std::move(*server);
}

// One reload of `radiusward gateway` (docs/operations.md "Reload"): the
// config file (with the command line's flags again) and every file it names
// are read and checked whole, off the request path; only when nothing is
// wrong is the new state published to the workers. Run by io::Reloader, one
// at a time, so `running_` needs no lock of its own.
class GatewayReload {
 public:
  GatewayReload(const GatewayCommand& command, config::GatewayConfig running,
                gateway_shell::PublishedState& published, io::ConfigInForce& config_in_force)
      : command_(command),
        running_(std::move(running)),
        published_(published),
        config_in_force_(config_in_force) {}

  Result<void, config::ConfigErrors> operator()() {
    auto next = gateway_config(command_);
    if (!next) return fail(std::move(next.error()));
    config::ConfigErrors errors = config::gateway_restart_changes(running_, *next);
    auto files = load_referenced_files(*next);
    if (!files) errors.insert(errors.end(), files.error().begin(), files.error().end());
    // The certificates load and match (the connections keep theirs until a
    // restart, as the accounting section does).
    if (next->accounting && next->accounting->tls) {
      if (auto tls = cluster_tls_context(*next->accounting->tls, io::TlsRole::kClient); !tls)
        errors.push_back(tls.error());
    }
    check_tenant_tls(*next, errors);
    if (!errors.empty()) return fail(std::move(errors));
    const gateway::GatewayState& state = *files->state;
    spdlog::info("reload: {} clients, {} users entries, {} attributes, {} policy rules", state.client_count(),
                 state.users().entries().size(), state.dictionary().attribute_count(),
                 state.policy() != nullptr ? state.policy()->rules().size() : 0);
    std::string body = gateway_config_body(*next, *files);
    published_.publish(std::move(files->state));
    config_in_force_.replace(std::move(body));
    running_ = std::move(*next);
    return {};
  }

 private:
  const GatewayCommand& command_;
  config::GatewayConfig running_;
  gateway_shell::PublishedState& published_;
  io::ConfigInForce& config_in_force_;
};

// Waits for signals until SIGTERM or SIGINT and returns its name; SIGHUP
// reloads. Retired states are freed here, on the main thread, once no
// worker holds them (PublishedState::collect hands their memory back).
std::string_view serve_signals(io::Reloader& reloader, gateway_shell::PublishedState& published) {
  // What an overload took (queues, caches) goes back once it is over, even
  // under the usual load (io::HeapReturner; docs/limits.md).
  io::HeapReturner heap_returner;
  for (;;) {
    std::optional<io::SignalEvent> event = io::wait_for_signal(Duration::seconds(1));
    published.collect();
    (void)heap_returner.tick(io::monotonic_now());
    if (!event) continue;
    if (event->request == io::SignalRequest::kStop) return event->name;
    (void)reloader.reload(event->name);
  }
}

}  // namespace

void add_tls_flags(CLI::App& command, config::GatewayOverrides& flags) {
  command.add_option("--tls-cert", flags.tls_cert, "The gateway's server certificate (PEM; RadSec, EAP)")
      ->type_name("FILE");
  command.add_option("--tls-key", flags.tls_key, "Its private key (PEM)")->type_name("FILE");
  command.add_option("--tls-ca", flags.tls_ca, "The CA client certificates must chain to (PEM)")
      ->type_name("FILE");
  command
      .add_option("--tls-crl", flags.tls_crl, "That CA's CRL (PEM): revoked client certificates are refused")
      ->type_name("FILE");
  command.add_option("--radsec-port", flags.radsec_port, "RadSec (RADIUS over TLS) port (default 2083)")
      ->type_name("PORT");
  command
      .add_option("--radsec-clients", flags.radsec_clients,
                  "RadSec clients (clients.conf syntax, proto = tls): turns RadSec on")
      ->type_name("FILE");
}

int run_gateway(const GatewayCommand& command) {
  std::optional<Loaded> loaded = load_or_print_errors(gateway_config(command));
  if (!loaded) return kExitConfigError;
  const config::GatewayConfig& config = loaded->config;
  if (config::ConfigErrors errors = check_audit_key(config); !errors.empty()) {
    print_errors(errors);
    return kExitConfigError;
  }
  if (config::ConfigErrors errors = check_eap_forward_key(config); !errors.empty()) {
    print_errors(errors);
    return kExitConfigError;
  }
  io::setup_logging(config.logging);
  // Before any thread starts, so that every thread inherits the mask.
  if (auto blocked = io::block_process_signals(); !blocked) {
    spdlog::critical("{}", blocked.error().to_string());
    return kExitRuntimeFailure;
  }
  const Instant started_at = io::monotonic_now();
  // The gateway's certificate, before any thread: a wrong file is a config error.
  io::TlsContext gateway_tls;
  if (config.tls) {
    auto tls = gateway_tls_context(*config.tls);
    if (!tls) {
      spdlog::critical("{}", tls.error().to_string());
      return kExitConfigError;
    }
    gateway_tls = std::move(*tls);
  }
  io::ThreadLocalCsprng random;
  gateway_shell::DecisionLog decision_log;
  gateway_shell::ExplainLog explain_log;
  auto client = make_submission_client(config, random);
  if (!client) {
    spdlog::critical("{}", client.error());
    return kExitConfigError;
  }
  auto audit_logs = start_audit_logs(config);
  if (!audit_logs) {
    spdlog::critical("{}", audit_logs.error());
    return kExitRuntimeFailure;
  }
  gateway_shell::DecisionObservers observers;
  observers.add(&decision_log);
  std::vector<const gateway_shell::AuditLog*> audit_views;
  for (const std::unique_ptr<gateway_shell::AuditLog>& log : *audit_logs) {
    observers.add(log.get());
    audit_views.push_back(log.get());
  }
  std::unique_ptr<gateway::RequestHandlerFactory> factory =
      make_handler_factory(loaded->files, random, &observers, client->get());
  // One table of EAP conversations for all workers: a NAS's follow-ups may
  // come from other source ports, so reach other workers.
  std::unique_ptr<gateway::EapConversations> eap = make_eap_conversations(config, random);
  factory->set_eap_conversations(eap.get());
  if (eap) {
    spdlog::info("eap: {} (gateway id {}, at most {} conversations, idle timeout {} s)",
                 eap_method_list(loaded->files.state->options().access.eap), eap->gateway_id(),
                 eap->capacity(), eap->idle_timeout().to_ms() / 1000);
  }
  // SQL users and crypt(3) checks answer through the UDP server, which
  // starts after them: answers before it runs are lost and their requests
  // time out (the NAS retries).
  auto routes = std::make_shared<AnswerRoutes>();
  const auto post_answer = [routes](const gateway::Answer& answer) {
    routes->post(gateway::ticket_worker(answer.ticket), std::span(&answer, 1));
  };
  // One SQL store per tenant with an sql_users section: the same user name
  // in two tenants is two users, cached apart.
  std::vector<std::unique_ptr<gateway_shell::SqlUserCache>> sql_stores;
  gateway::ParkingSetup parking;
  const auto add_sql_store = [&](const config::SqlUsersConfig& sql) {
    sql_stores.push_back(make_sql_user_cache(sql, loaded->files));
    sql_stores.back()->set_answer_sink(post_answer);
    // One wait for every store: the longest configured.
    if (sql_stores.size() == 1 || sql.miss_wait > parking.lookup_timeout)
      parking.lookup_timeout = sql.miss_wait;
    return sql_stores.back().get();
  };
  if (config.sql_users) parking.user_store = add_sql_store(*config.sql_users);
  for (const config::TenantConfig& tenant : config.tenants) {
    if (tenant.sql_users)
      parking.tenant_user_stores.emplace_back(tenant.name, add_sql_store(*tenant.sql_users));
  }
  auto crypt_pool =
      std::make_unique<gateway_shell::CryptPool>(gateway_shell::CryptPoolOptions{}, post_answer);
  parking.crypt = crypt_pool.get();
  // TLS steps of EAP-TLS, PEAP and EAP-TTLS, off the workers and the RadSec thread.
  std::unique_ptr<gateway_shell::EapPool> eap_pool;
  if (eap) {
    eap_pool = std::make_unique<gateway_shell::EapPool>(
        gateway_shell::EapPoolOptions{
            .threads = config.eap.pool_threads,
            .queue_max = config.eap.pool_queue_max,
            .sql_wait = config.sql_users ? config.sql_users->miss_wait : Duration::milliseconds(20)},
        post_answer);
    parking.eap = eap_pool.get();
  }
  factory->set_parking(parking);
  factory->set_explain(explain_log.setup());
  gateway_shell::PublishedState published(loaded->files.state);
  gateway_shell::ReloadingHandlerFactory reloading(*factory, published);
  // The forwarder first: the workers' handlers are made with it. Its own
  // handler is made without it (a request forwarded here is never forwarded on).
  std::unique_ptr<gateway_shell::EapForwarder> forwarder;
  if (config.eap.forward && eap) {
    auto options = eap_forwarder_options(config);
    if (!options) {
      spdlog::critical("{}", options.error());
      return kExitConfigError;
    }
    auto started = gateway_shell::EapForwarder::start(
        std::move(*options), reloading.make_handler(kEapForwarderWorker), kEapForwarderWorker,
        [routes](int worker, std::span<const gateway_shell::AnswerNotice> answers) {
          routes->post(worker, answers);
        });
    if (!started) {
      spdlog::critical("eap forward: {}", started.error().to_string());
      return kExitRuntimeFailure;
    }
    forwarder = std::move(*started);
    routes->forwarder.store(forwarder.get());
    parking.forwarder = forwarder.get();
    parking.forward_timeout = config.eap.forward->timeout;
    factory->set_parking(parking);
    spdlog::info("eap forward: listening on {} (UDP), {} peer gateway(s)", io::to_string(forwarder->bound()),
                 config.eap.forward->peers.size());
  }
  // The configuration in force, as /config shows it: a reload replaces the
  // whole body (io::ConfigInForce::replace) once its new state is in place.
  io::ConfigInForce config_in_force;
  config_in_force.replace(gateway_config_body(config, loaded->files));
  io::Reloader reloader(GatewayReload(command, config, published, config_in_force));
  auto server = gateway_shell::UdpServer::start(gateway_shell::udp_server_options(config), reloading);
  if (!server) {
    spdlog::critical("{}", server.error().to_string());
    return kExitRuntimeFailure;
  }
  routes->udp.store(server->get());
  auto radsec = start_radsec(config, std::move(gateway_tls), reloading, published, (*server)->worker_count());
  if (!radsec) {
    spdlog::critical("radsec: {}", radsec.error());
    return kExitRuntimeFailure;
  }
  routes->radsec.store(radsec->get());
  if (*client) {
    auto started =
        (*client)->start([routes](int worker, std::span<const gateway_shell::AnswerNotice> answers) {
          routes->post(worker, answers);
        });
    if (!started) {
      spdlog::critical("{}", started.error().to_string());
      return kExitRuntimeFailure;
    }
    spdlog::info("accounting: submitting to {} member(s), first {}", config.accounting->members.size(),
                 config.accounting->members.front().address.text);
  } else {
    spdlog::info("accounting: not configured; Accounting-Requests are dropped unanswered");
  }
  auto admin = start_admin(config, client->get(), *factory, **server, published, config_in_force, explain_log,
                           reloader, started_at, radsec->get(), audit_views, eap.get(), forwarder.get(),
                           eap_pool.get());
  if (!admin) {
    spdlog::critical("{}", admin.error());
    return kExitRuntimeFailure;
  }
  // Every handler is made (UDP workers, RadSec, EAP forwarder): the start
  // state is held by `published` and the handlers alone from here, so that
  // the first reload frees it instead of keeping it beside every later one
  // (docs/benchmarking.md "Gateway memory by client").
  factory->forget_state();
  loaded->files.state.reset();
  // What loading the files took beyond what the state keeps (the file's
  // text, the parse, the vectors the entries move through) goes back to the
  // system, as after a reload (docs/benchmarking.md "Gateway memory by
  // client"). Milliseconds per hundred MiB of heap, once.
  (void)io::release_free_heap();
  spdlog::info("radiusward {} gateway started with {} workers", RW_VERSION, (*server)->worker_count());
  log_listeners(**server);
  const std::string_view signal = serve_signals(reloader, published);
  spdlog::info("{} received: stopping", signal);
  if (*admin) (*admin)->stop();
  // The client first: it posts answers to the workers, which stop next.
  if (*client) (*client)->stop();
  if (*radsec) (*radsec)->stop();
  (*server)->stop();
  // After the workers that forward to it, before the pools its handler uses.
  if (forwarder) forwarder->stop();
  // The workers that called the pools are stopped; the pools post to the
  // server (ignored once stopped) and stop before it is destroyed.
  sql_stores.clear();
  crypt_pool.reset();
  eap_pool.reset();
  // After the workers: every decision they made is queued, and is written now.
  for (const std::unique_ptr<gateway_shell::AuditLog>& log : *audit_logs) {
    log->stop();
    const gateway_shell::AuditLogStatus audit = log->status();
    spdlog::info("audit log {} (tenant {}): {} lines written, {} dropped, {} write errors, head sequence {}",
                 audit.path, log->tenant(), audit.written, audit.dropped, audit.write_errors,
                 audit.head.sequence);
  }
  gateway_shell::log_counters((*server)->counters());
  spdlog::info("stopped");
  return kExitOk;
}

namespace {

// One line per tenant: what `radiusward check` found in its files.
void print_tenant_summary(const config::GatewayConfig& config, const gateway::GatewayState& state) {
  const std::span<const gateway::TenantState> tenants = state.tenants();
  std::vector<std::size_t> clients(tenants.size());
  std::vector<std::size_t> radsec_clients(tenants.size());
  for (const config::ClientDef& client : state.clients()) ++clients[client.tenant];
  for (const config::ClientDef& client : state.radsec_clients()) ++radsec_clients[client.tenant];
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const gateway::TenantState& tenant = tenants[i];
    const std::optional<config::AuditConfig>& audit = i == 0 ? config.audit : config.tenants[i - 1].audit;
    std::printf(
        "tenant %s: %zu clients, %zu RadSec clients, %zu users entries, %zu policy rules, EAP %s, audit %s\n",
        tenant.name().c_str(), clients[i], radsec_clients[i], tenant.users().entries().size(),
        tenant.policy() != nullptr ? tenant.policy()->rules().size() : 0,
        tenant.eap().methods.empty() ? "off" : eap_method_list(tenant.eap()).c_str(),
        audit ? audit->path.path.c_str() : "none");
  }
}

}  // namespace

int run_check(const std::string& config_file) {
  std::optional<Loaded> loaded = load_or_print_errors(config::load_gateway_config(config_file));
  if (!loaded) return kExitConfigError;
  const config::GatewayConfig& config = loaded->config;
  config::ConfigErrors errors = check_accounting_security(config);
  // The gateway's certificate loads, matches its key, and the CA and CRL load.
  check_tenant_tls(config, errors);
  for (config::ConfigError& error : check_audit_key(config)) errors.push_back(std::move(error));
  for (config::ConfigError& error : check_eap_forward_key(config)) errors.push_back(std::move(error));
  if (!errors.empty()) {
    print_errors(errors);
    return kExitConfigError;
  }
  const gateway::GatewayState& state = *loaded->files.state;
  std::printf("%s: ok (%zu listen addresses, ports %u/%u, %zu clients, %zu users entries, %zu attributes)\n",
              config_file.c_str(), config.listen.size(), config.auth_port, config.acct_port,
              state.clients().size(), state.users().entries().size(), state.dictionary().attribute_count());
  if (config.radsec) {
    std::printf("%s: RadSec on TCP port %u with %zu RadSec clients\n", config_file.c_str(),
                config.radsec->port, state.radsec_clients().size());
  }
  if (config.eap.forward) {
    std::printf("%s: EAP forwarding on %s to %zu peer gateway(s)\n", config_file.c_str(),
                config.eap.forward->listen.text.c_str(), config.eap.forward->peers.size());
  }
  if (!state.options().access.eap.methods.empty()) {
    std::printf("%s: EAP methods offered: %s\n", config_file.c_str(),
                eap_method_list(state.options().access.eap).c_str());
  }
  if (const policy::Policy* policy = state.policy()) {
    std::printf("%s: ok (%zu policy rules, %zu groups, %zu MAB list entries)\n",
                policy->source_file().c_str(), policy->rules().size(), policy->groups().size(),
                policy->mab_entries());
  }
  if (!config.tenants.empty()) print_tenant_summary(config, state);
  return kExitOk;
}

int run_check_policy(const std::string& policy_file) {
  auto loaded = policy::load_policy(policy_file);
  if (!loaded) {
    print_errors(loaded.error());
    return kExitConfigError;
  }
  std::printf("%s: ok (%zu policy rules, %zu groups, %zu MAB list entries)\n", policy_file.c_str(),
              loaded->rules().size(), loaded->groups().size(), loaded->mab_entries());
  return kExitOk;
}

int run_check_member(const std::string& config_file) {
  auto loaded = config::load_member_config(config_file);
  if (!loaded) {
    print_errors(loaded.error());
    return kExitConfigError;
  }
  const config::MemberConfig& config = *loaded;
  std::vector<config::HostPort> addresses{config.submission_listen};
  if (config.raft_listen) addresses.push_back(*config.raft_listen);
  for (const config::MemberAddress& member : config.members) {
    addresses.push_back(member.raft);
    addresses.push_back(member.submission);
  }
  config::ConfigErrors errors = check_cluster_security(config.cluster_tls, config.insecure_plaintext_cluster,
                                                       io::TlsRole::kServer, addresses);
  if (!errors.empty()) {
    print_errors(errors);
    return kExitConfigError;
  }
  std::printf("%s: ok (member %llu, %zu members, %s)\n", config_file.c_str(),
              static_cast<unsigned long long>(config.id), config.members.size(),
              config.cluster_tls ? "cluster TLS" : "INSECURE plaintext cluster");
  return kExitOk;
}

int run_version() {
  std::printf("radiusward %s\n", RW_VERSION);
  return kExitOk;
}

}  // namespace rw::app
