// The audit log's writer on real files: lines verify, a restart continues
// the chain, a torn tail starts a new file that says so, rotation keeps the
// chain across files, every decision is a line or counted in a gap, and a
// failing disk is counted without blocking (docs/operations.md "Audit log").
#include "gateway_shell/audit_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "audit/verify.h"
#include "config/temp_dir_for_test.h"

namespace rw::gateway_shell {
namespace {

class AuditLogTest : public config::TempDirTest {
 protected:
  AuditLogOptions options() const { return AuditLogOptions{.path = (dir_ / "audit.log").string()}; }

  static void decide(AuditLog& log, std::string_view user, bool accepted, std::string_view tenant = {}) {
    gateway::Endpoint from;
    from.address = {127, 0, 0, 1};
    from.port = 40000;
    gateway::Decision decision{.now = Instant{},
                               .from = from,
                               .client = "nas1",
                               .tenant = tenant,
                               .user_name = user,
                               .method = gateway::AuthMethod::kPap,
                               .accepted = accepted,
                               .reject = gateway::RejectReason::kWrongPassword,
                               .rule_file = "users",
                               .rule_line = accepted ? 3 : 0};
    log.on_decision(decision);
  }

  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  static audit::Verification verify(const std::vector<std::string>& paths,
                                    std::optional<audit::ChainKey> key = std::nullopt) {
    audit::Verifier verifier(std::move(key));
    for (const std::string& path : paths) verifier.on_file(path, read(path));
    return verifier.finish();
  }

  static std::string problems(const audit::Verification& result) {
    std::string text;
    for (const audit::Finding& finding : result.problems) text += finding.to_string() + "\n";
    return text;
  }

  static std::size_t count_lines(const std::string& text, std::string_view needle) {
    std::size_t count = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
    return count;
  }
};

TEST_F(AuditLogTest, WritesVerifiableLinesNamingClientIdentityDecisionAndRule) {
  auto log = AuditLog::open(options());
  ASSERT_TRUE(log) << log.error();
  decide(**log, "alice", true);
  decide(**log, "bob\"\n\xff", false);
  (*log)->stop();
  EXPECT_EQ((*log)->status().written, 3u);
  EXPECT_EQ((*log)->status().head.sequence, 3u);
  const std::string text = read(options().path);
  // A decision without a tenant is the default tenant's, which the writer's lines name.
  EXPECT_NE(text.find("\"client\":{\"name\":\"nas1\",\"address\":\"127.0.0.1:40000\",\"tenant\":\"default\"},"
                      "\"identity\":\"alice\","
                      "\"method\":\"PAP\",\"decision\":\"accept\",\"rule\":\"users:3\",\"reason\":\"ok\""),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("\"identity\":\"bob\\\"\\u000a\xEF\xBF\xBD\",\"method\":\"PAP\",\"decision\":\"reject\","
                "\"rule\":\"users\",\"reason\":\"wrong_password\""),
      std::string::npos)
      << text;
  const audit::Verification result = verify({options().path});
  EXPECT_TRUE(result.intact()) << problems(result);
  EXPECT_EQ(result.head, (*log)->status().head);
}

TEST_F(AuditLogTest, ATenantsWriterTakesItsTenantsDecisionsOnly) {
  AuditLogOptions acme = options();
  acme.tenant = "acme";
  auto log = AuditLog::open(acme);
  ASSERT_TRUE(log) << log.error();
  decide(**log, "alice", true, "acme");
  decide(**log, "mallory", true, "globex");
  decide(**log, "trudy", true);  // The default tenant's.
  decide(**log, "bob", false, "acme");
  (*log)->stop();
  EXPECT_EQ((*log)->status().written, 3u);  // The header and acme's two.
  const std::string text = read(acme.path);
  EXPECT_EQ(count_lines(text, "\"tenant\":\"acme\""), 2u) << text;
  EXPECT_EQ(text.find("mallory"), std::string::npos) << text;
  EXPECT_EQ(text.find("trudy"), std::string::npos) << text;
  const audit::Verification result = verify({acme.path});
  EXPECT_TRUE(result.problems.empty()) << problems(result);
}

TEST_F(AuditLogTest, RestartContinuesTheChainInTheSameFile) {
  for (int run = 0; run < 2; ++run) {
    auto log = AuditLog::open(options());
    ASSERT_TRUE(log) << log.error();
    decide(**log, "alice", true);
    (*log)->stop();
  }
  const std::string text = read(options().path);
  EXPECT_EQ(count_lines(text, "\"header\""), 1u);
  const audit::Verification result = verify({options().path});
  EXPECT_TRUE(result.intact()) << problems(result);
  EXPECT_EQ(result.head->sequence, 3u);
}

TEST_F(AuditLogTest, TornTailStartsANewFileWhoseHeaderSaysSo) {
  {
    auto log = AuditLog::open(options());
    ASSERT_TRUE(log);
    decide(**log, "alice", true);
    decide(**log, "bob", true);
  }
  std::string text = read(options().path);
  text.resize(text.size() - 20);
  std::ofstream(options().path, std::ios::binary | std::ios::trunc) << text;
  {
    auto log = AuditLog::open(options());
    ASSERT_TRUE(log) << log.error();
    decide(**log, "carol", true);
  }
  EXPECT_NE(read(options().path).find("\"reason\":\"torn_tail\",\"previous\":{\"seq\":2,"),
            std::string::npos);
  const audit::Verification both = verify({options().path + ".1", options().path});
  EXPECT_TRUE(both.intact()) << problems(both);
  EXPECT_EQ(both.notes.size(), 1u);
  EXPECT_FALSE(verify({options().path + ".1"}).intact());
}

TEST_F(AuditLogTest, RotationKeepsTheChainAcrossFilesAndKeepsN) {
  AuditLogOptions small = options();
  small.rotate_bytes = 1000;
  small.keep = 2;
  auto log = AuditLog::open(small);
  ASSERT_TRUE(log);
  for (int i = 0; i < 40; ++i) {
    decide(**log, "user" + std::to_string(i), true);
    // One line per batch, so that each file ends near rotate_bytes.
    while ((*log)->status().queued > 0) std::this_thread::yield();
  }
  (*log)->stop();
  EXPECT_GE((*log)->status().rotations, 3u);
  EXPECT_FALSE(std::filesystem::exists(small.path + ".3"));
  const audit::Verification all = verify({small.path + ".2", small.path + ".1", small.path});
  EXPECT_TRUE(all.intact()) << problems(all);
  EXPECT_EQ(all.head, (*log)->status().head);
  EXPECT_TRUE(verify({small.path}).intact());
  EXPECT_FALSE(verify({small.path + ".2", small.path}).intact());
}

TEST_F(AuditLogTest, EveryDecisionIsALineOrCountedInAGap) {
  AuditLogOptions tiny = options();
  tiny.queue_lines_max = 16;
  auto log = AuditLog::open(tiny);
  ASSERT_TRUE(log);
  constexpr int kDecisions = 20'000;
  for (int i = 0; i < kDecisions; ++i) decide(**log, "u", true);
  (*log)->stop();
  const audit::Verification result = verify({tiny.path});
  EXPECT_TRUE(result.intact()) << problems(result);
  const std::size_t decisions = count_lines(read(tiny.path), "\"decision\":");
  EXPECT_EQ(decisions + result.lost_in_gaps, static_cast<std::size_t>(kDecisions));
  EXPECT_EQ(result.lost_in_gaps, (*log)->status().dropped);
}

TEST_F(AuditLogTest, KeyedLogVerifiesOnlyWithItsKey) {
  AuditLogOptions keyed = options();
  keyed.key = "0123456789abcdef-key";
  {
    auto log = AuditLog::open(keyed);
    ASSERT_TRUE(log);
    decide(**log, "alice", true);
  }
  {
    // Restarted with the same key: the tail verifies and the file goes on.
    auto log = AuditLog::open(keyed);
    ASSERT_TRUE(log);
    decide(**log, "bob", true);
  }
  EXPECT_TRUE(verify({keyed.path}, audit::ChainKey::keyed("0123456789abcdef-key")).intact());
  EXPECT_FALSE(verify({keyed.path}, audit::ChainKey::keyed("another-key-0123456")).intact());
  EXPECT_FALSE(verify({keyed.path}).intact());
}

TEST_F(AuditLogTest, AFailingDiskIsCountedAndNeverBlocksTheWorkers) {
  AuditLogOptions full = options();
  std::filesystem::create_symlink("/dev/full", full.path);
  full.queue_lines_max = 4;
  auto log = AuditLog::open(full);
  ASSERT_TRUE(log) << log.error();
  for (int i = 0; i < 100; ++i) decide(**log, "alice", true);
  (*log)->stop();
  const AuditLogStatus status = (*log)->status();
  EXPECT_GE(status.write_errors, 1u);
  EXPECT_EQ(status.written, 0u);
  EXPECT_EQ(status.head.sequence, 0u);
}

TEST(AuditKey, ShortKeysAreRefused) {
  const std::string path = ::testing::TempDir() + "/audit_key_test.key";
  std::ofstream(path) << "short\n";
  EXPECT_FALSE(read_audit_key(path));
  std::ofstream(path, std::ios::trunc) << "0123456789abcdef\n";
  EXPECT_EQ(read_audit_key(path).value_or(""), "0123456789abcdef");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rw::gateway_shell
