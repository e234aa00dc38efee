// The audit log's verifier: an intact chain verifies; each kind of
// tampering is named at its line (docs/operations.md "Audit log").
#include "audit/verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace rw::audit {
namespace {

using Lines = std::vector<std::string>;

DecisionRecord record(std::string_view identity, bool accepted) {
  return DecisionRecord{.unix_ms = 1'764'680'701'000,
                        .client = "nas1",
                        .address = "127.0.0.1",
                        .identity = identity,
                        .method = "PAP",
                        .accepted = accepted,
                        .rule = accepted ? "users:1" : "wrong_password",
                        .reason = accepted ? "ok" : "wrong_password"};
}

// A file: a header, then `count` decisions.
Lines write_file(Chain& chain, std::size_t count, HeaderReason reason = HeaderReason::kNew) {
  Lines lines{chain.header(0, reason)};
  for (std::size_t i = 0; i < count; ++i)
    lines.push_back(chain.decision(record("user" + std::to_string(i), i % 2 == 0)));
  return lines;
}

std::string join(const Lines& lines) { return std::accumulate(lines.begin(), lines.end(), std::string()); }

Verification verify(const std::vector<std::string>& files, std::optional<ChainKey> key = std::nullopt) {
  Verifier verifier(std::move(key));
  for (std::size_t i = 0; i < files.size(); ++i) verifier.on_file("f" + std::to_string(i + 1), files[i]);
  return verifier.finish();
}

std::string problems(const Verification& verification) {
  std::string text;
  for (const Finding& finding : verification.problems) text += finding.to_string() + "\n";
  return text;
}

TEST(AuditVerify, IntactFileVerifiesWithItsHead) {
  Chain chain(ChainKey(), Head{});
  const Verification result = verify({join(write_file(chain, 5))});
  EXPECT_TRUE(result.intact()) << problems(result);
  EXPECT_EQ(result.lines, 6u);
  ASSERT_TRUE(result.head);
  EXPECT_EQ(*result.head, chain.head());
}

TEST(AuditVerify, ATenantsLinesNameItAndVerify) {
  Chain chain(ChainKey(), Head{});
  Lines lines{chain.header(0, HeaderReason::kNew)};
  DecisionRecord tenant_record = record("alice", true);
  tenant_record.tenant = "acme";
  lines.push_back(chain.decision(tenant_record));
  lines.push_back(chain.decision(record("bob", true)));  // A line of before tenants.
  EXPECT_NE(lines[1].find("\"address\":\"127.0.0.1\",\"tenant\":\"acme\"},\"identity\""), std::string::npos)
      << lines[1];
  const Verification result = verify({join(lines)});
  EXPECT_TRUE(result.intact()) << problems(result);
  EXPECT_EQ(result.lines, 3u);
}

TEST(AuditVerify, DeletedLineIsNamedAsMissing) {
  Chain chain(ChainKey(), Head{});
  Lines lines = write_file(chain, 5);
  lines.erase(lines.begin() + 3);  // Sequence 4, line 4.
  const Verification result = verify({join(lines)});
  ASSERT_EQ(result.problems.size(), 1u) << problems(result);
  EXPECT_EQ(result.problems[0].problem, Problem::kMissingLines);
  EXPECT_EQ(result.problems[0].line, 4u);
  EXPECT_EQ(result.problems[0].to_string(),
            "f1:4: missing lines: the sequence jumps from 3 to 5: 1 line(s) missing");
}

TEST(AuditVerify, EditedCharacterIsNamedAtItsLine) {
  Chain chain(ChainKey(), Head{});
  Lines lines = write_file(chain, 5);
  lines[2].replace(lines[2].find("user1"), 5, "userX");
  const Verification result = verify({join(lines)});
  ASSERT_EQ(result.problems.size(), 1u) << problems(result);
  EXPECT_EQ(result.problems[0].problem, Problem::kEdited);
  EXPECT_EQ(result.problems[0].line, 3u);
}

TEST(AuditVerify, SwappedLinesAreNamedOutOfOrder) {
  Chain chain(ChainKey(), Head{});
  Lines lines = write_file(chain, 5);
  std::swap(lines[2], lines[3]);
  const Verification result = verify({join(lines)});
  ASSERT_EQ(result.problems.size(), 2u) << problems(result);
  EXPECT_EQ(result.problems[0].line, 3u);
  EXPECT_EQ(result.problems[0].problem, Problem::kMissingLines);
  EXPECT_EQ(result.problems[1].line, 4u);
  EXPECT_EQ(result.problems[1].problem, Problem::kOutOfOrder);
}

TEST(AuditVerify, InsertedLineWithARecomputedHashIsFoundAtTheNextLine) {
  Chain chain(ChainKey(), Head{});
  Lines lines = write_file(chain, 2);  // Header 1, decisions 2 and 3.
  // A forger who knows the format recomputes a plain SHA-256 line after sequence 2.
  Chain forger(ChainKey(),
               Head{.sequence = 2, .hash = split_sealed(lines[1].substr(0, lines[1].size() - 1))->hash});
  lines.insert(lines.begin() + 2, forger.decision(record("mallory", true)));
  const Verification result = verify({join(lines)});
  ASSERT_EQ(result.problems.size(), 1u) << problems(result);
  EXPECT_EQ(result.problems[0].problem, Problem::kOutOfOrder);
  EXPECT_EQ(result.problems[0].line, 4u);
}

TEST(AuditVerify, ReplacedLineWithARecomputedHashBreaksTheChain) {
  Chain chain(ChainKey(), Head{});
  Lines lines = write_file(chain, 3);
  Chain forger(ChainKey(),
               Head{.sequence = 1, .hash = split_sealed(lines[0].substr(0, lines[0].size() - 1))->hash});
  lines[1] = forger.decision(record("mallory", true));
  const Verification result = verify({join(lines)});
  ASSERT_EQ(result.problems.size(), 1u) << problems(result);
  EXPECT_EQ(result.problems[0].problem, Problem::kChainBroken);
  EXPECT_EQ(result.problems[0].line, 3u);
}

TEST(AuditVerify, TruncatedLastLineIsTorn) {
  Chain chain(ChainKey(), Head{});
  std::string text = join(write_file(chain, 3));
  text.resize(text.size() - 10);
  const Verification result = verify({text});
  ASSERT_EQ(result.problems.size(), 1u) << problems(result);
  EXPECT_EQ(result.problems[0].problem, Problem::kTornLine);
  EXPECT_EQ(result.problems[0].line, 4u);
  EXPECT_EQ(result.head->sequence, 3u);
}

TEST(AuditVerify, RotatedFilesVerifyInOrderAndAlone) {
  Chain chain(ChainKey(), Head{});
  const std::string first = join(write_file(chain, 3));
  const std::string second = join(write_file(chain, 3, HeaderReason::kRotated));
  const Verification both = verify({first, second});
  EXPECT_TRUE(both.intact()) << problems(both);
  EXPECT_EQ(both.head->sequence, 8u);
  const Verification alone = verify({second});
  EXPECT_TRUE(alone.intact()) << problems(alone);
}

TEST(AuditVerify, MissingMiddleFileBreaksHeaderContinuity) {
  Chain chain(ChainKey(), Head{});
  const std::string first = join(write_file(chain, 2));
  (void)write_file(chain, 2, HeaderReason::kRotated);
  const std::string third = join(write_file(chain, 2, HeaderReason::kRotated));
  const Verification result = verify({first, third});
  ASSERT_EQ(result.problems.size(), 1u) << problems(result);
  EXPECT_EQ(result.problems[0].problem, Problem::kContinuity);
  EXPECT_EQ(result.problems[0].file, "f2");
  EXPECT_EQ(result.problems[0].line, 1u);
}

TEST(AuditVerify, FileWithoutItsHeaderIsNamed) {
  Chain chain(ChainKey(), Head{});
  Lines lines = write_file(chain, 2);
  lines.erase(lines.begin());
  const Verification result = verify({join(lines)});
  ASSERT_EQ(result.problems.size(), 1u) << problems(result);
  EXPECT_EQ(result.problems[0].problem, Problem::kNoHeader);
}

TEST(AuditVerify, KeyedChainNeedsTheRightKey) {
  Chain chain(ChainKey::keyed("the-right-key-0123"), Head{});
  const std::string text = join(write_file(chain, 3));
  EXPECT_TRUE(verify({text}, ChainKey::keyed("the-right-key-0123")).intact());
  const Verification wrong = verify({text}, ChainKey::keyed("a-wrong-key-012345"));
  EXPECT_EQ(wrong.problems.size(), 4u) << problems(wrong);
  EXPECT_TRUE(std::all_of(wrong.problems.begin(), wrong.problems.end(),
                          [](const Finding& finding) { return finding.problem == Problem::kEdited; }));
  const Verification none = verify({text});
  ASSERT_EQ(none.problems.size(), 1u) << problems(none);
  EXPECT_EQ(none.problems[0].problem, Problem::kNeedsKey);
}

TEST(AuditVerify, KeyGivenForAPlainChainIsNamed) {
  Chain chain(ChainKey(), Head{});
  const Verification result = verify({join(write_file(chain, 1))}, ChainKey::keyed("some-key-0123456"));
  ASSERT_EQ(result.problems.size(), 1u) << problems(result);
  EXPECT_EQ(result.problems[0].problem, Problem::kNotKeyed);
}

TEST(AuditVerify, GapLineIsANoteNotTampering) {
  Chain chain(ChainKey(), Head{});
  Lines lines = write_file(chain, 2);
  lines.push_back(chain.gap(0, 25));
  lines.push_back(chain.decision(record("bob", true)));
  const Verification result = verify({join(lines)});
  EXPECT_TRUE(result.intact()) << problems(result);
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_EQ(result.notes[0].line, 4u);
  EXPECT_EQ(result.lost_in_gaps, 25u);
}

TEST(AuditVerify, TornTailFollowedByATornTailHeaderIsANote) {
  Chain chain(ChainKey(), Head{});
  std::string first = join(write_file(chain, 2));
  Chain continued = chain;
  first += chain.decision(record("cut", true)).substr(0, 30);
  const std::string second = join(write_file(continued, 1, HeaderReason::kTornTail));
  const Verification result = verify({first, second});
  EXPECT_TRUE(result.intact()) << problems(result);
  EXPECT_EQ(result.notes.size(), 1u);
}

TEST(AuditVerify, NonAuditLinesAreNamed) {
  const Verification result = verify({"not json\n{\"seq\":1}\n"});
  ASSERT_EQ(result.problems.size(), 2u) << problems(result);
  EXPECT_EQ(result.problems[0].problem, Problem::kBadJson);
  EXPECT_EQ(result.problems[1].problem, Problem::kNotAuditLine);
  EXPECT_EQ(verify({""}).problems.at(0).problem, Problem::kEmptyFile);
}

TEST(AuditInspectTail, CleanTailGivesTheHead) {
  Chain chain(ChainKey(), Head{});
  const std::string text = join(write_file(chain, 3));
  const Tail tail = inspect_tail(text, true, ChainKey());
  EXPECT_FALSE(tail.empty);
  EXPECT_TRUE(tail.clean);
  EXPECT_EQ(tail.last_good, chain.head());
  // From the middle of a line, as a read of the file's last bytes starts.
  EXPECT_EQ(inspect_tail(std::string_view(text).substr(10), false, ChainKey()).last_good, chain.head());
}

TEST(AuditInspectTail, TornOrForeignTailIsNotClean) {
  Chain chain(ChainKey(), Head{});
  std::string text = join(write_file(chain, 2));
  const Head good = chain.head();
  const std::string torn = text + chain.decision(record("x", true)).substr(0, 20);
  Tail tail = inspect_tail(torn, true, ChainKey());
  EXPECT_FALSE(tail.clean);
  EXPECT_EQ(tail.last_good, good);
  tail = inspect_tail(text, true, ChainKey::keyed("another-key-01234"));
  EXPECT_FALSE(tail.clean);
  EXPECT_FALSE(tail.last_good);
  EXPECT_TRUE(inspect_tail("", true, ChainKey()).empty);
}

}  // namespace
}  // namespace rw::audit
