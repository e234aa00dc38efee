// `radiusward member`: config -> ledger -> node -> submission server ->
// admin API, then wait for a stop signal or a failed node.
#include "app/member_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "admin/session_filter.h"
#include "app/exit_codes.h"
#include "app/referenced_files.h"
#include "base/assert.h"
#include "config/config_view.h"
#include "config/member_budget.h"
#include "config/member_config.h"
#include "config/member_reload.h"
#include "consensus/node.h"
#include "io/admin_metrics.h"
#include "io/admin_server.h"
#include "io/clock.h"
#include "io/config_in_force.h"
#include "io/heap.h"
#include "io/logging.h"
#include "io/reloader.h"
#include "io/signals.h"
#include "member_shell/admin_views.h"
#include "member_shell/export_loop.h"
#include "member_shell/ledger_state.h"
#include "member_shell/sql_export_sink.h"
#include "member_shell/submission_server.h"
#include "radius/dictionary.h"

namespace rw::app {
namespace {

// Records or sessions copied per lock of the ledger (LedgerState): small
// enough that apply() never waits long for an admin listing.
constexpr std::size_t kAdminPageItems = 1024;
// How long a membership POST waits for the leader's answer.
constexpr auto kMembershipTimeout = std::chrono::seconds(15);
// A node that shows no role this long after start has failed.
constexpr auto kNodeStartGrace = std::chrono::seconds(5);

struct Member {
  // As at start: what only a restart changes. A reload never touches it
  // (MemberReload keeps the configuration in force).
  config::MemberConfig config;
  member_shell::SubmissionAddressBook book;
  std::unique_ptr<member_shell::LedgerState> ledger;
  std::unique_ptr<member_shell::SubmissionServer> submission;
  std::unique_ptr<consensus::Node> node;
  io::AdminServer admin;

  // What a reload replaces (docs/operations.md "Reload"), read by the admin
  // thread through the two accessors below.
  [[nodiscard]] std::shared_ptr<const radius::Dictionary> dictionary() const {
    std::lock_guard lock(reloaded_mutex);
    return dictionary_;
  }
  // Null without an export: section.
  [[nodiscard]] std::shared_ptr<member_shell::ExportLoop> exporter() const {
    std::lock_guard lock(reloaded_mutex);
    return exporter_;
  }
  void set_dictionary(std::shared_ptr<const radius::Dictionary> next) {
    std::lock_guard lock(reloaded_mutex);
    dictionary_ = std::move(next);
  }
  std::shared_ptr<member_shell::ExportLoop> exchange_exporter(
      std::shared_ptr<member_shell::ExportLoop> next) {
    std::lock_guard lock(reloaded_mutex);
    return std::exchange(exporter_, std::move(next));
  }
  // Held while the exporter is stopped and another started (a reload) or
  // stopped for good (the stop); `stopping` then keeps a late reload from
  // starting one on a node that is going away.
  std::mutex exporter_change_mutex;
  bool stopping = false;  // Guarded by exporter_change_mutex.

  // /config: the configuration in force; a reload replaces its body whole.
  io::ConfigInForce config_in_force;
  bool recover_alone = false;  // MemberCommand::recover_alone
  // Times the known leader became another member, as the main thread sees
  // it every 100 ms (wait_for_stop); read by /metrics.
  std::atomic<std::uint64_t> leader_changes{0};

 private:
  mutable std::mutex reloaded_mutex;  // Guards only the two pointers: never held across a call.
  std::shared_ptr<const radius::Dictionary> dictionary_;
  std::shared_ptr<member_shell::ExportLoop> exporter_;
};

Result<std::shared_ptr<const radius::Dictionary>, config::ConfigError> load_dictionary(
    const config::MemberConfig& config) {
  if (!config.dictionary_dir) return radius::Dictionary::builtin();
  const std::string file = config.dictionary_dir->path + "/dictionary";
  if (config.dictionary_dir_optional && !std::filesystem::exists(file)) return radius::Dictionary::builtin();
  auto loaded = radius::Dictionary::load(file);
  if (!loaded) {
    const radius::DictionaryError& error = loaded.error();
    return fail(config::ConfigError{
        .file = error.file, .line = error.line, .column = error.column, .message = error.message});
  }
  return *loaded;
}

// Raft over TLS 1.3 (docs/security.md "Raft port"): the member's cluster_tls
// files on both sides, and the ids of the configured members as the only
// peers allowed to connect. The id set is copied into the check and never
// changes, so bridge threads may call it concurrently.
Result<consensus::TlsTransportOptions, config::ConfigError> raft_tls_options(
    const config::MemberConfig& config) {
  RW_ASSERT(config.cluster_tls.has_value());
  auto server = cluster_tls_context(*config.cluster_tls, io::TlsRole::kServer);
  if (!server) return fail(server.error());
  auto client = cluster_tls_context(*config.cluster_tls, io::TlsRole::kClient);
  if (!client) return fail(client.error());
  std::set<std::uint64_t> ids;
  for (const config::MemberAddress& member : config.members) ids.insert(member.id);
  consensus::TlsTransportOptions options;
  options.server_context = std::move(*server);
  options.client_context = std::move(*client);
  options.is_member = [ids = std::move(ids)](std::uint64_t id) { return ids.contains(id); };
  return options;
}

// `raft_tls` absent: plaintext raft, only with insecure_plaintext_cluster.
consensus::NodeOptions node_options(const config::MemberConfig& config,
                                    std::optional<consensus::TlsTransportOptions> raft_tls,
                                    member_shell::SubmissionServer& submission) {
  RW_ASSERT(raft_tls.has_value() || config.insecure_plaintext_cluster);
  consensus::NodeOptions options;
  options.tls = std::move(raft_tls);
  options.id = config.id;
  options.address = config.raft_address.text;
  if (config.raft_listen) options.bind_address = config.raft_listen->text;
  options.data_dir = config.data_dir.path;
  for (const config::MemberAddress& member : config.members) {
    options.voters.push_back(consensus::Member{member.id, member.raft.text});
  }
  options.bootstrap = config.bootstrap;
  options.election_timeout_ms = config.raft.election_timeout_ms;
  options.heartbeat_timeout_ms = config.raft.heartbeat_timeout_ms;
  options.snapshot_threshold = config.raft.snapshot_threshold;
  options.snapshot_trailing = config.raft.snapshot_trailing;
  options.log_bytes_max = config.raft.log_bytes_max;
  options.segment_bytes = config.raft.segment_bytes;
  options.log = [](consensus::LogLevel level, std::string_view message) {
    switch (level) {
      case consensus::LogLevel::kDebug:
        spdlog::debug("{}", message);
        break;
      case consensus::LogLevel::kInfo:
        spdlog::info("{}", message);
        break;
      case consensus::LogLevel::kWarning:
        spdlog::warn("{}", message);
        break;
      case consensus::LogLevel::kError:
        spdlog::error("{}", message);
        break;
    }
  };
  options.trace_library = spdlog::should_log(spdlog::level::debug);
  options.on_completions_ready = [&submission] { submission.wake(); };
  return options;
}

io::AdminResponse json_response(std::string body) {
  return io::AdminResponse{200, "application/json", std::move(body)};
}

void add_listing_routes(Member& m) {
  m.admin.route("GET", "/status", [&m](const io::AdminRequest&) {
    const std::shared_ptr<member_shell::ExportLoop> exporter = m.exporter();
    const std::optional<member_shell::ExportStatus> export_status =
        exporter ? std::optional(exporter->status()) : std::nullopt;
    return json_response(member_shell::status_json(m.config.id, m.node->status(), m.ledger->figures(),
                                                   m.submission->pending_submissions(), m.book,
                                                   export_status ? &*export_status : nullptr));
  });
  m.admin.route("GET", "/sessions", [&m](const io::AdminRequest& request) {
    // The filter runs before a session is serialised, so that a filtered
    // listing of a large table stays small (docs/admin_api.md "/sessions").
    auto filter = admin::parse_session_query(request.query);
    if (!filter) return io::admin_error(400, filter.error());
    std::string body = "{\"sessions\": [";
    std::optional<accounting::SessionKey> after;
    bool first = true;
    for (;;) {
      auto page = m.ledger->sessions_after(after ? &*after : nullptr, kAdminPageItems);
      if (page.empty()) break;
      for (const accounting::Session& session : page) {
        if (!member_shell::session_matches(*filter, session)) continue;
        body += first ? "\n  " : ",\n  ";
        body += member_shell::session_json(session);
        first = false;
      }
      after = page.back().key;
    }
    body += "\n]}\n";
    return json_response(std::move(body));
  });
  m.admin.route("GET", "/records", [&m](const io::AdminRequest&) {
    const std::shared_ptr<const radius::Dictionary> dictionary = m.dictionary();
    std::string lines;
    std::uint64_t after = 0;
    for (;;) {
      auto page = m.ledger->records_after(after, kAdminPageItems);
      if (page.empty()) break;
      for (const accounting::HeldRecord& held : page) lines += member_shell::record_line(held, *dictionary);
      after = page.back().index;
    }
    return io::ndjson_response(std::move(lines));
  });
}

// Runs one membership change on the leader and waits for its result.
io::AdminResponse change_membership(Member& m, const io::AdminRequest& request, std::string_view kind) {
  const consensus::NodeStatus status = m.node->status();
  if (status.role != consensus::Role::kLeader) {
    nlohmann::json body{
        {"error", "not leader"},
        {"leader_id", status.leader_id == 0 ? nlohmann::json(nullptr) : nlohmann::json(status.leader_id)}};
    return io::AdminResponse{409, "application/json", body.dump() + "\n"};
  }
  auto change = member_shell::parse_member_change(request.body, kind != "remove");
  if (!change) return io::admin_error(400, change.error());
  auto result = std::make_shared<std::promise<std::pair<int, std::string>>>();
  auto done = result->get_future();
  auto callback = [result](int code, std::string_view message) {
    result->set_value({code, std::string(message)});
  };
  spdlog::info("membership: {} member {} {}", kind, change->id, change->raft);
  if (kind == "add") {
    m.node->add_voter(consensus::Member{change->id, change->raft}, callback);
  } else if (kind == "remove") {
    m.node->remove_member(change->id, callback);
  } else {
    m.node->replace_member(change->id, consensus::Member{change->id, change->raft}, callback);
  }
  if (done.wait_for(kMembershipTimeout) != std::future_status::ready) {
    return io::admin_error(503, "the membership change did not finish in time; check /status");
  }
  const auto [code, message] = done.get();
  if (code != 0) {
    spdlog::warn("membership: {} member {} refused: {}", kind, change->id, message);
    return io::admin_error(409, message);
  }
  spdlog::info("membership: {} member {} done", kind, change->id);
  nlohmann::json body{{"ok", true}, {"change", std::string(kind)}, {"id", change->id}};
  if (!change->raft.empty()) body["raft"] = change->raft;
  return json_response(body.dump() + "\n");
}

void add_metrics(Member& m) {
  io::add_metrics_route(m.admin, [&m](io::PrometheusText& page) {
    const consensus::NodeStatus status = m.node->status();
    const member_shell::LedgerFigures figures = m.ledger->figures();
    const member_shell::SubmissionServerCounters& counters = m.submission->counters();
    const auto gauge = [&page](std::string_view name, std::string_view help, std::uint64_t value) {
      page.gauge(name, help, static_cast<std::int64_t>(value));
    };
    // A counter family: one sample per value of `label`.
    const auto family = [&page](std::string_view name, std::string_view help, std::string_view label) {
      return [&page, name, help, label](std::string_view value_of_label, std::uint64_t value) {
        page.counter(name, help, value, {{label, value_of_label}});
      };
    };
    gauge("radiusward_member_leader", "1 when this member is the ready leader.",
          status.ready_for_work ? 1 : 0);
    gauge("radiusward_member_leader_known", "1 when this member knows a leader.",
          status.leader_id != 0 ? 1 : 0);
    page.counter("radiusward_member_leader_changes_total",
                 "Times the leader this member knows became another member (seen every 100 ms).",
                 m.leader_changes.load(std::memory_order_relaxed));
    page.histogram("radiusward_member_commit_latency_seconds",
                   "Seconds from a Submit handed to raft to its commit, on the leader.",
                   m.submission->commit_latency(), 1e6);
    page.histogram("radiusward_member_submit_records", "Records per Submit handed to raft, on the leader.",
                   m.submission->batch_records());
    gauge("radiusward_member_term", "Current raft term.", status.term);
    gauge("radiusward_member_commit_index", "Raft commit index.", status.commit_index);
    gauge("radiusward_member_applied_index", "Last applied log index.", status.last_applied);
    gauge("radiusward_member_pending_submissions", "Submits handed to raft, not yet answered.",
          m.submission->pending_submissions());
    gauge("radiusward_member_records_held", "Records held until exported.", figures.records_held);
    gauge("radiusward_member_held_bytes", "Bytes of records held.", figures.held_bytes);
    // The bounds, so that an alert can compare (docs/limits.md, ledger.held_*).
    gauge("radiusward_member_held_records_max", "ledger.held_records_max: Submits are Busy at this bound.",
          m.config.ledger.held_records_max);
    gauge("radiusward_member_held_bytes_max", "ledger.held_bytes_max: Submits are Busy at this bound.",
          m.config.ledger.held_bytes_max);
    gauge("radiusward_member_accepting", "0 once the held records reached a bound (Submits answered Busy).",
          figures.accepting ? 1 : 0);
    gauge("radiusward_member_sessions", "Open sessions.", figures.sessions);
    gauge("radiusward_member_submission_connections", "Open gateway connections.",
          m.submission->connections());
    const auto ledger_counter =
        family("radiusward_member_ledger_events_total", "Ledger events, by reason.", "reason");
    ledger_counter("records_applied", figures.counters.records_applied);
    ledger_counter("records_duplicate", figures.counters.records_duplicate);
    ledger_counter("records_exported", figures.counters.records_exported);
    ledger_counter("entries_skipped", figures.counters.entries_skipped);
    ledger_counter("sessions_untracked", figures.counters.sessions_untracked);
    ledger_counter("sessions_closed_by_nas", figures.counters.sessions_closed_by_nas);
    ledger_counter("sessions_expired", figures.counters.sessions_expired);
    const auto submission_counter = [submission_events =
                                         family("radiusward_member_submission_events_total",
                                                "Submission server events, by reason.", "reason")](
                                        std::string_view reason, const std::atomic<std::uint64_t>& value) {
      submission_events(reason, value.load(std::memory_order_relaxed));
    };
    submission_counter("connections_accepted", counters.connections_accepted);
    submission_counter("connections_refused", counters.connections_refused);
    submission_counter("connections_closed", counters.connections_closed);
    submission_counter("submits", counters.submits);
    submission_counter("records", counters.records);
    submission_counter("committed", counters.committed);
    submission_counter("not_leader", counters.not_leader);
    submission_counter("busy", counters.busy);
    submission_counter("session_counts", counters.session_counts);
    submission_counter("write_overflows", counters.write_overflows);
    submission_counter("tls_refused", counters.tls_refused);
    submission_counter("hello_timeouts", counters.hello_timeouts);
    submission_counter("idle_timeouts", counters.idle_timeouts);
    submission_counter("submits_over_limit", counters.submits_over_limit);
    if (const std::shared_ptr<member_shell::ExportLoop> exporter = m.exporter()) {
      const member_shell::ExportStatus exported = exporter->status();
      const auto export_counter = family("radiusward_member_export_records_total",
                                         "Records the exporter handled, by outcome.", "outcome");
      export_counter("exported", exported.records_exported);
      export_counter("quarantined", exported.records_quarantined);
      export_counter("resent", exported.records_resent);
      gauge("radiusward_member_export_failures", "Failed export database calls since start.",
            exported.failures);
      page.counter("radiusward_member_export_log_rows_pruned_total",
                   "Log-table rows deleted by export.log_retention_days.", exported.log_rows_pruned);
      page.counter("radiusward_member_export_prune_failures_total", "Failed log-retention rounds.",
                   exported.prune_failures);
      gauge("radiusward_member_export_active", "1 while this member exports (the ready leader).",
            exported.active ? 1 : 0);
      gauge("radiusward_member_export_connected", "1 when the exporter's last database call succeeded.",
            exported.connected ? 1 : 0);
      gauge("radiusward_member_export_lag_records",
            "Held records above the database's export cursor, as of the exporter's last look.",
            exported.lag_records);
      page.gauge("radiusward_member_export_lag_milliseconds",
                 "Age of the oldest record not yet exported (gateway receive time), as of the exporter's "
                 "last look.",
                 static_cast<std::int64_t>(exported.lag_seconds * 1000));
      gauge("radiusward_member_export_cursor_alarm",
            "1 when the database's export cursor is below the cluster's: the export stopped.",
            exported.cursor_alarm ? 1 : 0);
    }
    for (std::size_t i = 0; i < member_shell::kCloseReasonCount; ++i) {
      submission_counter(member_shell::to_string(static_cast<member_shell::CloseReason>(i)),
                         counters.protocol_closes[i]);
    }
    // Raft over TLS (docs/security.md "Raft port"); all zero in plaintext mode.
    const consensus::TlsTransportCounters& transport = status.transport;
    const auto transport_counter = family("radiusward_member_raft_transport_total",
                                          "Raft TLS transport connections, by event.", "event");
    transport_counter("inbound_accepted", transport.inbound_accepted);
    transport_counter("outbound_connected", transport.outbound_connected);
    transport_counter("refused_handshake", transport.refused_handshake);
    transport_counter("refused_identity", transport.refused_identity);
    transport_counter("refused_preamble", transport.refused_preamble);
    transport_counter("refused_timeout", transport.refused_timeout);
    transport_counter("refused_overload", transport.refused_overload);
    transport_counter("outbound_failed", transport.outbound_failed);
    // Snapshots hold the raft loop (docs/consensus.md trap 8): how many this
    // member took and how long they paused it, to set against
    // raft.election_timeout_ms.
    const consensus::SnapshotFigures& snapshots = status.snapshots;
    gauge("radiusward_member_raft_snapshots_taken", "Snapshots this member took since start.",
          snapshots.taken);
    gauge("radiusward_member_raft_snapshot_last_microseconds", "Loop-thread time of the latest snapshot.",
          snapshots.last_us);
    gauge("radiusward_member_raft_snapshot_max_microseconds",
          "Longest loop-thread time of a snapshot since start.", snapshots.max_us);
    gauge("radiusward_member_raft_snapshot_last_bytes", "Size of the latest snapshot.", snapshots.last_bytes);
    // Serialised in a forked child while the loop goes on (docs/consensus.md
    // "Snapshots in a child process"): how many, how long the child took,
    // and the failures that moved the snapshots back onto the loop thread.
    gauge("radiusward_member_raft_snapshots_in_child",
          "Snapshots serialised in a child process while the raft loop went on.", snapshots.in_child);
    gauge("radiusward_member_raft_snapshot_child_last_microseconds",
          "Time of the latest child-serialised snapshot, from the fork to its last byte read.",
          snapshots.child_last_us);
    gauge("radiusward_member_raft_snapshot_child_max_microseconds",
          "Longest time of a child-serialised snapshot since start.", snapshots.child_max_us);
    gauge("radiusward_member_raft_snapshot_child_failures",
          "Snapshot children that failed; after the first, snapshots are serialised on the loop thread.",
          snapshots.child_failures);
    // The raft log held in memory is bounded in bytes (raft.log_bytes_max,
    // docs/consensus.md "Log held in memory").
    gauge("radiusward_member_raft_snapshots_for_log_bytes",
          "Snapshots taken because the log since the last one reached half of its byte bound.",
          snapshots.for_log_bytes);
    gauge("radiusward_member_raft_log_bytes_bound",
          "The in-memory raft log's byte bound now: raft.log_bytes_max, or the latest snapshot's size when "
          "larger.",
          snapshots.log_bytes_bound);
    gauge("radiusward_member_raft_snapshots_for_quiet_log",
          "Snapshots taken to compact a quiet log to its last entry (docs/limits.md, Member memory budget).",
          snapshots.for_quiet_log);
    gauge("radiusward_member_raft_quiet_compactions_skipped",
          "Quiet-log compactions called off because load came back before the leader's barrier.",
          snapshots.quiet_compactions_skipped);
    gauge("radiusward_member_raft_log_bytes_since_snapshot",
          "Bytes of the entries applied since this member's latest snapshot.", snapshots.log_bytes_since);
    gauge("radiusward_member_raft_snapshots_restored",
          "Snapshots restored since start: loaded from data_dir at start or installed from the leader.",
          snapshots.restored);
    // Where a member's memory goes (docs/limits.md "Member memory budget").
    gauge("radiusward_member_raft_log_bytes_held",
          "Bytes of the entries in the raft log held in memory (since the snapshot and trailing), counted "
          "once a second.",
          status.log_bytes_held);
    gauge("radiusward_member_raft_snapshot_buffer_bytes",
          "Bytes of the snapshot buffer kept between snapshots (0 once released on a quiet log).",
          snapshots.buffer_bytes);
    io::add_heap_metrics(page, "radiusward_member_heap_bytes");
  });
}

Result<void, std::string> start_admin(Member& m, io::Reloader& reloader) {
  if (!m.config.admin_socket) return {};
  add_listing_routes(m);
  for (std::string_view kind : {"add", "remove", "replace"}) {
    m.admin.route("POST", "/members/" + std::string(kind), [&m, kind](const io::AdminRequest& request) {
      return change_membership(m, request, kind);
    });
  }
  add_metrics(m);
  io::add_version_route(m.admin, RW_VERSION, "member");
  io::add_config_route(m.admin, m.config_in_force);
  io::add_reload_routes(m.admin, reloader);
  const std::string& path = m.config.admin_socket->path;
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  auto options = io::admin_server_options(path, m.config.admin_listen, m.config.admin_token_file);
  if (!options) return fail(options.error());
  auto started = m.admin.start(std::move(*options));
  if (!started) return fail(started.error().to_string());
  spdlog::info("admin API on {}", path);
  if (m.admin.tcp_port()) spdlog::info("admin API on TCP {} (bearer token)", m.config.admin_listen->text);
  return {};
}

// Stops the running exporter, if any (its batch in hand commits or rolls
// back, docs/accounting.md), then starts the one of `section` with
// `dictionary`, which idles until this member is the ready leader. At start
// and at every accepted reload; false, changing nothing, once the member is
// stopping.
bool replace_exporter(Member& m, const std::optional<config::MemberConfig::Export>& section,
                      std::shared_ptr<const radius::Dictionary> dictionary) {
  std::lock_guard change(m.exporter_change_mutex);
  if (m.stopping) return false;
  // The stopped loop stays visible to /status and /metrics until its
  // successor takes its place.
  std::optional<member_shell::ExportStatus> counts;
  if (const std::shared_ptr<member_shell::ExportLoop> running = m.exporter()) {
    running->stop();
    counts = running->status();
  }
  if (!section) {
    m.exchange_exporter(nullptr);
    return true;
  }
  const config::MemberConfig::Export& e = *section;
  std::unique_ptr<member_shell::ExportSink> sink =
      e.sqlite ? member_shell::make_sqlite_sink(e.sqlite->path, std::move(dictionary))
               : member_shell::make_postgres_sink(e.postgresql_conninfo, std::move(dictionary),
                                                  e.postgresql_timeouts);
  auto next = std::make_shared<member_shell::ExportLoop>(
      std::move(sink),
      member_shell::ExportLoopOptions{
          .database = e.sqlite ? "sqlite:" + e.sqlite->path : std::string("postgresql"),
          .batch_records_max = e.batch_records_max,
          .poll_interval_ms = e.poll_interval_ms,
          .batch_delay_ms = e.batch_delay_ms,
          .retry_initial_ms = e.retry_initial_ms,
          .retry_max_ms = e.retry_max_ms,
          .log_retention_days = e.log_retention_days},
      *m.ledger, *m.node);
  if (counts) next->continue_counts(*counts);
  next->start();
  m.exchange_exporter(std::move(next));
  return true;
}

// Stops the exporter for good: before the node, so that its last batch
// commits or rolls back and a cursor entry it submits still reaches the
// node. A reload under way finishes first; none starts one after.
void stop_exporter(Member& m) {
  std::lock_guard change(m.exporter_change_mutex);
  m.stopping = true;
  if (const std::shared_ptr<member_shell::ExportLoop> running = m.exchange_exporter(nullptr)) running->stop();
}

// One reload of `radiusward member` (docs/operations.md "Reload"): the config
// file and every file it names are read and checked whole; a change of a key
// other than export: and dictionary_dir is an error. Only when nothing is
// wrong does the member switch: the new dictionary for /records, and the
// exporter restarted with the new export settings and dictionary. The raft
// node, the ledger and the submission port never notice. Run by
// io::Reloader, one at a time, so `running_` needs no lock of its own.
class MemberReload {
 public:
  MemberReload(std::string config_file, Member& m)
      : config_file_(std::move(config_file)), running_(m.config), m_(m) {}

  Result<void, config::ConfigErrors> operator()() {
    auto next = config::load_member_config(config_file_);
    if (!next) return fail(std::move(next.error()));
    config::ConfigErrors errors = config::member_restart_changes(running_, *next);
    auto dictionary = load_dictionary(*next);
    if (!dictionary) errors.push_back(std::move(dictionary.error()));
    // The certificates load and match, as at start; the connections keep
    // theirs until a restart (cluster_tls needs one).
    if (next->cluster_tls) {
      if (auto tls = raft_tls_options(*next); !tls) errors.push_back(std::move(tls.error()));
    }
    if (!errors.empty()) return fail(std::move(errors));
    if (!replace_exporter(m_, next->exporter, *dictionary)) {
      return fail(config::ConfigErrors{config::SourceLocation{.file = config_file_}.error(
          "the member is stopping: nothing was reloaded")});
    }
    m_.set_dictionary(std::move(*dictionary));
    m_.config_in_force.replace(config::config_body("member", config::member_config_json(*next),
                                                   io::digest_files(config::named_files(*next))));
    spdlog::info("reload: export {}, dictionary {}",
                 next->exporter ? (next->exporter->sqlite ? "into SQLite" : "into PostgreSQL") : "none",
                 next->dictionary_dir ? next->dictionary_dir->path : std::string("built-in"));
    running_ = std::move(*next);
    return {};
  }

 private:
  std::string config_file_;
  config::MemberConfig running_;
  Member& m_;
};

// Waits for SIGTERM/SIGINT, reloading on SIGHUP; false when the node failed
// first. Counts the leader changes it sees in `leader_changes`.
bool wait_for_stop(const consensus::Node& node, std::atomic<std::uint64_t>& leader_changes,
                   io::Reloader& reloader) {
  std::uint64_t last_leader = 0;
  const auto started = std::chrono::steady_clock::now();
  bool seen_running = false;
  // What a burst took goes back once it is over, quiet or not (io::HeapReturner).
  io::HeapReturner heap_returner;
  for (;;) {
    (void)heap_returner.tick(io::monotonic_now());
    if (std::optional<io::SignalEvent> signal = io::wait_for_signal(Duration::milliseconds(100))) {
      if (signal->request == io::SignalRequest::kReload) {
        (void)reloader.reload(signal->name);
        continue;
      }
      spdlog::info("{} received: stopping", signal->name);
      return true;
    }
    const consensus::NodeStatus status = node.status();
    if (status.leader_id != 0 && status.leader_id != last_leader) {
      // The first leader known after start is no change.
      if (last_leader != 0) leader_changes.fetch_add(1, std::memory_order_relaxed);
      last_leader = status.leader_id;
    }
    const bool running = status.role != consensus::Role::kUnavailable;
    if (running) seen_running = true;
    // A node turned unavailable is said so first, with its storage error
    // when one caused it; a storage error alone (libraft keeps its role
    // after a failed write, docs/consensus.md) ends the member too.
    if (!running && (seen_running || std::chrono::steady_clock::now() - started > kNodeStartGrace)) {
      // libraft 0.15.0 never leaves RAFT_UNAVAILABLE: only a restart from
      // the data folder brings the member back (docs/consensus.md).
      const std::string reason = status.failure.empty() ? "no raft role" : status.failure;
      spdlog::critical(
          "the raft node is unavailable ({}{}); exiting so that the supervisor restarts this member", reason,
          status.storage_error.empty() ? "" : "; storage error in " + status.storage_error);
      return false;
    }
    if (!status.storage_error.empty()) {
      spdlog::critical("storage error in {}; exiting so that the supervisor restarts this member",
                       status.storage_error);
      return false;
    }
  }
}

// What the configured bounds need when full (docs/limits.md "Member memory
// budget"), so that an operator sees it beside the memory the member uses.
void log_memory_budget(const config::MemberConfig& config) {
  const config::MemoryBudget budget = config::member_memory_budget(config);
  std::string items;
  for (const config::BudgetItem& item : budget.items) {
    items += fmt::format("{}{} {:.1f}", items.empty() ? "" : ", ", item.what,
                         static_cast<double>(item.bytes) / (1 << 20));
  }
  spdlog::info("memory budget at the configured bounds, all full: {:.1f} MiB{} ({} MiB)",
               static_cast<double>(budget.total_bytes) / (1 << 20),
               budget.log_unbounded ? " and an unbounded raft log" : "", items);
}

int start_and_run(Member& m, const std::string& config_file) {
  m.ledger = std::make_unique<member_shell::LedgerState>(
      accounting::LedgerLimits{.held_records_max = m.config.ledger.held_records_max,
                               .held_bytes_max = m.config.ledger.held_bytes_max,
                               .sessions_max = m.config.ledger.sessions_max,
                               .sessions_bytes_max = m.config.ledger.sessions_bytes_max,
                               .session_expiry_multiple = m.config.ledger.session_expiry_multiple,
                               .session_default_interim_s = m.config.ledger.session_default_interim_s});
  member_shell::SubmissionServerOptions submission_options{
      .host = m.config.submission_listen.host,
      .port = m.config.submission_listen.port,
      .member_id = m.config.id,
      .book = m.book,
      .connections_max = m.config.submission_connections_max};
  std::optional<consensus::TlsTransportOptions> raft_tls;
  if (m.config.cluster_tls) {
    auto tls = cluster_tls_context(*m.config.cluster_tls, io::TlsRole::kServer);
    if (!tls) {
      spdlog::critical("{}", tls.error().to_string());
      return kExitConfigError;
    }
    submission_options.tls = std::move(*tls);
    auto raft = raft_tls_options(m.config);
    if (!raft) {
      spdlog::critical("{}", raft.error().to_string());
      return kExitConfigError;
    }
    raft_tls = std::move(*raft);
  } else {
    spdlog::warn(
        "insecure_plaintext_cluster: the submission and raft ports take traffic from anyone who can "
        "reach them, in plaintext; use cluster_tls outside a test cluster on one host");
  }
  auto submission = member_shell::SubmissionServer::bind(std::move(submission_options));
  if (!submission) {
    spdlog::critical("{}", submission.error().to_string());
    return kExitRuntimeFailure;
  }
  m.submission = std::move(*submission);
  consensus::NodeOptions options = node_options(m.config, std::move(raft_tls), *m.submission);
  options.recover_alone = m.recover_alone;
  auto node = consensus::Node::start(std::move(options), *m.ledger);
  if (!node) {
    spdlog::critical("raft node: {}", node.error().message);
    return kExitRuntimeFailure;
  }
  m.node = std::move(*node);
  m.submission->start(*m.node, *m.ledger);
  (void)replace_exporter(m, m.config.exporter, m.dictionary());
  spdlog::info("radiusward {} member {} started: raft {}, submissions on {}", RW_VERSION, m.config.id,
               m.config.raft_address.text, m.config.submission_listen.text);
  log_memory_budget(m.config);
  io::Reloader reloader{MemberReload(config_file, m)};
  if (auto admin = start_admin(m, reloader); !admin) {
    spdlog::critical("{}", admin.error());
    stop_exporter(m);
    m.node->stop(false);
    m.submission->stop();
    return kExitRuntimeFailure;
  }
  const bool clean = wait_for_stop(*m.node, m.leader_changes, reloader);
  // Before the node: its last batch commits or rolls back, and a cursor
  // entry it submits still reaches the node.
  stop_exporter(m);
  // A leader hands leadership over first, so gateways barely notice (issue 3).
  m.node->stop(/*transfer_leadership=*/clean);
  m.submission->stop();
  m.admin.stop();
  spdlog::info(clean ? "stopped" : "stopped after a node failure");
  return clean ? kExitOk : kExitRuntimeFailure;
}

}  // namespace

CLI::App* add_member_command(CLI::App& app, MemberCommand& command) {
  CLI::App* member =
      app.add_subcommand("member", "Run a cluster member: raft node, ledger, submission listener");
  member->add_option("--config", command.config_file, "Member YAML config file (docs/configuration.md)")
      ->type_name("FILE")
      ->required();
  member->add_flag(
      "--recover-alone", command.recover_alone,
      "Make this member the only voter of its log before starting, once, after a majority of the "
      "members lost their disks for good (docs/operations.md \"Two disks lost for good\")");
  return member;
}

int run_member(const MemberCommand& command) {
  auto config = config::load_member_config(command.config_file);
  if (!config) {
    for (const config::ConfigError& error : config.error())
      std::fprintf(stderr, "%s\n", error.to_string().c_str());
    return kExitConfigError;
  }
  Member m;
  m.config = std::move(*config);
  m.recover_alone = command.recover_alone;
  m.config_in_force.replace(config::config_body("member", config::member_config_json(m.config),
                                                io::digest_files(config::named_files(m.config))));
  io::setup_logging(m.config.logging);
  auto dictionary = load_dictionary(m.config);
  if (!dictionary) {
    std::fprintf(stderr, "%s\n", dictionary.error().to_string().c_str());
    return kExitConfigError;
  }
  m.set_dictionary(std::move(*dictionary));
  for (const config::MemberAddress& member : m.config.members) m.book[member.id] = member.submission.text;
  // Before any thread starts: the arena bound applies to threads created after it.
  io::tune_heap();
  // Before any thread starts, so that every thread inherits the mask.
  if (auto blocked = io::block_process_signals(); !blocked) {
    spdlog::critical("{}", blocked.error().to_string());
    return kExitRuntimeFailure;
  }
  return start_and_run(m, command.config_file);
}

}  // namespace rw::app
