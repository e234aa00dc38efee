// Tests of the FreeRADIUS-format tokenizer.
#include "config/freeradius_lexer.h"

#include <gtest/gtest.h>

#include <vector>

namespace rw::config {
namespace {

std::vector<Token> tokens_of(std::string_view text) {
  Lexer lexer(text, "t");
  std::vector<Token> out;
  for (;;) {
    auto token = lexer.next();
    EXPECT_TRUE(token.has_value()) << token.error().to_string();
    if (!token) return out;
    if (token->kind == TokenKind::kEndOfText) return out;
    out.push_back(*token);
  }
}

SourceError error_of(std::string_view text) {
  Lexer lexer(text, "t");
  for (;;) {
    auto token = lexer.next();
    if (!token) return token.error();
    if (token->kind == TokenKind::kEndOfText) {
      ADD_FAILURE() << "no error in: " << text;
      return {};
    }
  }
}

TEST(Lexer, SplitsOperatorsFromWords) {
  auto tokens = tokens_of("Tunnel-Type:1:=VLAN,Framed-IP-Address==10.0.0.1");
  ASSERT_EQ(tokens.size(), 8u);
  EXPECT_EQ(tokens[0].text, "Tunnel-Type:1");
  EXPECT_EQ(tokens[1].kind, TokenKind::kOperator);
  EXPECT_EQ(tokens[1].text, ":=");
  EXPECT_EQ(tokens[2].text, "VLAN");
  EXPECT_EQ(tokens[3].kind, TokenKind::kComma);
  EXPECT_EQ(tokens[5].text, "==");
  EXPECT_EQ(tokens[6].text, "10.0.0.1");
  EXPECT_EQ(tokens[7].kind, TokenKind::kEndOfLine);
}

TEST(Lexer, RecognisesEveryOperator) {
  for (std::string_view op :
       {":=", "==", "=", "+=", "-=", "!=", ">", ">=", "<", "<=", "=~", "!~", "=*", "!*"}) {
    auto tokens = tokens_of(std::string("A ") + std::string(op) + " b");
    ASSERT_EQ(tokens.size(), 4u) << op;
    EXPECT_EQ(tokens[1].kind, TokenKind::kOperator) << op;
    EXPECT_EQ(tokens[1].text, op);
  }
}

TEST(Lexer, KeepsIpv6AndMacColonsInWords) {
  auto tokens = tokens_of("ipv6addr = 2001:db8::/32 00:11:22:aa:bb:cc !root");
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(tokens[2].text, "2001:db8::/32");
  EXPECT_EQ(tokens[3].text, "00:11:22:aa:bb:cc");
  EXPECT_EQ(tokens[4].text, "!root");
}

TEST(Lexer, TracksLinesColumnsAndIndentation) {
  auto tokens = tokens_of("# comment\nalice  Cleartext-Password := \"x\"\n\n\tReply-Message = \"hi\"\n");
  ASSERT_EQ(tokens.size(), 9u);
  EXPECT_EQ(tokens[0].line, 2);
  EXPECT_EQ(tokens[0].column, 1);
  EXPECT_TRUE(tokens[0].starts_line);
  EXPECT_FALSE(tokens[0].indented);
  EXPECT_EQ(tokens[1].column, 8);
  EXPECT_FALSE(tokens[1].starts_line);
  EXPECT_EQ(tokens[4].kind, TokenKind::kEndOfLine);
  EXPECT_EQ(tokens[5].line, 4);
  EXPECT_EQ(tokens[5].column, 2);
  EXPECT_TRUE(tokens[5].indented);
  EXPECT_TRUE(tokens[5].starts_line);
}

TEST(Lexer, UnescapesDoubleQuotedStrings) {
  auto tokens = tokens_of(R"(x = "a\"b\\c\n\101\102\q")");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[2].kind, TokenKind::kString);
  EXPECT_EQ(tokens[2].text, "a\"b\\c\nAB\\q");
  EXPECT_EQ(tokens[2].raw, R"(a"b\\c\n\101\102\q)");
  EXPECT_EQ(tokens[2].quote, '"');
}

TEST(Lexer, SingleQuotesTakeOnlyQuoteAndBackslashEscapes) {
  auto tokens = tokens_of(R"(x = 'it\'s \n')");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[2].text, "it's \\n");
}

TEST(Lexer, CommentInsideQuotesIsText) {
  auto tokens = tokens_of("x = \"a # b\" # real comment");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[2].text, "a # b");
}

TEST(Lexer, ValueModeKeepsOperatorCharacters) {
  Lexer lexer("secret = c2VjcmV0== # c", "t");
  ASSERT_EQ(lexer.next()->text, "secret");
  ASSERT_EQ(lexer.next()->text, "=");
  auto value = lexer.next_value();
  ASSERT_TRUE(value);
  EXPECT_EQ(value->text, "c2VjcmV0==");
  EXPECT_EQ(lexer.next()->kind, TokenKind::kEndOfLine);
}

TEST(Lexer, ValueModeKeepsVariableBracesButStopsAtAClosingBrace) {
  Lexer lexer("$INCLUDE ${confdir}/x\nsecret = s}", "t");
  ASSERT_EQ(lexer.next()->text, "$INCLUDE");
  EXPECT_EQ(lexer.next_value()->text, "${confdir}/x");
  ASSERT_EQ(lexer.next()->kind, TokenKind::kEndOfLine);
  ASSERT_EQ(lexer.next()->text, "secret");
  ASSERT_EQ(lexer.next()->text, "=");
  EXPECT_EQ(lexer.next_value()->text, "s");
  EXPECT_EQ(lexer.next()->kind, TokenKind::kCloseBrace);
}

TEST(Lexer, HandlesCrLfLineEnds) {
  auto tokens = tokens_of("a = b\r\nc = d\r\n");
  ASSERT_EQ(tokens.size(), 8u);
  EXPECT_EQ(tokens[2].text, "b");
  EXPECT_EQ(tokens[4].line, 2);
}

TEST(Lexer, ReportsUnterminatedStringAtItsQuote) {
  SourceError error = error_of("a = \"abc\nb = c");
  EXPECT_EQ(error.to_string(), "t:1:5: unterminated quoted string");
}

TEST(Lexer, RefusesBackQuotes) {
  EXPECT_EQ(error_of("a = `/bin/true`").to_string(),
            "t:1:5: back-quoted strings (program execution) are not supported");
}

TEST(Lexer, RefusesOverlongWords) {
  std::string text = "a = " + std::string(kTokenBytesMax + 10, 'x');
  EXPECT_EQ(error_of(text).to_string(), "t:1:5: word longer than 8192 bytes");
}

TEST(Lexer, RecognisesIncludeDirectives) {
  auto tokens = tokens_of("$INCLUDE a\n$include b\n$-INCLUDE c\nINCLUDE d");
  EXPECT_EQ(include_kind(tokens[0]), IncludeKind::kRequired);
  EXPECT_EQ(include_kind(tokens[3]), IncludeKind::kRequired);
  EXPECT_EQ(include_kind(tokens[6]), IncludeKind::kOptional);
  EXPECT_EQ(include_kind(tokens[9]), IncludeKind::kNone);
}

}  // namespace
}  // namespace rw::config
