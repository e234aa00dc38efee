// The audit line format and chain (docs/operations.md "Audit log").
#include "audit/chain.h"

#include <gtest/gtest.h>

namespace rw::audit {
namespace {

DecisionRecord alice() {
  return DecisionRecord{.unix_ms = 1'764'680'701'123,
                        .client = "nas1",
                        .address = "192.0.2.7",
                        .identity = "alice",
                        .method = "PAP",
                        .accepted = true,
                        .rule = "/etc/radiusward/users:3",
                        .reason = "ok"};
}

TEST(AuditUtcText, FormatsMillisecondsInUtc) {
  EXPECT_EQ(utc_text(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(utc_text(1'764'680'701'123), "2025-12-02T13:05:01.123Z");
  EXPECT_EQ(utc_text(-1), "1969-12-31T23:59:59.999Z");
}

TEST(AuditJsonString, EscapesControlsQuotesAndBadUtf8) {
  std::string out;
  append_json_string(out, std::string_view("a\"b\\c\n\x01\x7f\xff\xc3\xa9", 11));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\u000a\\u0001\\u007f\xEF\xBF\xBD\xC3\xA9\"");
}

TEST(AuditChain, DecisionLineHasTheFixedKeyOrderAndLinksToTheStart) {
  Chain chain(ChainKey(), Head{});
  const std::string line = chain.decision(alice());
  const std::string hash = to_hex(chain.head().hash);
  EXPECT_EQ(line,
            "{\"seq\":1,\"time\":\"2025-12-02T13:05:01.123Z\",\"client\":{\"name\":\"nas1\",\"address\":"
            "\"192.0.2.7\"},\"identity\":\"alice\",\"method\":\"PAP\",\"decision\":\"accept\",\"rule\":"
            "\"/etc/radiusward/users:3\",\"reason\":\"ok\",\"prev\":\"" +
                std::string(64, '0') + "\",\"hash\":\"" + hash + "\"}\n");
  EXPECT_EQ(chain.head().sequence, 1u);
}

TEST(AuditChain, HashCoversPrevAndTheBytesBeforeTheChainFields) {
  Chain chain(ChainKey(), Head{});
  (void)chain.header(0, HeaderReason::kNew);
  const Head before = chain.head();
  const std::string line = chain.decision(alice());
  const std::optional<SealedLine> sealed = split_sealed(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(sealed);
  EXPECT_EQ(sealed->prev, before.hash);
  EXPECT_EQ(sealed->hash, ChainKey().link(before.hash, sealed->body));
  EXPECT_TRUE(sealed->body.ends_with("\"reason\":\"ok\""));
}

TEST(AuditChain, KeyedChainDiffersFromPlainAndByKey) {
  Chain plain(ChainKey(), Head{});
  Chain keyed(ChainKey::keyed("k1-0123456789abcdef"), Head{});
  Chain other(ChainKey::keyed("k2-0123456789abcdef"), Head{});
  (void)plain.decision(alice());
  (void)keyed.decision(alice());
  (void)other.decision(alice());
  EXPECT_NE(plain.head().hash, keyed.head().hash);
  EXPECT_NE(keyed.head().hash, other.head().hash);
}

TEST(AuditChain, HeaderNamesThePreviousHead) {
  Chain chain(ChainKey(), Head{.sequence = 41, .hash = Hash{1, 2, 3}});
  const std::string line = chain.header(0, HeaderReason::kRotated);
  EXPECT_NE(line.find("\"seq\":42,"), std::string::npos);
  EXPECT_NE(line.find("\"header\":{\"format\":1,\"chain\":\"sha256\",\"reason\":\"rotated\",\"previous\":{"
                      "\"seq\":41,\"hash\":\"010203"),
            std::string::npos);
}

TEST(AuditChain, GapLineCarriesTheCount) {
  Chain chain(ChainKey(), Head{});
  EXPECT_NE(chain.gap(0, 17).find(",\"gap\":17,\"prev\""), std::string::npos);
}

TEST(AuditHex, RoundTripsAndRefusesOtherText) {
  Hash hash{};
  hash[0] = 0xab;
  hash[31] = 0x01;
  EXPECT_EQ(parse_hex(to_hex(hash)), hash);
  EXPECT_FALSE(parse_hex(std::string(63, 'a')));
  EXPECT_FALSE(parse_hex(std::string(64, 'A')));
}

TEST(AuditSplitSealed, RefusesALineWithoutChainFields) {
  EXPECT_FALSE(split_sealed("{\"seq\":1}"));
  EXPECT_FALSE(split_sealed(""));
}

}  // namespace
}  // namespace rw::audit
