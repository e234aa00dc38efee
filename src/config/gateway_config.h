// The gateway's YAML configuration: text in, a validated immutable
// GatewayConfig out, or every error found, each as `file:line:col: message`
// (docs/design.md invariant 5). The schema lives in code; unknown keys are errors.
// Every key is documented in docs/configuration.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/time.h"

namespace rw::config {

// One configuration error. `line` and `column` are 1-based; 0 means the
// position is unknown (errors about command-line flags, unreadable files).
struct ConfigError {
  std::string file{};
  int line = 0;
  int column = 0;
  std::string message{};

  // "file:line:col: message", or "file: message" without a position.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const ConfigError&, const ConfigError&) = default;
};

using ConfigErrors = std::vector<ConfigError>;

// Where a value was written: the file and the 1-based position of its key,
// so that later checks (a users file that does not parse, a file that cannot
// be read) can point at the line that named it. Line 0 means "not from a
// file" (a default, or a command-line flag).
struct SourceLocation {
  std::string file{};
  int line = 0;
  int column = 0;

  // Builds an error at this location.
  [[nodiscard]] ConfigError error(std::string message) const;

  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

// A path named by the configuration, already resolved: relative paths in a
// config file are taken relative to that file's folder; paths from flags are
// kept as given (relative to the working directory).
struct ConfiguredPath {
  std::string path{};
  SourceLocation where{};

  friend bool operator==(const ConfiguredPath&, const ConfiguredPath&) = default;
};

// An IP address to listen on, parsed from its text form.
struct ListenAddress {
  std::string text{};                    // As written: "0.0.0.0", "::1".
  std::array<std::uint8_t, 16> bytes{};  // Network order; IPv4 uses the first 4.
  bool is_v6 = false;
  SourceLocation where{};

  friend bool operator==(const ListenAddress&, const ListenAddress&) = default;
};

enum class LogLevel : std::uint8_t { kTrace, kDebug, kInfo, kWarn, kError, kOff };
enum class LogFormat : std::uint8_t { kText, kJson };

// What MAB (MAC Authentication Bypass) does with a MAC address that no users
// entry matches.
enum class MabDefault : std::uint8_t { kReject, kAccept };

// What a user with a Simultaneous-Use limit gets when the cluster cannot
// count their open sessions: no accounting configured, no leader reachable,
// no answer within session_query_timeout (docs/authentication.md).
enum class SimultaneousUseUnavailable : std::uint8_t {
  kReject,  // Access-Reject (the default; FreeRADIUS fails the check closed).
  kAccept,  // Access-Accept as if the limit were not reached.
  kDrop,    // No answer: the NAS retransmits or fails over.
};

[[nodiscard]] std::string_view to_string(LogLevel level);
[[nodiscard]] std::string_view to_string(LogFormat format);
[[nodiscard]] std::string_view to_string(MabDefault action);
[[nodiscard]] std::string_view to_string(SimultaneousUseUnavailable policy);
[[nodiscard]] std::optional<LogLevel> parse_log_level(std::string_view text);

// The folder FreeRADIUS's dictionaries live in on Debian (freeradius-common).
inline constexpr std::string_view kDefaultDictionaryDir = "/usr/share/freeradius";

// RFC 5080 §2.2.2: duplicate-detection cache entries SHOULD be kept no less
// than 5 and no more than 30 seconds.
inline constexpr std::int64_t kDuplicateWindowMsMin = 5'000;
inline constexpr std::int64_t kDuplicateWindowMsMax = 30'000;
inline constexpr std::int64_t kDuplicateWindowMsDefault = 10'000;

// The largest `workers` value accepted.
inline constexpr int kWorkersMax = 1024;

// Bounds of the `accounting:` section. The batch bound is the submission
// protocol's (submission::kSubmitRecordsMax); the member count that of a
// cluster's address book.
inline constexpr std::size_t kAccountingMembersMax = 9;
inline constexpr std::int64_t kPendingRecordsMax = 16 * 1024 * 1024;
inline constexpr std::int64_t kBatchRecordsMax = 4096;
inline constexpr std::int64_t kBatchDelayUsMax = 1'000'000;
// accounting.session_query_timeout_ms: below a NAS's retransmission timer
// (typically 3-5 s), so that the NAS gets the decision rather than a silence.
inline constexpr std::int64_t kSessionQueryTimeoutMsMin = 10;
inline constexpr std::int64_t kSessionQueryTimeoutMsMax = 10'000;

// A TCP endpoint written "IPv4:port" or "[IPv6]:port": a member's raft and
// submission addresses, in the member's config and in the gateway's.
struct HostPort {
  std::string text{};                    // As written: "127.0.0.1:7301", "[::1]:7301".
  std::string host{};                    // Without brackets: "127.0.0.1", "::1".
  std::array<std::uint8_t, 16> bytes{};  // Network order; IPv4 uses the first 4.
  bool is_v6 = false;
  std::uint16_t port = 0;
  SourceLocation where{};

  // The same address and port however written ("[::1]:1" and "[0::1]:1").
  [[nodiscard]] bool same_endpoint(const HostPort& other) const {
    return is_v6 == other.is_v6 && bytes == other.bytes && port == other.port;
  }

  friend bool operator==(const HostPort&, const HostPort&) = default;
};

// Parses "IPv4:port" or "[IPv6]:port" (dotted quad or RFC 4291 text, port
// 1..65535, no host names), the one address syntax of both configs, the
// --member flag and the addresses members announce. No value on anything else.
[[nodiscard]] std::optional<HostPort> parse_host_port(std::string_view text);
// What parse_host_port accepts, for error messages.
inline constexpr std::string_view kHostPortWhat = "IPv4:port or [IPv6]:port";

// A member entry of the gateway's accounting.members: its submission address
// and the raft id its certificate must name (CN member-<id>); 0 when the
// entry was a bare address (only allowed with insecure_plaintext_cluster).
struct SubmissionAddress {
  HostPort address{};
  std::uint64_t member_id = 0;
  SourceLocation where{};  // The entry.

  friend bool operator==(const SubmissionAddress&, const SubmissionAddress&) = default;
};

// The PEM files of one process's cluster identity (docs/security.md
// "Cluster certificates"): the member's `cluster_tls` section and the
// gateway's `accounting.tls`.
struct ClusterTlsConfig {
  ConfiguredPath ca{};
  ConfiguredPath cert{};
  ConfiguredPath key{};
  std::optional<ConfiguredPath> crl{};  // Absent: no revocation check.
  // The gateway's (and a tenant's) `tls.ca_path`: a folder of more CA
  // certificates, and CRLs, by hash links (`openssl rehash`), for EAP-TLS
  // client certificates. Refused in the cluster's sections.
  std::optional<ConfiguredPath> ca_path{};
  SourceLocation where{};

  friend bool operator==(const ClusterTlsConfig&, const ClusterTlsConfig&) = default;
};

// The `accounting:` section: where validated Accounting-Requests are
// submitted (docs/configuration.md). Its bounds become
// submission::ForwarderOptions.
struct AccountingConfig {
  // The members' submission addresses, 1..kAccountingMembersMax, distinct.
  std::vector<SubmissionAddress> members{};
  // TLS to the members (required unless insecure_plaintext_cluster): each
  // member must present the certificate of its configured id.
  std::optional<ClusterTlsConfig> tls{};
  // Plaintext submissions, for a test cluster on one host only: anyone who
  // reaches a member's port can submit records (docs/security.md).
  bool insecure_plaintext_cluster = false;
  SourceLocation where{};
  std::size_t pending_records_max = 65536;
  std::size_t batch_records_max = 512;
  Duration batch_delay = Duration::microseconds(5000);
  // How long an Access-Request with a Simultaneous-Use limit waits for the
  // leader's count of the user's open sessions.
  Duration session_query_timeout = Duration::milliseconds(1000);
  // The session-key recipe (accounting::KeyRecipe::parse); absent:
  // FreeRADIUS's default. Checked against the dictionary when it is loaded.
  std::optional<std::string> key{};
  SourceLocation key_where{};

  friend bool operator==(const AccountingConfig&, const AccountingConfig&) = default;
};

// Where the gateway looks users up, in the order of `users_stores`.
enum class UsersStore : std::uint8_t { kFiles, kSql };
[[nodiscard]] std::string_view to_string(UsersStore store);

inline constexpr std::int64_t kSqlConnectionsMax = 64;
inline constexpr std::int64_t kSqlCacheEntriesMax = 10'000'000;
inline constexpr std::int64_t kSqlTtlSecondsMax = 86'400;
inline constexpr std::int64_t kSqlMissWaitMsMax = 1'000;

// The `sql_users:` section: FreeRADIUS's SQL user tables (radcheck, radreply,
// radusergroup, radgroupcheck, radgroupreply), read through a cache
// (docs/authentication.md). Exactly one of `sqlite` and `postgresql`.
struct SqlUsersConfig {
  std::optional<ConfiguredPath> sqlite{};   // A database file, opened read-only.
  std::optional<std::string> postgresql{};  // A libpq connection string (TLS: sslmode=...).
  // Another libpq connection string that reads go to instead (a read
  // replica); the primary is used while the replica cannot be reached.
  std::optional<std::string> read_replica{};
  std::size_t connections = 2;
  Duration cache_ttl = Duration::seconds(60);
  Duration negative_ttl = Duration::seconds(10);
  std::size_t cache_entries_max = 100'000;
  Duration miss_wait = Duration::milliseconds(20);
  SourceLocation where{};

  friend bool operator==(const SqlUsersConfig&, const SqlUsersConfig&) = default;
};

// The EAP methods `eap.methods` may name (docs/configuration.md, `eap.methods`),
// in the order the flag-only quick start offers them.
inline constexpr std::array<std::string_view, 4> kEapMethodNames = {"tls", "peap", "ttls", "md5"};
// The TLS-based ones, which need the `tls:` section (the server certificate).
[[nodiscard]] bool is_tls_eap_method(std::string_view name);
inline constexpr std::int64_t kEapConversationsMax = 16'777'215;
inline constexpr std::int64_t kEapIdleTimeoutSMax = 300;
inline constexpr std::int64_t kEapRoundsMin = 3;
inline constexpr std::int64_t kEapRoundsMax = 1000;
// RFC 5216 §2.1.5 fragments (eap/tls_fragments.h's bounds).
inline constexpr std::int64_t kEapTlsFragmentOctetsMin = 64;
inline constexpr std::int64_t kEapTlsFragmentOctetsMax = 3000;
inline constexpr std::int64_t kEapPoolThreadsMax = 64;
inline constexpr std::int64_t kEapPoolQueueMax = 65536;
inline constexpr std::int64_t kEapTlsResumptionSessionsMax = 1'000'000;
inline constexpr std::int64_t kEapTlsResumptionLifetimeSMax = 86'400;
inline constexpr std::int64_t kEapOcspTimeoutMsMin = 50;
inline constexpr std::int64_t kEapOcspTimeoutMsMax = 30'000;

// `eap.ocsp`: OCSP for EAP-TLS client certificates (docs/security.md "OCSP").
struct EapOcspConfig {
  // The responder asked for every certificate (an http:// URL); absent: the
  // certificate's own (Authority Information Access).
  std::optional<std::string> responder{};
  SourceLocation responder_where{};
  // True: no usable answer refuses the certificate (hard fail).
  bool required = false;
  Duration timeout = Duration::seconds(2);
  SourceLocation where{};

  friend bool operator==(const EapOcspConfig&, const EapOcspConfig&) = default;
};

enum class EapTlsVersion : std::uint8_t { k1_2, k1_3 };
// Whether PEAP asks for cryptobinding ([MS-PEAP] §3.1.5.5).
enum class EapPeapCryptoBinding : std::uint8_t { kOff, kOptional, kRequired };

// Bounds of `eap.forward` (docs/limits.md "EAP forwarding").
inline constexpr std::size_t kEapForwardPeersMax = 64;
inline constexpr std::int64_t kEapForwardTimeoutMsMin = 50;
inline constexpr std::int64_t kEapForwardTimeoutMsMax = 10'000;
inline constexpr std::int64_t kEapForwardInFlightMax = 65'536;

// A gateway of `eap.forward.peers`: its eap.gateway_id and the address of
// its forwarding listener.
struct EapForwardPeer {
  std::uint32_t gateway_id = 0;
  HostPort address{};
  SourceLocation where{};

  friend bool operator==(const EapForwardPeer&, const EapForwardPeer&) = default;
};

// `eap.forward`: follow-ups of another gateway's conversation are forwarded
// to it (docs/design.md "EAP across several gateways").
struct EapForwardConfig {
  HostPort listen{};          // This gateway's forwarding listener (UDP).
  ConfiguredPath key_file{};  // The deployment's forwarding key, the same on every gateway.
  std::vector<EapForwardPeer> peers{};
  Duration timeout = Duration::seconds(1);  // A forward not answered by then is dropped.
  std::size_t in_flight_max = 1024;         // Forwards in flight at once (and peers' requests decided here).
  SourceLocation where{};

  friend bool operator==(const EapForwardConfig&, const EapForwardConfig&) = default;
};

// The `eap:` section: EAP over RADIUS (docs/authentication.md "EAP").
struct EapConfig {
  // The methods offered, in the order of preference (kEapMethodNames).
  // EAP-MD5 alone unless listed: the TLS-based ones need the `tls:` section.
  std::vector<std::string> methods{"md5"};
  // EAP-MD5, for wired devices that have nothing else; never over wireless
  // NAS-Port-Types. Off by default in a config file; on in the flag-only
  // quick start (quick_start_gateway_config).
  bool md5 = false;
  // Conversations in progress at once in the gateway, and how long one may
  // wait for its next Access-Request (also the Access-Challenge's
  // Session-Timeout).
  std::size_t conversations_max = 16'384;
  Duration idle_timeout = Duration::seconds(30);
  // EAP-Requests per conversation, the Identity request included.
  std::size_t rounds_max = 50;
  // The gateway id its States carry (docs/wire_formats.md "EAP State");
  // absent: drawn at random at start.
  std::optional<std::uint32_t> gateway_id{};
  // Forwarding to and from the other gateways; absent: another gateway's
  // State is refused.
  std::optional<EapForwardConfig> forward{};
  // EAP-TLS, PEAP and EAP-TTLS (docs/authentication.md "EAP"): TLS octets
  // per EAP-Request, the TLS versions, PEAP's cryptobinding and the inner
  // methods of EAP-TTLS. The certificates are the `tls:` section's.
  std::size_t tls_fragment_octets = 1000;
  EapTlsVersion tls_min_version = EapTlsVersion::k1_2;
  EapTlsVersion tls_max_version = EapTlsVersion::k1_3;
  EapPeapCryptoBinding peap_crypto_binding = EapPeapCryptoBinding::kOptional;
  bool ttls_pap = true;
  bool ttls_mschapv2 = true;
  // The pool that runs the TLS work off the UDP workers and the RadSec
  // thread (docs/limits.md "EAP"): its threads and the steps waiting for one.
  std::size_t pool_threads = 2;
  std::size_t pool_queue_max = 256;
  // EAP-TLS session resumption (docs/security.md "EAP-TLS resumption"):
  // sessions kept per tenant, 0 for none, and for how long.
  std::size_t tls_resumption_sessions = 0;
  Duration tls_resumption_lifetime = Duration::seconds(3600);
  // OCSP for EAP-TLS client certificates; absent: the CRLs alone.
  std::optional<EapOcspConfig> ocsp{};
  SourceLocation where{};

  friend bool operator==(const EapConfig&, const EapConfig&) = default;
};

// Bounds of the `radsec:` section (docs/limits.md "RadSec").
inline constexpr std::uint16_t kRadSecPortDefault = 2083;  // RFC 6614 §2.1
inline constexpr std::int64_t kRadSecConnectionsMax = 65536;
inline constexpr std::int64_t kRadSecBufferedBytesMin = 4096;
inline constexpr std::int64_t kRadSecBufferedBytesMax = 64 * 1024 * 1024;
inline constexpr std::int64_t kRadSecHandshakeTimeoutMsMin = 100;
inline constexpr std::int64_t kRadSecHandshakeTimeoutMsMax = 300'000;
inline constexpr std::int64_t kRadSecIdleTimeoutSMax = 86'400;

// The `radsec:` section: RADIUS over TLS (RFC 6614) with the certificate of
// the gateway's `tls` section (docs/configuration.md "Keys").
struct RadSecConfig {
  // Addresses to listen on; empty: those of the gateway's `listen`.
  std::vector<ListenAddress> listen{};
  std::uint16_t port = kRadSecPortDefault;  // 0 asks the kernel for a free port.
  // The RadSec clients, FreeRADIUS syntax with proto = tls (ClientsLimits::radsec).
  ConfiguredPath clients_file{};
  Duration handshake_timeout = Duration::seconds(10);
  Duration idle_timeout = Duration::seconds(120);
  std::size_t connections_max = 1024;
  std::size_t client_connections_max = 64;
  std::size_t buffered_bytes_max = 256 * 1024;
  // Every RadSec client entry, of every tenant, must set certificate_name
  // (ClientsLimits::require_certificate_name; docs/security.md "RadSec").
  bool require_certificate_name = false;
  SourceLocation where{};

  friend bool operator==(const RadSecConfig&, const RadSecConfig&) = default;
};

inline constexpr std::int64_t kAuditRotateBytesMin = 64 * 1024;
inline constexpr std::int64_t kAuditRotateBytesMax = std::int64_t{1} << 40;
inline constexpr std::int64_t kAuditKeepMax = 1000;
inline constexpr std::int64_t kAuditFsyncIntervalMsMax = 60'000;
inline constexpr std::int64_t kAuditQueueLinesMin = 16;
inline constexpr std::int64_t kAuditQueueLinesMax = 16 * 1024 * 1024;

// An `audit:` section: the tamper-evident log of Access-Request decisions
// (docs/configuration.md "Keys", docs/operations.md "Audit log"). One
// writer per section; today the gateway has one, later each tenant its own.
struct AuditConfig {
  ConfiguredPath path{};
  // The file is rotated (path -> path.1 -> ... -> path.<keep>) at this size.
  std::uint64_t rotate_bytes = 64 * 1024 * 1024;
  std::size_t keep = 10;  // Rotated files kept; 0 keeps none.
  // Written lines are fsync'd at most this long after they were written
  // (0: after every batch).
  Duration fsync_interval = Duration::milliseconds(1000);
  // HMAC-SHA256 key; absent: plain SHA-256 chain.
  std::optional<ConfiguredPath> key_file{};
  // Decisions waiting for the writer; beyond, they are counted and a gap
  // line records how many (docs/limits.md).
  std::size_t queue_lines_max = 65536;
  SourceLocation where{};

  friend bool operator==(const AuditConfig&, const AuditConfig&) = default;
};

// Tenants (docs/design.md "Tenants", docs/configuration.md "Tenants"): the
// top-level per-tenant keys are the tenant named `default`; `tenants:` adds
// more. Names are [a-z0-9-], 1..kTenantNameBytesMax bytes.
inline constexpr std::string_view kDefaultTenantName = "default";
inline constexpr std::size_t kTenantNameBytesMax = 32;
// Tenants besides `default`: bounds the /metrics series a tenant label adds.
inline constexpr std::size_t kTenantsMax = 64;

// One entry of `tenants:`: what a tenant owns besides its name. A NAS's
// tenant is its client entry's (clients_file, radsec_clients_file); the
// rest is that tenant's alone. The gateway-wide keys (listen, ports, the
// RadSec listener, EAP's conversation table) stay at the top level.
struct TenantConfig {
  std::string name{};
  ConfiguredPath users_file{};
  ConfiguredPath clients_file{};
  // The tenant's RadSec clients (`radsec: {clients_file: F}`); needs the
  // gateway's `radsec` section (the listener) and the tenant's `tls` (the CA
  // its peers' certificates must chain to).
  std::optional<ConfiguredPath> radsec_clients_file{};
  std::vector<UsersStore> users_stores{UsersStore::kFiles};
  // The tenant's own SQL user tables and cache (required when users_stores
  // lists sql): the same user name in two tenants is two users.
  std::optional<SqlUsersConfig> sql_users{};
  std::optional<ConfiguredPath> policy_file{};
  // Only methods, md5 and rounds_max are the tenant's; the conversation
  // table's keys are the top-level eap section's.
  EapConfig eap{};
  // The tenant's TLS identity and the CA (and CRL) its client certificates
  // (RadSec, EAP-TLS) must chain to.
  std::optional<ClusterTlsConfig> tls{};
  std::optional<AuditConfig> audit{};
  SourceLocation where{};  // The list element.

  friend bool operator==(const TenantConfig&, const TenantConfig&) = default;
};

// A validated gateway configuration. Built once at start and never changed;
// share it as `const GatewayConfig&`. Defaults are those of
// docs/configuration.md.
struct GatewayConfig {
  // The config file this came from; empty when built from flags only.
  std::string source_file;

  // Addresses to listen on; each gets an authentication and an accounting
  // socket per worker. Default: 0.0.0.0 and ::.
  std::vector<ListenAddress> listen;
  // RFC 2865 §3 and RFC 2866 §3 ports. 0 asks the kernel for a free port.
  std::uint16_t auth_port = 1812;
  std::uint16_t acct_port = 1813;
  // Worker threads; 0 means one per available CPU.
  int workers = 0;

  // FreeRADIUS-format users and clients files. Both are required.
  ConfiguredPath users_file;
  ConfiguredPath clients_file;

  // The folder whose `dictionary` file is loaded on top of the built-in
  // dictionary. Absent: built-in only. When `dictionary_dir_optional` is set
  // (the default, /usr/share/freeradius, was not overridden) a missing folder
  // means "built-in only" rather than an error.
  std::optional<ConfiguredPath> dictionary_dir;
  bool dictionary_dir_optional = false;
  // More dictionary files, loaded in order after dictionary_dir.
  std::vector<ConfiguredPath> dictionary_files;

  struct Logging {
    LogLevel level = LogLevel::kInfo;
    LogFormat format = LogFormat::kText;
    friend bool operator==(const Logging&, const Logging&) = default;
  } logging;

  // How long a reply stays in the duplicate-detection cache (RFC 5080
  // §2.2.2), within [kDuplicateWindowMsMin, kDuplicateWindowMsMax].
  Duration duplicate_window = Duration::milliseconds(kDuplicateWindowMsDefault);

  MabDefault mab_default = MabDefault::kReject;

  // Simultaneous-Use without a count (no accounting, no leader, timeout).
  SimultaneousUseUnavailable simultaneous_use_unavailable = SimultaneousUseUnavailable::kReject;

  // The admin API's Unix socket (docs/admin_api.md); absent: no admin API.
  std::optional<ConfiguredPath> admin_socket;
  // The admin API over TCP as well (a Prometheus server scrapes /metrics
  // there), every request with the bearer token of admin_token_file.
  // Requires admin_socket and admin_token_file.
  std::optional<HostPort> admin_listen;
  std::optional<ConfiguredPath> admin_token_file;

  // The user stores an Access-Request's user is looked up in, in order: the
  // first that knows the user decides (docs/authentication.md).
  std::vector<UsersStore> users_stores{UsersStore::kFiles};
  // Required when users_stores lists sql.
  std::optional<SqlUsersConfig> sql_users;

  // The authorization policy file (docs/policy.md); absent: authentication
  // alone decides. Loaded at start and on every reload.
  std::optional<ConfiguredPath> policy_file;

  // Replicated accounting; absent: Accounting-Requests are dropped unanswered.
  std::optional<AccountingConfig> accounting;

  // EAP (RFC 3748, RFC 3579); with no method on, Access-Requests with
  // EAP-Message are rejected (eap_not_enabled).
  EapConfig eap{};
  // The gateway's own TLS identity (`tls:`): the server certificate and key
  // RadSec presents, the CA that client certificates must chain to, and its
  // CRL. The same files are meant to serve EAP's TLS methods.
  std::optional<ClusterTlsConfig> tls;
  // The RadSec listener; absent: none. Requires `tls`.
  std::optional<RadSecConfig> radsec;
  // The audit log of decisions; absent: none is written.
  std::optional<AuditConfig> audit;

  // The default of each client's require_message_authenticator (RFC 3579
  // §3.2; the BLAST-RADIUS hardening of CVE-2024-3596): when set,
  // Access-Requests without a valid Message-Authenticator are dropped.
  bool require_message_authenticator = true;
  // Lets other processes (another gateway on this host) join the same UDP
  // ports: the kernel then spreads NASes over them by source address and
  // port (SO_REUSEPORT). Off: a port another process holds is an error, so
  // that a second start by mistake fails instead of sharing traffic.
  bool share_ports = false;

  // The tenants besides `default` (whose keys are the top-level ones), in
  // the order written; names unique and never "default".
  std::vector<TenantConfig> tenants{};

  // Where each top-level key was written, for errors about a key as a whole
  // (a reload that changes one needing a restart). Keys not written are absent.
  std::map<std::string, SourceLocation, std::less<>> key_where{};

  friend bool operator==(const GatewayConfig&, const GatewayConfig&) = default;
};

// Parses and validates YAML text. `file_name` is used in error messages and
// to resolve relative paths (against its folder). Collects every error, not
// only the first. Reads no files: checking that the named files exist is
// check_referenced_files().
[[nodiscard]] Result<GatewayConfig, ConfigErrors> parse_gateway_config(std::string_view text,
                                                                       std::string_view file_name);

// Reads `path` and parses it. An unreadable file is one error without a
// position.
[[nodiscard]] Result<GatewayConfig, ConfigErrors> load_gateway_config(const std::string& path);

// Command-line values that replace those of the config file (or the defaults
// when there is no config file). Unset members change nothing; a non-empty
// `listen` replaces the whole list.
struct GatewayOverrides {
  std::optional<std::string> users_file{};
  std::optional<std::string> clients_file{};
  std::optional<std::string> policy_file{};  // --policy FILE
  std::optional<std::string> dictionary_dir{};
  std::optional<int> auth_port{};
  std::optional<int> acct_port{};
  std::optional<int> workers{};
  std::vector<std::string> listen{};
  std::optional<std::string> log_level{};
  // --member HOST:PORT (repeatable): replaces accounting.members, and turns
  // accounting on with the default bounds when the file has no section.
  std::vector<std::string> members{};
  // --insecure-plaintext-cluster: accounting.insecure_plaintext_cluster.
  bool insecure_plaintext_cluster = false;
  std::optional<std::string> admin_socket{};
  // --tls-cert, --tls-key, --tls-ca, --tls-crl: the `tls` section's files.
  std::optional<std::string> tls_cert{};
  std::optional<std::string> tls_key{};
  std::optional<std::string> tls_ca{};
  std::optional<std::string> tls_crl{};
  // --radsec-port and --radsec-clients: turn RadSec on (with the defaults of
  // a `radsec` section when the file has none).
  std::optional<int> radsec_port{};
  std::optional<std::string> radsec_clients{};
  // --audit-log FILE: audit.path, with the section's defaults when the file has none.
  std::optional<std::string> audit_log{};
};

// The configuration with every default and no users or clients file.
[[nodiscard]] GatewayConfig default_gateway_config();

// The base that flags are applied to when no config file is given:
// default_gateway_config() with EAP-MD5 on, so that
// `radiusward gateway --users F --clients F` serves it to wired NASes
// (docs/operations.md "Trying it out").
[[nodiscard]] GatewayConfig quick_start_gateway_config();

// Applies `overrides` to `base` and validates the result (the same rules as
// the YAML keys, users and clients files required). Errors name the flag,
// e.g. "--auth-port: must be between 0 and 65535".
[[nodiscard]] Result<GatewayConfig, ConfigErrors> apply_overrides(GatewayConfig base,
                                                                  const GatewayOverrides& overrides);

// The admin API over TCP (admin_listen) needs the Unix socket it adds to
// and the file of its bearer token; errors at `at` or at admin_listen.
void check_admin_tcp(bool has_socket, const std::optional<HostPort>& listen, bool has_token_file,
                     const SourceLocation& at, ConfigErrors& errors);

// Checks that every file the configuration names exists and is readable and
// that the dictionary folder holds a readable `dictionary` file; errors point
// at the key (or flag) that named the file. Does not parse those files.
[[nodiscard]] ConfigErrors check_referenced_files(const GatewayConfig& config);

}  // namespace rw::config
