// Tests of the gateway YAML configuration: every key, defaults, positions of
// errors, collection of all errors, flag overrides and file checks.
#include "config/gateway_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rw::config {
namespace {

constexpr std::string_view kMinimal =
    "users_file: users\n"
    "clients_file: clients.conf\n";

std::vector<std::string> error_strings(const ConfigErrors& errors) {
  std::vector<std::string> out;
  for (const ConfigError& error : errors) out.push_back(error.to_string());
  return out;
}

std::vector<std::string> parse_errors(std::string_view text) {
  auto result = parse_gateway_config(text, "etc/gw.yaml");
  EXPECT_FALSE(result.has_value());
  if (result) return {};
  return error_strings(result.error());
}

TEST(ParseGatewayConfig, AppliesDefaultsToMinimalConfig) {
  auto result = parse_gateway_config(kMinimal, "/etc/radiusward/gateway.yaml");
  ASSERT_TRUE(result.has_value()) << error_strings(result.error())[0];
  const GatewayConfig& config = *result;
  ASSERT_EQ(config.listen.size(), 2u);
  EXPECT_EQ(config.listen[0].text, "0.0.0.0");
  EXPECT_FALSE(config.listen[0].is_v6);
  EXPECT_EQ(config.listen[1].text, "::");
  EXPECT_TRUE(config.listen[1].is_v6);
  EXPECT_EQ(config.auth_port, 1812);
  EXPECT_EQ(config.acct_port, 1813);
  EXPECT_EQ(config.workers, 0);
  ASSERT_TRUE(config.dictionary_dir.has_value());
  EXPECT_EQ(config.dictionary_dir->path, "/usr/share/freeradius");
  EXPECT_TRUE(config.dictionary_dir_optional);
  EXPECT_TRUE(config.dictionary_files.empty());
  EXPECT_EQ(config.logging.level, LogLevel::kInfo);
  EXPECT_EQ(config.logging.format, LogFormat::kText);
  EXPECT_EQ(config.duplicate_window, Duration::seconds(10));
  EXPECT_EQ(config.mab_default, MabDefault::kReject);
  EXPECT_FALSE(config.admin_socket.has_value());
  EXPECT_TRUE(config.require_message_authenticator);
  EXPECT_FALSE(config.share_ports);
  EXPECT_EQ(config.source_file, "/etc/radiusward/gateway.yaml");
}

TEST(ParseGatewayConfig, ReadsEveryKey) {
  constexpr std::string_view kText =
      "listen: [127.0.0.1, '::1']\n"
      "auth_port: 11812\n"
      "acct_port: 11813\n"
      "workers: 4\n"
      "users_file: /srv/users\n"
      "clients_file: clients.conf\n"
      "dictionary_dir: dict\n"
      "dictionary_files:\n"
      "  - extra/dictionary.local\n"
      "  - /opt/dictionary.vendor\n"
      "logging:\n"
      "  level: debug\n"
      "  format: json\n"
      "duplicate_window_ms: 30000\n"
      "mab_default: accept\n"
      "admin_socket: /run/radiusward/admin.sock\n"
      "require_message_authenticator: true\n"
      "share_ports: true\n";
  auto result = parse_gateway_config(kText, "/etc/rw/gateway.yaml");
  ASSERT_TRUE(result.has_value()) << error_strings(result.error())[0];
  const GatewayConfig& config = *result;
  ASSERT_EQ(config.listen.size(), 2u);
  EXPECT_EQ(config.listen[0].bytes[0], 127);
  EXPECT_EQ(config.listen[0].bytes[3], 1);
  EXPECT_EQ(config.listen[0].where.line, 1);
  EXPECT_TRUE(config.listen[1].is_v6);
  EXPECT_EQ(config.listen[1].bytes[15], 1);
  EXPECT_EQ(config.auth_port, 11812);
  EXPECT_EQ(config.acct_port, 11813);
  EXPECT_EQ(config.workers, 4);
  EXPECT_EQ(config.users_file.path, "/srv/users");
  EXPECT_EQ(config.users_file.where, (SourceLocation{"/etc/rw/gateway.yaml", 5, 1}));
  EXPECT_EQ(config.clients_file.path, "/etc/rw/clients.conf");
  ASSERT_TRUE(config.dictionary_dir.has_value());
  EXPECT_EQ(config.dictionary_dir->path, "/etc/rw/dict");
  EXPECT_FALSE(config.dictionary_dir_optional);
  ASSERT_EQ(config.dictionary_files.size(), 2u);
  EXPECT_EQ(config.dictionary_files[0].path, "/etc/rw/extra/dictionary.local");
  EXPECT_EQ(config.dictionary_files[0].where.line, 9);
  EXPECT_EQ(config.dictionary_files[0].where.column, 5);
  EXPECT_EQ(config.dictionary_files[1].path, "/opt/dictionary.vendor");
  EXPECT_EQ(config.logging.level, LogLevel::kDebug);
  EXPECT_EQ(config.logging.format, LogFormat::kJson);
  EXPECT_EQ(config.duplicate_window, Duration::seconds(30));
  EXPECT_EQ(config.mab_default, MabDefault::kAccept);
  ASSERT_TRUE(config.admin_socket.has_value());
  EXPECT_EQ(config.admin_socket->path, "/run/radiusward/admin.sock");
  EXPECT_TRUE(config.require_message_authenticator);
  EXPECT_TRUE(config.share_ports);
}

TEST(ParseGatewayConfig, ResolvesRelativePathsAgainstTheConfigFolder) {
  auto result = parse_gateway_config("users_file: ../demo/users\nclients_file: c.conf\n", "etc/demo/gw.yaml");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->users_file.path, "etc/demo/users");
  EXPECT_EQ(result->clients_file.path, "etc/demo/c.conf");
}

TEST(ParseGatewayConfig, PolicyIsAPathBesideTheConfigOrAFlag) {
  auto result = parse_gateway_config(std::string(kMinimal) + "policy: policy.yaml\n", "etc/demo/gw.yaml");
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->policy_file.has_value());
  EXPECT_EQ(result->policy_file->path, "etc/demo/policy.yaml");
  EXPECT_EQ(result->policy_file->where.line, 3);
  EXPECT_FALSE(parse_gateway_config(kMinimal, "gw.yaml")->policy_file.has_value());
  GatewayOverrides overrides;
  overrides.policy_file = "p.yaml";
  auto flagged = apply_overrides(*result, overrides);
  ASSERT_TRUE(flagged.has_value());
  EXPECT_EQ(flagged->policy_file->path, "p.yaml");
}

TEST(ParseGatewayConfig, KeepsRelativePathsWhenTheConfigHasNoFolder) {
  auto result = parse_gateway_config(kMinimal, "gw.yaml");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->users_file.path, "users");
}

TEST(ParseGatewayConfig, NullDictionaryDirMeansBuiltInOnly) {
  auto result = parse_gateway_config(std::string(kMinimal) + "dictionary_dir:\n", "gw.yaml");
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->dictionary_dir.has_value());
  EXPECT_FALSE(result->dictionary_dir_optional);
}

TEST(ParseGatewayConfig, RejectsUnknownKeyAtItsPosition) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "colour: blue\n"),
            std::vector<std::string>{"etc/gw.yaml:3:1: unknown key 'colour'"});
}

TEST(ParseGatewayConfig, RejectsUnknownNestedKey) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "logging:\n  level: info\n  colour: blue\n"),
            std::vector<std::string>{"etc/gw.yaml:5:3: unknown key 'logging.colour'"});
}

TEST(ParseGatewayConfig, CollectsEveryError) {
  constexpr std::string_view kText =
      "auth_port: 70000\n"
      "acct_port: twelve\n"
      "workers: -1\n"
      "listen: [10.0.0.256, '::1', '::1']\n"
      "logging: {level: loud, format: xml}\n"
      "mab_default: maybe\n"
      "require_message_authenticator: yes\n"
      "duplicate_window_ms: 1000\n"
      "users_file: [a, b]\n"
      "share_ports: sometimes\n";
  EXPECT_EQ(parse_errors(kText),
            (std::vector<std::string>{
                "etc/gw.yaml:1:12: expected an integer between 0 and 65535, got '70000'",
                "etc/gw.yaml:2:12: expected an integer between 0 and 65535, got 'twelve'",
                "etc/gw.yaml:3:10: expected an integer between 0 and 1024, got '-1'",
                "etc/gw.yaml:4:10: '10.0.0.256' is not an IPv4 or IPv6 address",
                "etc/gw.yaml:4:29: address '::1' is listed twice",
                "etc/gw.yaml:5:18: expected one of trace, debug, info, warn, error, off, got 'loud'",
                "etc/gw.yaml:5:32: expected text or json, got 'xml'",
                "etc/gw.yaml:6:14: expected reject or accept, got 'maybe'",
                "etc/gw.yaml:7:32: expected true or false, got 'yes'",
                "etc/gw.yaml:8:22: expected an integer between 5000 and 30000, got '1000'",
                "etc/gw.yaml:9:13: expected a path",
                "etc/gw.yaml:10:14: expected true or false, got 'sometimes'",
                "etc/gw.yaml:1:1: missing required key 'clients_file'",
            }));
}

TEST(ParseGatewayConfig, ReportsMissingRequiredKeys) {
  EXPECT_EQ(parse_errors("workers: 2\n"), (std::vector<std::string>{
                                              "etc/gw.yaml:1:1: missing required key 'users_file'",
                                              "etc/gw.yaml:1:1: missing required key 'clients_file'",
                                          }));
}

TEST(ParseGatewayConfig, RejectsDuplicateKey) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "workers: 1\nworkers: 2\n"),
            std::vector<std::string>{"etc/gw.yaml:4:1: duplicate key 'workers'"});
}

TEST(ParseGatewayConfig, RejectsSamePortForAuthenticationAndAccounting) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "auth_port: 1812\nacct_port: 1812\n"),
            std::vector<std::string>{"etc/gw.yaml:3:1: auth_port and acct_port are both 1812"});
}

TEST(ParseGatewayConfig, AcceptsPortZeroForBoth) {
  auto result = parse_gateway_config(std::string(kMinimal) + "auth_port: 0\nacct_port: 0\n", "gw.yaml");
  EXPECT_TRUE(result.has_value());
}

TEST(ParseGatewayConfig, RejectsEmptyListenList) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "listen: []\n"),
            std::vector<std::string>{"etc/gw.yaml:3:9: listen needs at least one address"});
}

TEST(ParseGatewayConfig, PointsAtTheKeyWhenTheValueIsMissing) {
  EXPECT_EQ(parse_errors("users_file:\nclients_file: c\n"),
            std::vector<std::string>{"etc/gw.yaml:1:1: expected a path"});
}

TEST(ParseGatewayConfig, ReportsYamlSyntaxErrorsOneBased) {
  std::vector<std::string> errors = parse_errors("users_file: a\nclients_file: [b\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("etc/gw.yaml:3:1: ", 0), 0u) << errors[0];
}

TEST(ParseGatewayConfig, RejectsEmptyAndNonMappingDocuments) {
  EXPECT_EQ(parse_errors(""), std::vector<std::string>{"etc/gw.yaml:1:1: the configuration is empty"});
  EXPECT_EQ(
      parse_errors("- a\n- b\n"),
      std::vector<std::string>{"etc/gw.yaml:1:1: the configuration must be a mapping of keys to values"});
}

TEST(ParseGatewayConfig, SurvivesDeepNesting) {
  std::string text = "users_file: " + std::string(100000, '[');
  EXPECT_FALSE(parse_gateway_config(text, "gw.yaml").has_value());
}

TEST(LoadGatewayConfig, ReportsUnreadableFileWithoutPosition) {
  auto result = load_gateway_config("/nonexistent/gw.yaml");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(error_strings(result.error()),
            std::vector<std::string>{"/nonexistent/gw.yaml: cannot read: No such file or directory"});
}

TEST(LoadGatewayConfig, LoadsTheDemoConfig) {
  const std::string path = std::string(RW_SOURCE_ROOT) + "/etc/demo/gateway.yaml";
  auto result = load_gateway_config(path);
  ASSERT_TRUE(result.has_value()) << error_strings(result.error())[0];
  EXPECT_EQ(result->auth_port, 1812);
  EXPECT_EQ(result->users_file.path, std::string(RW_SOURCE_ROOT) + "/etc/demo/users");
  EXPECT_EQ(result->clients_file.path, std::string(RW_SOURCE_ROOT) + "/etc/demo/clients.conf");
}

TEST(ApplyOverrides, FlagsReplaceConfigValues) {
  auto base = parse_gateway_config(kMinimal, "/etc/gw.yaml");
  ASSERT_TRUE(base.has_value());
  GatewayOverrides overrides{.users_file = "my-users",
                             .auth_port = 2812,
                             .workers = 3,
                             .listen = {"127.0.0.1"},
                             .log_level = "debug"};
  auto result = apply_overrides(*base, overrides);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->users_file.path, "my-users");
  EXPECT_EQ(result->users_file.where.file, "--users");
  EXPECT_EQ(result->clients_file.path, "/etc/clients.conf");
  EXPECT_EQ(result->auth_port, 2812);
  EXPECT_EQ(result->acct_port, 1813);
  EXPECT_EQ(result->workers, 3);
  ASSERT_EQ(result->listen.size(), 1u);
  EXPECT_EQ(result->listen[0].text, "127.0.0.1");
  EXPECT_EQ(result->logging.level, LogLevel::kDebug);
}

TEST(ApplyOverrides, FlagsAloneNeedUsersAndClients) {
  auto result = apply_overrides(default_gateway_config(), GatewayOverrides{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(error_strings(result.error()), (std::vector<std::string>{
                                               "--users: required without --config",
                                               "--clients: required without --config",
                                           }));
}

TEST(ApplyOverrides, RejectsInvalidFlagValues) {
  GatewayOverrides overrides{.users_file = "u",
                             .clients_file = "c",
                             .dictionary_dir = "",
                             .auth_port = 70000,
                             .acct_port = -1,
                             .workers = 5000,
                             .listen = {"localhost"},
                             .log_level = "loud"};
  auto result = apply_overrides(default_gateway_config(), overrides);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(error_strings(result.error()),
            (std::vector<std::string>{
                "--dictionary-dir: expected a path, got an empty string",
                "--auth-port: expected a port between 0 and 65535, got 70000",
                "--acct-port: expected a port between 0 and 65535, got -1",
                "--workers: expected between 0 and 1024, got 5000",
                "--listen: 'localhost' is not an IPv4 or IPv6 address",
                "--log-level: expected one of trace, debug, info, warn, error, off, got 'loud'",
            }));
}

TEST(ParseGatewayConfig, ReadsTheAccountingSection) {
  constexpr std::string_view kText =
      "users_file: users\n"
      "clients_file: clients.conf\n"
      "admin_socket: admin/gateway.sock\n"
      "accounting:\n"
      "  members: [{id: 1, address: 127.0.0.1:7301}, {id: 2, address: '[::1]:7302'}]\n"
      "  pending_records_max: 1000\n"
      "  batch_records_max: 64\n"
      "  batch_delay_us: 250\n"
      "  key: User-Name,Acct-Session-Id\n"
      "  session_query_timeout_ms: 400\n"
      "  tls: {ca: certs/ca.pem, cert: certs/gateway-a.pem, key: certs/gateway-a.key, crl: certs/crl.pem}\n"
      "simultaneous_use_unavailable: drop\n";
  auto result = parse_gateway_config(kText, "/etc/gw.yaml");
  ASSERT_TRUE(result.has_value()) << error_strings(result.error())[0];
  ASSERT_TRUE(result->accounting.has_value());
  const AccountingConfig& accounting = *result->accounting;
  ASSERT_EQ(accounting.members.size(), 2u);
  EXPECT_EQ(accounting.members[0].address.text, "127.0.0.1:7301");
  EXPECT_EQ(accounting.members[1].address.text, "[::1]:7302");
  EXPECT_EQ(accounting.members[1].where.line, 5);
  EXPECT_EQ(accounting.members[1].member_id, 2u);
  ASSERT_TRUE(accounting.tls.has_value());
  EXPECT_EQ(accounting.tls->cert.path, "/etc/certs/gateway-a.pem");
  EXPECT_EQ(accounting.tls->crl->path, "/etc/certs/crl.pem");
  EXPECT_FALSE(accounting.insecure_plaintext_cluster);
  EXPECT_EQ(accounting.pending_records_max, 1000u);
  EXPECT_EQ(accounting.batch_records_max, 64u);
  EXPECT_EQ(accounting.batch_delay, Duration::microseconds(250));
  EXPECT_EQ(accounting.key, "User-Name,Acct-Session-Id");
  EXPECT_EQ(accounting.key_where.line, 9);
  EXPECT_EQ(accounting.key_where.column, 8);
  EXPECT_EQ(accounting.session_query_timeout, Duration::milliseconds(400));
  EXPECT_EQ(result->simultaneous_use_unavailable, SimultaneousUseUnavailable::kDrop);
  ASSERT_TRUE(result->admin_socket.has_value());
  EXPECT_EQ(result->admin_socket->path, "/etc/admin/gateway.sock");
}

TEST(ParseGatewayConfig, AccountingDefaultsAndAbsence) {
  auto absent = parse_gateway_config(kMinimal, "gw.yaml");
  ASSERT_TRUE(absent.has_value());
  EXPECT_FALSE(absent->accounting.has_value());
  auto defaults = parse_gateway_config(
      std::string(kMinimal) + "accounting: {members: [10.0.0.1:7301], insecure_plaintext_cluster: true}\n",
      "gw.yaml");
  ASSERT_TRUE(defaults.has_value()) << error_strings(defaults.error())[0];
  ASSERT_TRUE(defaults->accounting.has_value());
  EXPECT_EQ(defaults->accounting->pending_records_max, 65536u);
  EXPECT_EQ(defaults->accounting->batch_records_max, 512u);
  EXPECT_EQ(defaults->accounting->batch_delay, Duration::microseconds(5000));
  EXPECT_FALSE(defaults->accounting->key.has_value());
  EXPECT_EQ(defaults->accounting->session_query_timeout, Duration::seconds(1));
  // Fail closed, as FreeRADIUS's session check does when its database is down.
  EXPECT_EQ(defaults->simultaneous_use_unavailable, SimultaneousUseUnavailable::kReject);
}

TEST(ParseGatewayConfig, RejectsBadSimultaneousUseSettings) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "simultaneous_use_unavailable: maybe\n"
                                                 "accounting:\n"
                                                 "  members: [127.0.0.1:7301]\n"
                                                 "  session_query_timeout_ms: 5\n"
                                                 "  insecure_plaintext_cluster: true\n"),
            (std::vector<std::string>{
                "etc/gw.yaml:3:31: expected reject, accept or drop, got 'maybe'",
                "etc/gw.yaml:6:29: expected an integer between 10 and 10000, got '5'",
            }));
}

TEST(ParseGatewayConfig, RejectsBadAccountingValuesAtTheirPosition) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) +
                         "accounting:\n"
                         "  members: [localhost:7301, 127.0.0.1:0, 127.0.0.1:7301, 127.0.0.1:7301]\n"
                         "  batch_records_max: 5000\n"
                         "  pending_records_max: 0\n"
                         "  colour: blue\n"
                         "  insecure_plaintext_cluster: true\n"),
            (std::vector<std::string>{
                "etc/gw.yaml:4:13: expected IPv4:port or [IPv6]:port, got 'localhost:7301'",
                "etc/gw.yaml:4:29: expected IPv4:port or [IPv6]:port, got '127.0.0.1:0'",
                "etc/gw.yaml:4:58: member '127.0.0.1:7301' is listed twice",
                "etc/gw.yaml:5:22: expected an integer between 1 and 4096, got '5000'",
                "etc/gw.yaml:6:24: expected an integer between 1 and 16777216, got '0'",
                "etc/gw.yaml:7:3: unknown key 'accounting.colour'",
            }));
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "accounting:\n  members: ['[::1]:7301', '[0:0::1]:7301']\n"
                                                 "  insecure_plaintext_cluster: true\n"),
            (std::vector<std::string>{"etc/gw.yaml:4:27: member '[0:0::1]:7301' is listed twice"}));
  EXPECT_EQ(parse_errors(std::string(kMinimal) +
                         "accounting:\n  batch_delay_us: 10\n  insecure_plaintext_cluster: true\n"),
            (std::vector<std::string>{"etc/gw.yaml:4:3: missing required key 'accounting.members'"}));
  EXPECT_EQ(parse_errors(std::string(kMinimal) +
                         "accounting:\n  members: []\n  insecure_plaintext_cluster: true\n"),
            (std::vector<std::string>{"etc/gw.yaml:4:12: accounting.members needs 1 to 9 addresses"}));
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "accounting: yes\n"),
            (std::vector<std::string>{"etc/gw.yaml:3:13: expected a mapping with 'members' and bounds"}));
}

TEST(ApplyOverrides, MemberFlagsReplaceOrEnableAccounting) {
  auto base = parse_gateway_config(
      std::string(kMinimal) +
          "accounting: {members: [10.0.0.1:7301], batch_records_max: 8, insecure_plaintext_cluster: true}\n",
      "/etc/gw.yaml");
  ASSERT_TRUE(base.has_value());
  GatewayOverrides overrides{.members = {"127.0.0.1:1", "127.0.0.1:2"},
                             .insecure_plaintext_cluster = true,
                             .admin_socket = "gw.sock"};
  auto replaced = apply_overrides(*base, overrides);
  ASSERT_TRUE(replaced.has_value());
  ASSERT_EQ(replaced->accounting->members.size(), 2u);
  EXPECT_EQ(replaced->accounting->members[1].address.text, "127.0.0.1:2");
  EXPECT_EQ(replaced->accounting->batch_records_max, 8u);
  EXPECT_EQ(replaced->admin_socket->path, "gw.sock");

  auto enabled = apply_overrides(*parse_gateway_config(kMinimal, "/etc/gw.yaml"), overrides);
  ASSERT_TRUE(enabled.has_value());
  ASSERT_TRUE(enabled->accounting.has_value());
  EXPECT_EQ(enabled->accounting->members.size(), 2u);
  EXPECT_EQ(enabled->accounting->pending_records_max, 65536u);

  auto bad = apply_overrides(*base, GatewayOverrides{.members = {"1.2.3.4", "1.2.3.4:5", "1.2.3.4:5"}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(error_strings(bad.error()), (std::vector<std::string>{
                                            "--member: expected IPv4:port or [IPv6]:port, got '1.2.3.4'",
                                            "--member: member '1.2.3.4:5' is given twice",
                                        }));
}

// docs/security.md "Submission port": TLS with every member's id, or the
// plaintext opt-in by name; --member (no ids) needs the opt-in flag.
TEST(ParseGatewayConfig, AccountingNeedsTlsWithMemberIdsOrThePlaintextOptIn) {
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "accounting:\n  members: [127.0.0.1:7301]\n"),
            (std::vector<std::string>{"etc/gw.yaml:3:1: accounting needs 'tls' (the cluster certificates: "
                                      "radiusward certs) or 'insecure_plaintext_cluster: true'"}));
  EXPECT_EQ(
      parse_errors(std::string(kMinimal) +
                   "accounting:\n"
                   "  members: [127.0.0.1:7301, {id: 2, address: 127.0.0.1:7302}, {id: 2, address: "
                   "127.0.0.1:7303}, {address: 127.0.0.1:7304}]\n"
                   "  tls: {ca: a, cert: b, key: c}\n"),
      (std::vector<std::string>{
          "etc/gw.yaml:4:97: a member entry needs 'id' and 'address'",
          "etc/gw.yaml:4:13: with accounting.tls each member needs its id: {id: N, address: 127.0.0.1:7301}",
          "etc/gw.yaml:4:63: member id 2 is listed twice",
      }));
  EXPECT_EQ(
      parse_errors(std::string(kMinimal) +
                   "accounting:\n  members: [127.0.0.1:7301]\n  insecure_plaintext_cluster: true\n"
                   "  tls: {ca: a, cert: b, key: c}\n"),
      (std::vector<std::string>{
          "etc/gw.yaml:3:1: accounting.tls and accounting.insecure_plaintext_cluster exclude each other",
          "etc/gw.yaml:4:13: with accounting.tls each member needs its id: {id: N, address: "
          "127.0.0.1:7301}"}));
  auto flags = apply_overrides(*parse_gateway_config(kMinimal, "/etc/gw.yaml"),
                               GatewayOverrides{.members = {"127.0.0.1:1"}});
  ASSERT_FALSE(flags.has_value());
  EXPECT_EQ(
      error_strings(flags.error()),
      (std::vector<std::string>{"--member: accounting needs 'tls' (the cluster certificates: radiusward "
                                "certs) or 'insecure_plaintext_cluster: true'"}));
}

TEST(ParseHostPort, ReadsIpv4AndBracketedIpv6) {
  auto v4 = parse_host_port("192.0.2.1:7301");
  ASSERT_TRUE(v4.has_value());
  EXPECT_FALSE(v4->is_v6);
  EXPECT_EQ(v4->port, 7301);
  EXPECT_EQ(v4->bytes[0], 192);
  auto v6 = parse_host_port("[2001:db8::1]:65535");
  ASSERT_TRUE(v6.has_value());
  EXPECT_TRUE(v6->is_v6);
  EXPECT_EQ(v6->port, 65535);
  for (std::string_view bad : {"", ":1", "1.2.3.4:", "1.2.3.4:65536", "[::1]", "[::1:5", "::1:5", "a:1"}) {
    EXPECT_FALSE(parse_host_port(bad).has_value()) << bad;
  }
}

class CheckReferencedFiles : public testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::path(testing::TempDir()) / "gateway_config_test";
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_ / "dict");
    std::ofstream(folder_ / "users") << "alice Cleartext-Password := \"x\"\n";
    std::ofstream(folder_ / "clients.conf") << "client localhost {}\n";
    std::ofstream(folder_ / "dict" / "dictionary") << "\n";
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  Result<GatewayConfig, ConfigErrors> parse(std::string_view text) {
    return parse_gateway_config(text, (folder_ / "gw.yaml").string());
  }

  std::filesystem::path folder_;
};

TEST_F(CheckReferencedFiles, AcceptsReadableFiles) {
  auto config = parse("users_file: users\nclients_file: clients.conf\ndictionary_dir: dict\n");
  ASSERT_TRUE(config.has_value());
  EXPECT_TRUE(check_referenced_files(*config).empty());
}

TEST_F(CheckReferencedFiles, PointsAtTheKeyNamingAMissingFile) {
  auto config = parse(
      "users_file: users\n"
      "clients_file: nope.conf\n"
      "dictionary_dir: missing-dict\n"
      "dictionary_files: [dict]\n");
  ASSERT_TRUE(config.has_value());
  const std::string gw = (folder_ / "gw.yaml").string();
  const std::string base = folder_.string();
  EXPECT_EQ(error_strings(check_referenced_files(*config)),
            (std::vector<std::string>{
                gw + ":2:1: cannot read clients file '" + base + "/nope.conf': No such file or directory",
                gw + ":3:1: dictionary folder '" + base + "/missing-dict' does not exist",
                gw + ":4:20: cannot read dictionary file '" + base + "/dict': is a folder, not a file",
            }));
}

TEST_F(CheckReferencedFiles, IgnoresAMissingDefaultDictionaryFolder) {
  auto config = parse("users_file: users\nclients_file: clients.conf\n");
  ASSERT_TRUE(config.has_value());
  GatewayConfig changed = *config;
  changed.dictionary_dir->path = (folder_ / "no-such-folder").string();
  EXPECT_TRUE(check_referenced_files(changed).empty());
}

TEST_F(CheckReferencedFiles, NamesTheFlagForFilesGivenOnTheCommandLine) {
  auto config = apply_overrides(default_gateway_config(),
                                GatewayOverrides{.users_file = (folder_ / "absent").string(),
                                                 .clients_file = (folder_ / "clients.conf").string(),
                                                 .dictionary_dir = (folder_ / "dict").string()});
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(error_strings(check_referenced_files(*config)),
            std::vector<std::string>{"--users: cannot read users file '" + (folder_ / "absent").string() +
                                     "': No such file or directory"});
}

}  // namespace
}  // namespace rw::config

namespace rw::config {
namespace {

TEST(ParseGatewayConfig, ReadsTheTlsAndRadSecSections) {
  auto result = parse_gateway_config(std::string(kMinimal) +
                                         "tls:\n"
                                         "  cert: tls/server.pem\n"
                                         "  key: tls/server.key\n"
                                         "  ca: tls/ca.pem\n"
                                         "  crl: tls/ca.crl\n"
                                         "radsec:\n"
                                         "  listen: [127.0.0.1]\n"
                                         "  port: 12083\n"
                                         "  clients_file: radsec.conf\n"
                                         "  handshake_timeout_ms: 2000\n"
                                         "  idle_timeout_s: 30\n"
                                         "  connections_max: 10\n"
                                         "  client_connections_max: 2\n"
                                         "  buffered_bytes_max: 8192\n",
                                     "/etc/rw/gw.yaml");
  ASSERT_TRUE(result.has_value()) << error_strings(result.error())[0];
  ASSERT_TRUE(result->tls.has_value());
  EXPECT_EQ(result->tls->cert.path, "/etc/rw/tls/server.pem");
  EXPECT_EQ(result->tls->key.path, "/etc/rw/tls/server.key");
  EXPECT_EQ(result->tls->ca.path, "/etc/rw/tls/ca.pem");
  ASSERT_TRUE(result->tls->crl.has_value());
  ASSERT_TRUE(result->radsec.has_value());
  const RadSecConfig& radsec = *result->radsec;
  ASSERT_EQ(radsec.listen.size(), 1u);
  EXPECT_EQ(radsec.port, 12083);
  EXPECT_EQ(radsec.clients_file.path, "/etc/rw/radsec.conf");
  EXPECT_EQ(radsec.handshake_timeout, Duration::seconds(2));
  EXPECT_EQ(radsec.idle_timeout, Duration::seconds(30));
  EXPECT_EQ(radsec.connections_max, 10u);
  EXPECT_EQ(radsec.client_connections_max, 2u);
  EXPECT_EQ(radsec.buffered_bytes_max, 8192u);
}

TEST(ParseGatewayConfig, RadSecDefaultsAndErrorsAtTheirPosition) {
  auto defaults = parse_gateway_config(std::string(kMinimal) +
                                           "tls: {cert: c.pem, key: k.pem, ca: ca.pem}\n"
                                           "radsec: {clients_file: r.conf}\n",
                                       "gw.yaml");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->radsec->port, 2083);
  EXPECT_TRUE(defaults->radsec->listen.empty());
  EXPECT_EQ(defaults->radsec->handshake_timeout, Duration::seconds(10));
  EXPECT_EQ(defaults->radsec->idle_timeout, Duration::seconds(120));
  EXPECT_FALSE(defaults->tls->crl.has_value());
  EXPECT_EQ(
      parse_errors(std::string(kMinimal) + "radsec:\n  clients_file: r.conf\n"),
      (std::vector<std::string>{"etc/gw.yaml:3:1: radsec needs a 'tls' section (the server certificate and "
                                "key, and the CA of the client certificates)"}));
  EXPECT_EQ(
      parse_errors(std::string(kMinimal) + "tls: {cert: c.pem, key: k.pem, ca: ca.pem}\n"
                                           "radsec:\n  port: 70000\n  connections_max: 0\n  colour: blue\n"),
      (std::vector<std::string>{"etc/gw.yaml:5:9: expected an integer between 0 and 65535, got '70000'",
                                "etc/gw.yaml:6:20: expected an integer between 1 and 65536, got '0'",
                                "etc/gw.yaml:7:3: unknown key 'radsec.colour'",
                                "etc/gw.yaml:5:3: missing required key 'radsec.clients_file'"}));
  EXPECT_EQ(parse_errors(std::string(kMinimal) + "tls: {cert: c.pem}\n").size(), 2u);
}

TEST(ApplyOverrides, TlsAndRadSecFlagsTurnRadSecOn) {
  GatewayOverrides overrides;
  overrides.users_file = "users";
  overrides.clients_file = "clients.conf";
  overrides.tls_cert = "server.pem";
  overrides.tls_key = "server.key";
  overrides.tls_ca = "ca.pem";
  overrides.radsec_clients = "radsec.conf";
  overrides.radsec_port = 12083;
  auto result = apply_overrides(default_gateway_config(), overrides);
  ASSERT_TRUE(result.has_value()) << error_strings(result.error())[0];
  EXPECT_EQ(result->tls->cert.path, "server.pem");
  EXPECT_FALSE(result->tls->crl.has_value());
  EXPECT_EQ(result->radsec->clients_file.path, "radsec.conf");
  EXPECT_EQ(result->radsec->clients_file.where.file, "--radsec-clients");
  EXPECT_EQ(result->radsec->port, 12083);

  GatewayOverrides alone;
  alone.users_file = "users";
  alone.clients_file = "clients.conf";
  alone.tls_cert = "server.pem";
  alone.radsec_port = 12083;
  auto refused = apply_overrides(default_gateway_config(), alone);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(error_strings(refused.error()),
            (std::vector<std::string>{"--tls-cert: --tls-cert, --tls-key and --tls-ca go together",
                                      "--radsec-port: needs --radsec-clients or a radsec section"}));
  GatewayOverrides no_tls;
  no_tls.users_file = "users";
  no_tls.clients_file = "clients.conf";
  no_tls.radsec_clients = "radsec.conf";
  auto without_tls = apply_overrides(default_gateway_config(), no_tls);
  ASSERT_FALSE(without_tls.has_value());
  EXPECT_EQ(error_strings(without_tls.error()),
            (std::vector<std::string>{
                "--radsec-clients: needs --tls-cert, --tls-key and --tls-ca (or a tls section)"}));
}

}  // namespace
}  // namespace rw::config
