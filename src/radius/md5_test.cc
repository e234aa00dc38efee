// MD5 and HMAC-MD5 against the RFC 1321 and RFC 2202 test vectors, plus the
// properties the authenticators rely on (incremental updates, forking).
#include "radius/md5.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "radius/test_vectors.h"

namespace rw::radius {
namespace {

std::string hex(Bytes bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

TEST(Md5, MatchesRfc1321TestSuite) {
  std::istringstream lines(testing::read_text("md5_rfc1321.txt"));
  std::string line;
  int cases = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string digest = line.substr(0, 32);
    const std::string message = line.size() > 33 ? line.substr(33) : "";
    EXPECT_EQ(hex(Md5::of(as_bytes(message))), digest) << "message: " << message;
    ++cases;
  }
  EXPECT_EQ(cases, 7);
}

TEST(Md5, IncrementalUpdatesEqualOneShot) {
  std::string message(1000, 'x');
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<char>(i * 7);
  Md5 md5;
  for (std::size_t at = 0; at < message.size(); at += 13) {
    md5.update(as_bytes(std::string_view(message).substr(at, 13)));
  }
  EXPECT_EQ(md5.finish(), Md5::of(as_bytes(message)));
}

TEST(Md5, CopyForksTheComputation) {
  Md5 prefix;
  prefix.update(as_bytes("message "));
  Md5 fork = prefix;
  prefix.update(as_bytes("digest"));
  fork.update(as_bytes("digest"));
  EXPECT_EQ(prefix.finish(), Md5::of(as_bytes("message digest")));
  EXPECT_EQ(fork.finish(), Md5::of(as_bytes("message digest")));
}

TEST(HmacMd5Key, MatchesRfc2202TestCases) {
  std::istringstream lines(testing::read_text("hmac_md5_rfc2202.txt"));
  std::string line;
  int cases = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key;
    std::string data;
    std::string digest;
    fields >> key >> data >> digest;
    HmacMd5Key hmac(testing::parse_hex(key));
    EXPECT_EQ(hex(hmac.mac(testing::parse_hex(data))), digest) << "case " << cases + 1;
    ++cases;
  }
  EXPECT_EQ(cases, 7);
}

TEST(HmacMd5Key, BeginAndFinishEqualsMac) {
  HmacMd5Key hmac(as_bytes("Jefe"));
  Md5 inner = hmac.begin();
  inner.update(as_bytes("what do ya want "));
  inner.update(as_bytes("for nothing?"));
  Md5Digest mac;
  hmac.finish(inner, mac);
  EXPECT_EQ(mac, hmac.mac(as_bytes("what do ya want for nothing?")));
}

}  // namespace
}  // namespace rw::radius
