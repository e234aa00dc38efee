// Tests of the member configuration parser: the documented example, the
// defaults, and each error with its file:line:col.
#include "config/member_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/temp_dir_for_test.h"

namespace rw::config {
namespace {

using ::testing::ElementsAre;

constexpr std::string_view kBook =
    "members:\n"
    "  - {id: 1, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}\n"
    "  - {id: 2, raft: 127.0.0.1:7202, submission: 127.0.0.1:7302}\n"
    "  - {id: 3, raft: 127.0.0.1:7203, submission: 127.0.0.1:7303}\n";

constexpr std::string_view kRequired =
    "id: 1\n"
    "data_dir: member-1\n"
    "raft_address: 127.0.0.1:7201\n"
    "submission_listen: 127.0.0.1:7301\n";

// Last, so that the lines of `extra` keep the numbers the tests expect.
constexpr std::string_view kTls =
    "cluster_tls: {ca: certs/ca.pem, cert: certs/member-1.pem, key: certs/member-1.key}\n";

std::string minimal(std::string_view extra = "") {
  return std::string(kRequired) + std::string(kBook) + std::string(extra) + std::string(kTls);
}

// The error strings of a config that must be refused.
std::vector<std::string> errors_of(std::string_view text) {
  auto parsed = parse_member_config(text, "/etc/rw/member.yaml");
  EXPECT_FALSE(parsed.has_value());
  std::vector<std::string> out;
  if (!parsed) {
    for (const ConfigError& error : parsed.error()) out.push_back(error.to_string());
  }
  return out;
}

TEST(MemberConfig, ParsesTheDocumentedExample) {
  const std::string text = minimal(
      "admin_socket: admin/member-1.sock\n"
      "bootstrap: false\n"
      "raft:\n"
      "  election_timeout_ms: 400\n"
      "  heartbeat_timeout_ms: 40\n"
      "  snapshot_threshold: 2048\n"
      "  snapshot_trailing: 1024\n"
      "  log_bytes_max: 33554432\n"
      "  segment_bytes: 262144\n"
      "ledger:\n"
      "  held_records_max: 1000\n"
      "  held_bytes_max: 1048576\n"
      "  sessions_max: 10\n"
      "  sessions_bytes_max: 65536\n"
      "  session_expiry_multiple: 5\n"
      "  session_default_interim_s: 600\n"
      "dictionary_dir: /usr/share/freeradius\n"
      "logging: {level: debug, format: json}\n");
  auto parsed = parse_member_config(text, "/etc/rw/member.yaml");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().front().to_string();
  const MemberConfig& config = *parsed;
  EXPECT_EQ(config.id, 1u);
  EXPECT_EQ(config.data_dir.path, "/etc/rw/member-1");
  EXPECT_EQ(config.raft_address.host, "127.0.0.1");
  EXPECT_EQ(config.raft_address.port, 7201);
  EXPECT_EQ(config.submission_listen.text, "127.0.0.1:7301");
  ASSERT_TRUE(config.admin_socket.has_value());
  EXPECT_EQ(config.admin_socket->path, "/etc/rw/admin/member-1.sock");
  EXPECT_FALSE(config.bootstrap);
  ASSERT_EQ(config.members.size(), 3u);
  EXPECT_EQ(config.members[2].id, 3u);
  EXPECT_EQ(config.members[2].raft.text, "127.0.0.1:7203");
  EXPECT_EQ(config.members[2].submission.port, 7303);
  EXPECT_EQ(config.raft.election_timeout_ms, 400u);
  EXPECT_EQ(config.raft.heartbeat_timeout_ms, 40u);
  EXPECT_EQ(config.raft.snapshot_threshold, 2048u);
  EXPECT_EQ(config.raft.snapshot_trailing, 1024u);
  EXPECT_EQ(config.raft.log_bytes_max, 33554432u);
  EXPECT_EQ(config.raft.segment_bytes, 262144u);
  EXPECT_EQ(config.ledger.held_records_max, 1000u);
  EXPECT_EQ(config.ledger.held_bytes_max, 1048576u);
  EXPECT_EQ(config.ledger.sessions_max, 10u);
  EXPECT_EQ(config.ledger.sessions_bytes_max, 65536u);
  EXPECT_EQ(config.ledger.session_expiry_multiple, 5u);
  EXPECT_EQ(config.ledger.session_default_interim_s, 600u);
  ASSERT_TRUE(config.dictionary_dir.has_value());
  EXPECT_FALSE(config.dictionary_dir_optional);
  EXPECT_EQ(config.logging.level, LogLevel::kDebug);
  EXPECT_EQ(config.logging.format, LogFormat::kJson);
  EXPECT_EQ(config.find_member(2)->submission.text, "127.0.0.1:7302");
  EXPECT_EQ(config.find_member(4), nullptr);
}

TEST(MemberConfig, AppliesDefaults) {
  auto parsed = parse_member_config(minimal(), "member.yaml");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().front().to_string();
  EXPECT_EQ(parsed->data_dir.path, "member-1");  // No folder in the file name: kept relative.
  EXPECT_TRUE(parsed->bootstrap);
  EXPECT_FALSE(parsed->admin_socket.has_value());
  EXPECT_EQ(parsed->raft, MemberConfig::Raft{});
  EXPECT_EQ(parsed->raft.election_timeout_ms, 300u);
  EXPECT_EQ(parsed->ledger.held_records_max, 64'000u);
  EXPECT_TRUE(parsed->dictionary_dir_optional);
  EXPECT_EQ(parsed->logging.level, LogLevel::kInfo);
}

TEST(MemberConfig, AcceptsASingleMember) {
  auto parsed = parse_member_config(
      std::string(kRequired) + "members: [{id: 1, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}]\n" +
          std::string(kTls),
      "m.yaml");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->members.size(), 1u);
}

TEST(MemberConfig, ReportsMissingRequiredKeys) {
  EXPECT_THAT(
      errors_of("bootstrap: true\n"),
      ElementsAre("/etc/rw/member.yaml:1:1: missing required key 'id'",
                  "/etc/rw/member.yaml:1:1: missing required key 'data_dir'",
                  "/etc/rw/member.yaml:1:1: missing required key 'raft_address'",
                  "/etc/rw/member.yaml:1:1: missing required key 'submission_listen'",
                  "/etc/rw/member.yaml:1:1: missing required key 'members'",
                  "/etc/rw/member.yaml:1:1: missing required key 'cluster_tls' (the cluster certificates: "
                  "radiusward certs), or 'insecure_plaintext_cluster: true'"));
}

// docs/security.md "Submission port": TLS unless plaintext is asked for by name.
TEST(MemberConfig, RequiresClusterTlsOrTheExplicitPlaintextOptIn) {
  auto parsed = parse_member_config(minimal(), "/etc/rw/m.yaml");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().front().to_string();
  ASSERT_TRUE(parsed->cluster_tls.has_value());
  EXPECT_EQ(parsed->cluster_tls->ca.path, "/etc/rw/certs/ca.pem");
  EXPECT_EQ(parsed->cluster_tls->key.path, "/etc/rw/certs/member-1.key");
  EXPECT_FALSE(parsed->cluster_tls->crl.has_value());
  EXPECT_FALSE(parsed->insecure_plaintext_cluster);

  const std::string without = std::string(kRequired) + std::string(kBook);
  auto plaintext = parse_member_config(without + "insecure_plaintext_cluster: true\n", "m.yaml");
  ASSERT_TRUE(plaintext.has_value());
  EXPECT_TRUE(plaintext->insecure_plaintext_cluster);
  EXPECT_FALSE(plaintext->cluster_tls.has_value());

  EXPECT_FALSE(errors_of(without).empty());
  EXPECT_FALSE(errors_of(without + "insecure_plaintext_cluster: false\n").empty());
  EXPECT_THAT(
      errors_of(minimal("insecure_plaintext_cluster: true\n")),
      ElementsAre("/etc/rw/member.yaml:1:1: cluster_tls and insecure_plaintext_cluster exclude each other"));
  EXPECT_THAT(errors_of(without + "cluster_tls: {ca: a, cert: b, kee: c}\n"),
              ElementsAre("/etc/rw/member.yaml:9:31: unknown key 'cluster_tls.kee'",
                          "/etc/rw/member.yaml:9:14: missing required key 'cluster_tls.key'"));
}

TEST(MemberConfig, RefusesANonMapping) {
  EXPECT_THAT(errors_of("- 1\n"),
              ElementsAre("/etc/rw/member.yaml:1:1: the configuration must be a mapping of keys to values"));
  EXPECT_THAT(errors_of(""), ElementsAre("/etc/rw/member.yaml:1:1: the configuration is empty"));
}

TEST(MemberConfig, RaftLogBytesMaxIsOffOrAtLeastOneMebibyte) {
  EXPECT_EQ(parse_member_config(minimal(""), "/etc/rw/member.yaml")->raft.log_bytes_max,
            std::size_t{64} << 20);
  EXPECT_EQ(
      parse_member_config(minimal("raft: {log_bytes_max: 0}\n"), "/etc/rw/member.yaml")->raft.log_bytes_max,
      0u);
  EXPECT_THAT(
      errors_of(minimal("raft: {log_bytes_max: 4096}\n")),
      ElementsAre(
          "/etc/rw/member.yaml:9:23: raft.log_bytes_max must be 0 (off) or at least 1048576 (1 MiB)"));
}

TEST(MemberConfig, ReportsUnknownAndDuplicateKeys) {
  EXPECT_THAT(errors_of(minimal("colour: blue\nid: 2\n")),
              ElementsAre("/etc/rw/member.yaml:9:1: unknown key 'colour'",
                          "/etc/rw/member.yaml:10:1: duplicate key 'id'"));
  EXPECT_THAT(errors_of(minimal("raft: {election_timeout: 3}\nlogging: {color: 1}\nledger: {x: 1}\n")),
              ElementsAre("/etc/rw/member.yaml:9:8: unknown key 'raft.election_timeout'",
                          "/etc/rw/member.yaml:10:11: unknown key 'logging.color'",
                          "/etc/rw/member.yaml:11:10: unknown key 'ledger.x'"));
}

TEST(MemberConfig, ReportsBadScalars) {
  EXPECT_THAT(errors_of("id: 0\ndata_dir: ''\nraft_address: localhost:7201\nsubmission_listen: 127.0.0.1:0\n"
                        "bootstrap: maybe\n" +
                        std::string(kBook) + std::string(kTls)),
              ElementsAre("/etc/rw/member.yaml:1:5: expected an integer between 1 and 255, got '0'",
                          "/etc/rw/member.yaml:2:11: expected a path, got an empty string",
                          "/etc/rw/member.yaml:3:15: expected IPv4:port or [IPv6]:port, got 'localhost:7201'",
                          "/etc/rw/member.yaml:4:20: expected IPv4:port or [IPv6]:port, got '127.0.0.1:0'",
                          "/etc/rw/member.yaml:5:12: expected true or false, got 'maybe'"));
}

TEST(MemberConfig, ReportsAValueWithoutPositionAtItsKey) {
  EXPECT_THAT(errors_of(minimal("raft:\n")),
              ElementsAre("/etc/rw/member.yaml:9:1: expected a mapping of raft settings"));
}

TEST(MemberConfig, ReportsBadMembers) {
  EXPECT_THAT(
      errors_of(std::string(kRequired) + "members: []\n" + std::string(kTls)),
      ElementsAre("/etc/rw/member.yaml:5:10: expected a list of 1 to 9 members ({id, raft, submission})"));
  EXPECT_THAT(errors_of(std::string(kRequired) +
                        "members:\n"
                        "  - {id: 1, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}\n"
                        "  - {id: 1, raft: 127.0.0.1:7202, submission: 127.0.0.1:7302}\n"
                        "  - {id: 2, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}\n"
                        "  - {id: 3, raft: 127.0.0.1:7203}\n"
                        "  - {id: 4, raft: 127.0.0.1:7204, submission: 127.0.0.1:7304, weight: 2}\n"
                        "  - 7\n" +
                        std::string(kTls)),
              ElementsAre("/etc/rw/member.yaml:7:5: member id 1 is listed twice",
                          "/etc/rw/member.yaml:8:19: raft address 127.0.0.1:7201 is listed twice",
                          "/etc/rw/member.yaml:8:47: submission address 127.0.0.1:7301 is listed twice",
                          "/etc/rw/member.yaml:9:5: member entry misses 'submission'",
                          "/etc/rw/member.yaml:10:63: unknown key 'members.weight'",
                          "/etc/rw/member.yaml:11:5: expected a mapping with id, raft and submission"));
}

TEST(MemberConfig, RequiresItsOwnEntryWithTheSameRaftAddress) {
  EXPECT_THAT(
      errors_of("id: 4\ndata_dir: d\nraft_address: 127.0.0.1:7201\nsubmission_listen: 127.0.0.1:7301\n" +
                std::string(kBook) + std::string(kTls)),
      ElementsAre("/etc/rw/member.yaml:1:1: id 4 is not listed in members"));
  EXPECT_THAT(
      errors_of("id: 2\ndata_dir: d\nraft_address: 127.0.0.1:7201\nsubmission_listen: 127.0.0.1:7301\n" +
                std::string(kBook) + std::string(kTls)),
      ElementsAre("/etc/rw/member.yaml:3:15: raft_address 127.0.0.1:7201 differs from member 2's raft "
                  "address 127.0.0.1:7202 in members"));
}

TEST(MemberConfig, ReportsBadRaftLedgerAndLogging) {
  EXPECT_THAT(
      errors_of(minimal("raft: {election_timeout_ms: 100, heartbeat_timeout_ms: 60}\n"
                        "ledger: {held_bytes_max: 12}\n"
                        "logging: {level: loud, format: xml}\n")),
      ElementsAre(
          "/etc/rw/member.yaml:9:7: raft.heartbeat_timeout_ms (60) must be at most half of "
          "raft.election_timeout_ms (100)",
          "/etc/rw/member.yaml:10:26: expected an integer between 4096 and 68719476736, got '12'",
          "/etc/rw/member.yaml:11:18: expected one of trace, debug, info, warn, error, off, got 'loud'",
          "/etc/rw/member.yaml:11:32: expected text or json, got 'xml'"));
}

TEST(MemberConfig, ParsesTheExportSection) {
  auto sqlite = parse_member_config(
      minimal("export:\n  sqlite: radacct.sqlite\n  batch_records_max: 500\n  batch_delay_ms: 0\n"
              "  log_retention_days: 30\n"),
      "/etc/rw/member.yaml");
  ASSERT_TRUE(sqlite);
  ASSERT_TRUE(sqlite->exporter.has_value());
  ASSERT_TRUE(sqlite->exporter->sqlite.has_value());
  EXPECT_EQ(sqlite->exporter->sqlite->path, "/etc/rw/radacct.sqlite");
  EXPECT_EQ(sqlite->exporter->batch_records_max, 500u);
  EXPECT_EQ(sqlite->exporter->retry_max_ms, 10'000u);
  EXPECT_EQ(sqlite->exporter->batch_delay_ms, 0u);
  EXPECT_EQ(sqlite->exporter->log_retention_days, 30u);

  auto postgres = parse_member_config(minimal("export:\n"
                                              "  postgresql:\n"
                                              "    conninfo: host=db dbname=radius\n"
                                              "    sslmode: verify-full\n"
                                              "    sslrootcert: /etc/ssl/it's ca.pem\n"),
                                      "/etc/rw/member.yaml");
  ASSERT_TRUE(postgres);
  ASSERT_TRUE(postgres->exporter.has_value());
  EXPECT_FALSE(postgres->exporter->sqlite.has_value());
  EXPECT_EQ(postgres->exporter->postgresql_conninfo,
            "host=db dbname=radius sslmode='verify-full' sslrootcert='/etc/ssl/it\\'s ca.pem'");
  EXPECT_EQ(postgres->exporter->postgresql_timeouts, MemberConfig::PostgresTimeouts{});
  EXPECT_EQ(postgres->exporter->batch_delay_ms, 100u);
  EXPECT_EQ(postgres->exporter->log_retention_days, 0u);  // every row kept

  auto bounded = parse_member_config(minimal("export:\n"
                                             "  postgresql:\n"
                                             "    conninfo: host=db\n"
                                             "    lock_timeout_ms: 250\n"
                                             "    statement_timeout_ms: 9000\n"
                                             "    idle_in_transaction_session_timeout_ms: 8000\n"
                                             "    tcp_user_timeout_ms: 7000\n"
                                             "    keepalives_idle_s: 6\n"
                                             "    keepalives_interval_s: 5\n"
                                             "    keepalives_count: 4\n"
                                             "    connect_timeout_s: 3\n"),
                                     "/etc/rw/member.yaml");
  ASSERT_TRUE(bounded);
  const MemberConfig::PostgresTimeouts& t = bounded->exporter->postgresql_timeouts;
  EXPECT_EQ(t.lock_timeout_ms, 250u);
  EXPECT_EQ(t.statement_timeout_ms, 9000u);
  EXPECT_EQ(t.idle_in_transaction_session_timeout_ms, 8000u);
  EXPECT_EQ(t.tcp_user_timeout_ms, 7000u);
  EXPECT_EQ(t.keepalives_idle_s, 6u);
  EXPECT_EQ(t.keepalives_interval_s, 5u);
  EXPECT_EQ(t.keepalives_count, 4u);
  EXPECT_EQ(t.connect_timeout_s, 3u);
  EXPECT_EQ(bounded->exporter->postgresql_conninfo, "host=db");  // not appended: SET / parameters

  EXPECT_FALSE(parse_member_config(minimal(), "m.yaml")->exporter.has_value());
  EXPECT_FALSE(parse_member_config(minimal("export:\n"), "m.yaml")->exporter.has_value());
}

TEST(MemberConfig, ReportsBadExportSections) {
  EXPECT_THAT(errors_of(minimal("export:\n  batch_records_max: 5\n")),
              ElementsAre("/etc/rw/member.yaml:10:3: export needs exactly one of sqlite or postgresql"));
  EXPECT_FALSE(errors_of(minimal("export:\n  sqlite: a\n  postgresql: {conninfo: x}\n")).empty());
  EXPECT_FALSE(errors_of(minimal("export:\n  postgresql: {sslmode: require}\n")).empty());
  EXPECT_FALSE(errors_of(minimal("export:\n  sqlite: a\n  batch_records_max: 0\n")).empty());
  EXPECT_FALSE(errors_of(minimal("export:\n  sqlite: a\n  batch_delay_ms: 10001\n")).empty());
  EXPECT_THAT(errors_of(minimal("export:\n  sqlite: a\n  log_retention_days: 36501\n")),
              ElementsAre("/etc/rw/member.yaml:11:23: expected an integer between 0 and 36500, got '36501'"));
  EXPECT_FALSE(errors_of(minimal("export:\n  sqlite: a\n  log_retention_days: -1\n")).empty());
  EXPECT_FALSE(
      errors_of(minimal("export:\n  sqlite: a\n  retry_initial_ms: 50\n  retry_max_ms: 10\n")).empty());
  EXPECT_FALSE(errors_of(minimal("export:\n  sqlite: a\n  colour: red\n")).empty());
  EXPECT_FALSE(errors_of(minimal("export:\n  postgresql: {conninfo: x, lock_timeout_ms: 0}\n")).empty());
}

TEST(MemberConfig, ReportsYamlSyntaxErrorsWithTheirPosition) {
  auto errors = errors_of("id: [1\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], ::testing::StartsWith("/etc/rw/member.yaml:2:1: "));
}

TEST(MemberConfig, TakesIpv6SubmissionAddresses) {
  auto parsed = parse_member_config(
      "id: 1\ndata_dir: d\nraft_address: 127.0.0.1:7201\nsubmission_listen: '[::1]:7301'\nmembers:\n"
      "  - {id: 1, raft: 127.0.0.1:7201, submission: '[::1]:7301'}\n"
      "  - {id: 2, raft: 127.0.0.1:7202, submission: '[2001:db8::2]:7301'}\n" +
          std::string(kTls),
      "m.yaml");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().front().to_string();
  EXPECT_EQ(parsed->submission_listen.host, "::1");
  EXPECT_TRUE(parsed->submission_listen.is_v6);
  EXPECT_EQ(parsed->submission_listen.port, 7301);
  EXPECT_EQ(parsed->members[1].submission.text, "[2001:db8::2]:7301");
}

TEST(MemberConfig, RefusesIpv6RaftAddressesAndTheSameAddressWrittenTwoWays) {
  EXPECT_THAT(
      errors_of(
          "id: 1\ndata_dir: d\nraft_address: '[::1]:7201'\nsubmission_listen: 127.0.0.1:7301\nmembers:\n"
          "  - {id: 1, raft: '[::1]:7201', submission: '[::1]:7301'}\n" +
          std::string(kTls)),
      ElementsAre("/etc/rw/member.yaml:3:15: raft address '[::1]:7201' is IPv6: libraft 0.15 listens and "
                  "connects on IPv4 only; submission addresses may be IPv6",
                  "/etc/rw/member.yaml:6:19: raft address '[::1]:7201' is IPv6: libraft 0.15 listens and "
                  "connects on IPv4 only; submission addresses may be IPv6"));
  EXPECT_THAT(errors_of(std::string(kRequired) +
                        "members:\n"
                        "  - {id: 1, raft: 127.0.0.1:7201, submission: '[::1]:7301'}\n"
                        "  - {id: 2, raft: 127.0.0.1:7202, submission: '[0::1]:7301'}\n" +
                        std::string(kTls)),
              ElementsAre("/etc/rw/member.yaml:7:47: submission address [0::1]:7301 is listed twice"));
}

// raft_listen: the raft port binds a wildcard while peers dial raft_address,
// an address that forwards to it (a Kubernetes Service). Absent by default.
TEST(MemberConfig, RaftListenIsAnOptionalIpv4BindAddress) {
  auto absent = parse_member_config(minimal(), "m.yaml");
  ASSERT_TRUE(absent.has_value()) << absent.error().front().to_string();
  EXPECT_FALSE(absent->raft_listen.has_value());

  auto parsed = parse_member_config(minimal("raft_listen: 0.0.0.0:7201\n"), "m.yaml");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().front().to_string();
  ASSERT_TRUE(parsed->raft_listen.has_value());
  EXPECT_EQ(parsed->raft_listen->text, "0.0.0.0:7201");
  EXPECT_EQ(parsed->raft_address.text, "127.0.0.1:7201");

  EXPECT_THAT(
      errors_of(minimal("raft_listen: '[::]:7201'\n")),
      ElementsAre("/etc/rw/member.yaml:9:14: raft address '[::]:7201' is IPv6: libraft 0.15 listens and "
                  "connects on IPv4 only; submission addresses may be IPv6"));
  EXPECT_THAT(errors_of(minimal("raft_listen: pod:7201\n")),
              ElementsAre("/etc/rw/member.yaml:9:14: expected IPv4:port or [IPv6]:port, got 'pod:7201'"));
}

TEST(MemberConfig, RaftAddressesAreIpv4) {
  EXPECT_TRUE(is_raft_address(*parse_host_port("10.0.0.1:1")));
  EXPECT_FALSE(is_raft_address(*parse_host_port("[::1]:7201")));
  EXPECT_FALSE(parse_host_port("10.0.0.1").has_value());
  EXPECT_FALSE(parse_host_port("10.0.0.1:65536").has_value());
  EXPECT_FALSE(parse_host_port("10.0.0.1:+5").has_value());
}

class MemberConfigFile : public TempDirTest {};

TEST_F(MemberConfigFile, LoadsAFileAndResolvesPathsAgainstItsFolder) {
  const std::string path = write("deploy/member-1.yaml", minimal());
  auto loaded = load_member_config(path);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->data_dir.path, (dir_ / "deploy/member-1").string());
}

TEST_F(MemberConfigFile, ReportsAnUnreadableFileWithoutPosition) {
  const std::string path = (dir_ / "absent.yaml").string();
  auto loaded = load_member_config(path);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().front().to_string(), path + ": cannot read: No such file or directory");
}

}  // namespace
}  // namespace rw::config
