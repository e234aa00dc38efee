// Tests of a member reload's restart-only keys: export: and dictionary_dir
// reload, positions alone are no change, and every other changed key is one
// error at the key.
#include "config/member_reload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rw::config {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

MemberConfig parse(const std::string& text) {
  auto result = parse_member_config(text, "m.yaml");
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error()[0].to_string());
  return result ? *result : MemberConfig{};
}

std::vector<std::string> changes(const std::string& running, const std::string& next) {
  std::vector<std::string> out;
  for (const ConfigError& error : member_restart_changes(parse(running), parse(next)))
    out.push_back(error.to_string());
  return out;
}

std::string config(const std::string& middle) {
  return "id: 1\n"
         "data_dir: member-1\n"
         "raft_address: 127.0.0.1:7201\n"
         "submission_listen: 127.0.0.1:7301\n" +
         middle +
         "members:\n"
         "  - {id: 1, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}\n"
         "  - {id: 2, raft: 127.0.0.1:7202, submission: 127.0.0.1:7302}\n"
         "cluster_tls: {ca: certs/ca.pem, cert: certs/member-1.pem, key: certs/member-1.key}\n";
}

TEST(MemberRestartChanges, ExportAndDictionaryReloadAndPositionsAreNoChange) {
  const std::string running = config("export: {sqlite: radacct.db, batch_records_max: 100}\n");
  EXPECT_THAT(changes(running, running), IsEmpty());
  // Another database, other bounds, a dictionary folder, every key moved.
  EXPECT_THAT(changes(running, "# moved\n" + config("dictionary_dir: dict\n"
                                                    "export:\n"
                                                    "  postgresql: {conninfo: \"host=db dbname=radius\"}\n"
                                                    "  batch_records_max: 500\n"
                                                    "  retry_max_ms: 2000\n")),
              IsEmpty());
  // The export removed (no exporter) and added back.
  EXPECT_THAT(changes(running, config("")), IsEmpty());
  EXPECT_THAT(changes(config(""), running), IsEmpty());
}

TEST(MemberRestartChanges, EveryOtherKeyIsOneErrorAtTheKey) {
  const std::string running = config("raft: {election_timeout_ms: 300}\n");
  EXPECT_THAT(changes(running, config("raft: {election_timeout_ms: 400}\n")),
              ElementsAre("m.yaml:5:1: the raft section changed: needs a restart (nothing was reloaded)"));
  EXPECT_THAT(
      changes(running,
              "id: 2\n"
              "data_dir: member-2\n"
              "raft_address: 127.0.0.1:7202\n"
              "submission_listen: 127.0.0.1:7302\n"
              "raft: {election_timeout_ms: 300}\n"
              "members:\n"
              "  - {id: 1, raft: 127.0.0.1:7201, submission: 127.0.0.1:7301}\n"
              "  - {id: 2, raft: 127.0.0.1:7202, submission: 127.0.0.1:7302}\n"
              "cluster_tls: {ca: certs/ca.pem, cert: certs/member-2.pem, key: certs/member-2.key}\n"),
      ElementsAre(
          "m.yaml:1:1: id changed from 1 to 2: needs a restart (nothing was reloaded)",
          "m.yaml:2:1: data_dir changed from \"member-1\" to \"member-2\": needs a restart (nothing was "
          "reloaded)",
          "m.yaml:3:1: raft_address changed from \"127.0.0.1:7201\" to \"127.0.0.1:7202\": needs a "
          "restart (nothing was reloaded)",
          "m.yaml:4:1: submission_listen changed from \"127.0.0.1:7301\" to \"127.0.0.1:7302\": needs "
          "a restart (nothing was reloaded)",
          "m.yaml:9:1: the cluster_tls section changed: needs a restart (nothing was reloaded)"));
  EXPECT_THAT(changes(running, config("raft: {election_timeout_ms: 300}\nlogging: {level: debug}\n")),
              ElementsAre("m.yaml:6:1: the logging section changed: needs a restart (nothing was reloaded)"));
}

TEST(MemberRestartChanges, ARemovedKeyPointsAtTheFile) {
  EXPECT_THAT(changes(config("ledger: {held_records_max: 1000}\n"), config("")),
              ElementsAre("m.yaml: the ledger section changed: needs a restart (nothing was reloaded)"));
}

TEST(MemberRestartChanges, OnlyExportAndDictionaryDirAreReloadable) {
  EXPECT_TRUE(is_member_reloadable_key("export"));
  EXPECT_TRUE(is_member_reloadable_key("dictionary_dir"));
  EXPECT_FALSE(is_member_reloadable_key("raft"));
  EXPECT_FALSE(is_member_reloadable_key("ledger"));
}

}  // namespace
}  // namespace rw::config
