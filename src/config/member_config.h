// A cluster member's YAML configuration (`radiusward member --config FILE`):
// text in, a validated immutable MemberConfig out, or every error found as
// `file:line:col: message` (docs/design.md invariant 5). Unknown keys are errors.
// Every key is documented in docs/configuration.md ("The member config file").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "config/gateway_config.h"

namespace rw::config {

// The most members an address book may list: a cluster of 9 voters
// tolerates 4 failures; more only slows every commit.
inline constexpr std::size_t kMembersMax = 9;
inline constexpr std::uint64_t kMemberIdMax = 255;

// Raft addresses are IPv4 only: libraft 0.15's TCP transport parses them
// with uv_ip4_addr and cannot listen on or dial IPv6 (docs/consensus.md).
// A raft address that parse_host_port accepts and this refuses is an error.
[[nodiscard]] bool is_raft_address(const HostPort& address);

// One entry of the address book: a member's raft id, where its raft peers
// reach it (IPv4), and where gateways submit to it (IPv4 or IPv6).
struct MemberAddress {
  std::uint64_t id = 0;
  HostPort raft{};
  HostPort submission{};
  SourceLocation where{};

  friend bool operator==(const MemberAddress&, const MemberAddress&) = default;
};

// A validated member configuration. Defaults are those of
// docs/configuration.md, which equal consensus::NodeOptions and
// accounting::LedgerLimits (ledger_state_test.cc checks it).
struct MemberConfig {
  std::string source_file{};

  std::uint64_t id = 0;       // 1..255
  ConfiguredPath data_dir{};  // Raft log and snapshots.
  HostPort raft_address{};    // Equals members[id].raft.
  // Where the raft port binds, when it differs from raft_address (IPv4): a
  // wildcard behind an address that forwards to it, such as a Kubernetes
  // Service's ClusterIP. Absent: raft_address.
  std::optional<HostPort> raft_listen{};
  HostPort submission_listen{};
  std::optional<ConfiguredPath> admin_socket{};  // Absent: no admin API.
  // The admin API over TCP too, with a bearer token (as the gateway's).
  std::optional<HostPort> admin_listen{};
  std::optional<ConfiguredPath> admin_token_file{};
  // True: the first start bootstraps `members` as the voters. False: start
  // empty and wait to be added (a replacement for a member whose disk was lost).
  bool bootstrap = true;
  std::vector<MemberAddress> members{};  // 1..kMembersMax, ids unique.

  // This member's cluster identity (certificate CN member-<id>): the
  // submission port requires gateway certificates of this CA, and the raft
  // transport uses the same files. Required unless insecure_plaintext_cluster.
  std::optional<ClusterTlsConfig> cluster_tls{};
  // Plaintext submission (and raft) traffic, for a test cluster on one host
  // only; `radiusward check` refuses it unless every address is loopback.
  bool insecure_plaintext_cluster = false;

  // Gateway connections the submission port keeps open at once; each holds
  // a 1 MiB frame reader (docs/limits.md "Member memory budget").
  unsigned submission_connections_max = 64;
  // A ceiling on member_memory_budget(), the memory the bounds below need
  // when full (docs/limits.md "Member memory budget"), in MiB: a config whose
  // bounds need more is refused. 0: not checked.
  std::uint64_t memory_budget_mib = 0;

  struct Raft {
    unsigned election_timeout_ms = 300;
    unsigned heartbeat_timeout_ms = 50;
    unsigned snapshot_threshold = 16384;
    unsigned snapshot_trailing = 8192;
    // The raft log held in memory, bytes (docs/consensus.md "Log held in memory").
    std::size_t log_bytes_max = std::size_t{64} << 20;
    std::uint64_t segment_bytes = 8 << 20;
    friend bool operator==(const Raft&, const Raft&) = default;
  } raft;

  struct Ledger {
    std::size_t held_records_max = 64'000;
    std::size_t held_bytes_max = std::size_t{16} << 20;
    std::size_t sessions_max = 1'000'000;
    std::size_t sessions_bytes_max = std::size_t{16} << 20;
    unsigned session_expiry_multiple = 3;
    unsigned session_default_interim_s = 3600;
    friend bool operator==(const Ledger&, const Ledger&) = default;
  } ledger;

  // PostgreSQL session bounds (docs/configuration.md, export.postgresql.*),
  // so that a stuck peer (an old leader partitioned while holding the
  // cursor row, a dead network path) fails a call instead of blocking the
  // exporter for hours. The TCP ones go into the connection parameters
  // (a value in conninfo wins), the others are SET on each connection.
  struct PostgresTimeouts {
    unsigned connect_timeout_s = 10;
    unsigned lock_timeout_ms = 5'000;
    unsigned statement_timeout_ms = 60'000;
    unsigned idle_in_transaction_session_timeout_ms = 60'000;
    unsigned keepalives_idle_s = 30;
    unsigned keepalives_interval_s = 10;
    unsigned keepalives_count = 3;
    unsigned tcp_user_timeout_ms = 60'000;
    friend bool operator==(const PostgresTimeouts&, const PostgresTimeouts&) = default;
  };

  // The SQL export (docs/design.md invariant 3; the keys export.* of
  // docs/configuration.md "The member config file"). Absent: no exporter
  // runs and records stay held until the held bounds stop acknowledging.
  struct Export {
    // Exactly one database: an SQLite file or a PostgreSQL connection.
    std::optional<ConfiguredPath> sqlite{};
    // libpq connection string, TLS keywords (sslmode, sslrootcert, sslcert,
    // sslkey, sslcrl) appended from their own keys. Empty: not PostgreSQL.
    std::string postgresql_conninfo{};
    PostgresTimeouts postgresql_timeouts{};
    std::size_t batch_records_max = 2000;  // records per transaction
    unsigned poll_interval_ms = 20;        // idle wait for new records
    unsigned batch_delay_ms = 100;         // least time between batches while less than one waits; 0: none
    unsigned retry_initial_ms = 100;       // first backoff after a failure
    unsigned retry_max_ms = 10'000;        // backoff ceiling
    // Log rows received longer ago are deleted (docs/accounting.md "Keeping
    // the log table bounded"); 0 keeps every row.
    unsigned log_retention_days = 0;
    friend bool operator==(const Export&, const Export&) = default;
  };
  std::optional<Export> exporter{};

  // Dictionary for attribute names in /records: absent means the built-in
  // one; when `dictionary_dir_optional` (the default was not overridden) a
  // missing folder means the built-in one too.
  std::optional<ConfiguredPath> dictionary_dir{};
  bool dictionary_dir_optional = true;

  GatewayConfig::Logging logging{};

  // Where each top-level key is written, for errors about a whole key (a
  // reload's "needs a restart", config/member_reload.h).
  std::map<std::string, SourceLocation, std::less<>> key_where{};

  // The address book entry of member `member_id`, if listed.
  [[nodiscard]] const MemberAddress* find_member(std::uint64_t member_id) const;

  friend bool operator==(const MemberConfig&, const MemberConfig&) = default;
};

// Parses and validates YAML text. `file_name` names the file in errors and
// resolves relative paths (against its folder). Collects every error. Reads
// no files.
[[nodiscard]] Result<MemberConfig, ConfigErrors> parse_member_config(std::string_view text,
                                                                     std::string_view file_name);

// Reads `path` and parses it. An unreadable file is one error without a position.
[[nodiscard]] Result<MemberConfig, ConfigErrors> load_member_config(const std::string& path);

}  // namespace rw::config
