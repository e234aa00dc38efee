// /config's view of real configuration files with secrets in them (a
// gateway with an SQL users password and client secrets in clients.conf, a
// member exporting to PostgreSQL with a password and an sslpassword): the
// secrets never appear in the body, every key does; and the redaction of
// libpq connection strings on its own.
#include "config/config_view.h"

#include <gtest/gtest.h>

#include "config/temp_dir_for_test.h"

namespace rw::config {
namespace {

constexpr std::string_view kClientSecret = "Cl13nt-S3cret-4d2e";
constexpr std::string_view kOtherSecret = "second-client-secret-xyzzy";
constexpr std::string_view kSqlPassword = "SqlPassw0rd-Hunter2";
constexpr std::string_view kReplicaPassword = "replica-pw-7f3a";
constexpr std::string_view kExportPassword = "ExportPw-9d81";
constexpr std::string_view kSslPassword = "key-passphrase-42";

class ConfigViewTest : public TempDirTest {};

TEST_F(ConfigViewTest, GatewaySecretsNeverAppear) {
  write("users", "alice Cleartext-Password := \"wonderland\"\n");
  write("clients.conf",
        "client nas1 {\n  ipaddr = 192.0.2.10\n  secret = \"Cl13nt-S3cret-4d2e\"\n  shortname = nas1\n}\n"
        "client nas2 {\n  ipaddr = 2001:db8::/64\n  secret = second-client-secret-xyzzy\n}\n");
  const std::string path =
      write("gateway.yaml",
            "listen: [127.0.0.1]\nusers_file: users\nclients_file: clients.conf\n"
            "admin_socket: admin.sock\nadmin_listen: 127.0.0.1:9464\nadmin_token_file: admin.token\n"
            "users_stores: [files, sql]\n"
            "sql_users:\n  postgresql: \"host=db1 dbname=radius user=rw password='SqlPassw0rd-Hunter2' "
            "sslmode=require\"\n"
            "  read_replica: \"postgresql://rw:replica-pw-7f3a@db2:5432/radius?sslmode=require\"\n"
            "accounting:\n  members: [{id: 1, address: 127.0.0.1:7301}]\n"
            "  tls: {ca: ca.pem, cert: gw.pem, key: gw.key}\n");
  auto config = load_gateway_config(path);
  ASSERT_TRUE(config.has_value()) << (config ? "" : config.error().front().to_string());
  auto clients = load_clients_file(config->clients_file.path);
  ASSERT_TRUE(clients.has_value());
  ASSERT_EQ(clients->clients.size(), 2u);
  ASSERT_EQ(clients->clients[0].secret, kClientSecret);  // The file holds the secrets read here.

  const std::string body =
      config_body("gateway", gateway_config_json(*config, clients->clients), named_files(*config));
  for (std::string_view secret : {kClientSecret, kOtherSecret, kSqlPassword, kReplicaPassword}) {
    EXPECT_EQ(body.find(secret), std::string::npos) << secret << " in " << body;
  }
  // Not even a part of one.
  EXPECT_EQ(body.find("Cl13nt"), std::string::npos);
  const auto parsed = nlohmann::json::parse(body);
  EXPECT_EQ(parsed["role"], "gateway");
  const auto& c = parsed["config"];
  EXPECT_EQ(c["clients"][0]["secret"], "<redacted>");
  EXPECT_EQ(c["clients"][1]["secret"], "<redacted>");
  EXPECT_EQ(c["clients"][0]["ipaddr"], "192.0.2.10/32");
  EXPECT_EQ(c["clients"][1]["ipaddr"], "2001:db8::/64");
  EXPECT_EQ(c["sql_users"]["postgresql"],
            "host=db1 dbname=radius user=rw password=<redacted> sslmode=require");
  EXPECT_EQ(c["sql_users"]["read_replica"], "postgresql://rw:<redacted>@db2:5432/radius?sslmode=require");
  EXPECT_EQ(c["accounting"]["tls"]["key"], (dir_ / "gw.key").string());  // A path, never its contents.
  EXPECT_EQ(c["admin_listen"], "127.0.0.1:9464");
  EXPECT_EQ(c["auth_port"], 1812);
  EXPECT_EQ(c["duplicate_window_ms"], 10000);
  // Every top-level key of the config file is shown.
  for (const char* key : {"listen", "users_file", "clients_file", "admin_socket", "admin_token_file",
                          "users_stores", "sql_users", "policy", "accounting"}) {
    EXPECT_TRUE(c.contains(key)) << key;
  }
  // The files the process reads, the config file first.
  const auto& files = parsed["files"];
  ASSERT_GE(files.size(), 6u);
  EXPECT_EQ(files[0]["path"], path);
  EXPECT_EQ(files[0]["what"], "config file");
  EXPECT_EQ(files[2]["what"], "clients file");
}

TEST_F(ConfigViewTest, MemberSecretsNeverAppear) {
  const std::string path =
      write("member.yaml",
            "id: 1\ndata_dir: data\nraft_address: 127.0.0.1:7201\nsubmission_listen: 127.0.0.1:7301\n"
            "members:\n  - {id: 1, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}\n"
            "insecure_plaintext_cluster: true\n"
            "export:\n  postgresql:\n    conninfo: \"host=db dbname=radius user=rw password=ExportPw-9d81\"\n"
            "    sslpassword: key-passphrase-42\n    sslmode: verify-full\n");
  auto config = load_member_config(path);
  ASSERT_TRUE(config.has_value()) << (config ? "" : config.error().front().to_string());
  ASSERT_NE(config->exporter->postgresql_conninfo.find(kSslPassword), std::string::npos);
  const std::string body = config_body("member", member_config_json(*config), named_files(*config));
  EXPECT_EQ(body.find(kExportPassword), std::string::npos) << body;
  EXPECT_EQ(body.find(kSslPassword), std::string::npos) << body;
  const auto parsed = nlohmann::json::parse(body);
  EXPECT_EQ(parsed["config"]["export"]["postgresql"]["conninfo"],
            "host=db dbname=radius user=rw password=<redacted> sslpassword=<redacted> sslmode='verify-full'");
  EXPECT_EQ(parsed["config"]["ledger"]["held_records_max"], 64000);
  EXPECT_EQ(parsed["config"]["raft"]["election_timeout_ms"], 300);
  EXPECT_EQ(parsed["config"]["id"], 1);
}

TEST(RedactConninfo, KeywordValueForm) {
  EXPECT_EQ(redact_conninfo("host=a password=secret"), "host=a password=<redacted>");
  EXPECT_EQ(redact_conninfo("host=a  PASSWORD = 'se cr\\'et' port=5"),
            "host=a  PASSWORD = <redacted> port=5");
  EXPECT_EQ(redact_conninfo("password=a\\ b host=x"), "password=<redacted> host=x");
  EXPECT_EQ(redact_conninfo("host=a"), "host=a");
  EXPECT_EQ(redact_conninfo(""), "");
}

TEST(RedactConninfo, UriForm) {
  EXPECT_EQ(redact_conninfo("postgresql://u:pw@h/db"), "postgresql://u:<redacted>@h/db");
  EXPECT_EQ(redact_conninfo("postgres://u@h/db?password=pw&sslmode=require"),
            "postgres://u@h/db?password=<redacted>&sslmode=require");
  EXPECT_EQ(redact_conninfo("postgresql://h/db?pass%77ord=pw"), "postgresql://h/db?pass%77ord=<redacted>");
  EXPECT_EQ(redact_conninfo("postgresql://u:p@ss@h/db"), "postgresql://u:<redacted>@h/db");
  // Options after a URI are not parsed: the whole string goes.
  EXPECT_EQ(redact_conninfo("postgresql://h/db sslpassword='x'"), "<redacted>");
}

TEST(RedactConninfo, MalformedIsRedactedWhole) {
  EXPECT_EQ(redact_conninfo("host=a password='unterminated"), "<redacted>");
  EXPECT_EQ(redact_conninfo("password"), "<redacted>");
  EXPECT_EQ(redact_conninfo("=x password=y"), "<redacted>");
}

TEST(Iso8601Utc, FormatsUnixMilliseconds) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601_utc(1764464823123), "2025-11-30T01:07:03.123Z");
  EXPECT_EQ(iso8601_utc(951782400000), "2000-02-29T00:00:00.000Z");
  EXPECT_EQ(iso8601_utc(-1), "1969-12-31T23:59:59.999Z");
}

}  // namespace
}  // namespace rw::config
