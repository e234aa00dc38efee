// Fuzz target for everything in auth that reads untrusted bytes: the stored
// password parsers (users files, SQL rows), MAC notations, UTF-8, and the
// CHAP / MS-CHAP attribute checks. Properties: nothing crashes, a parsed MAC
// round-trips through its canonical form, and a password always matches a
// Cleartext-Password made from itself. crypt(3) is left out on purpose: a
// fuzzed setting such as "$2b$31$" asks for hours of work by design.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "auth/chap.h"
#include "auth/encoding.h"
#include "auth/mab.h"
#include "auth/mschap.h"
#include "auth/password.h"
#include "base/assert.h"

namespace {

using namespace rw;
using namespace rw::auth;

void check_credential_parsers(std::string_view text) {
  const auto credential = parse_password_with_header(text);
  if (credential && credential->kind != CredentialKind::kCrypt)
    static_cast<void>(verify_pap(*credential, text));
  static_cast<void>(parse_credential("SSHA2-512-Password", text));
  static_cast<void>(parse_credential("NT-Password", text));
  if (!text.empty() && text.find('\0') == std::string_view::npos) {
    RW_ASSERT(verify_pap(Credential::cleartext(text), text).has_value());
  }
}

void check_mac(std::string_view text) {
  const auto mac = parse_mac(text);
  if (!mac) return;
  const MacText canonical = canonical_mac(*mac);
  const auto again = parse_mac(view(canonical));
  RW_ASSERT(again && *again == *mac);
  static_cast<void>(is_mab_request(text, view(canonical), text));
}

// Splits the input into MS-CHAP attributes and a user name, at fixed offsets.
void check_ms_chap(Bytes input) {
  if (input.size() < kMsChap2ChallengeSize + kMsChapResponseSize) return;
  const Bytes challenge = input.first(kMsChap2ChallengeSize);
  const Bytes response = input.subspan(kMsChap2ChallengeSize, kMsChapResponseSize);
  const std::string_view user_name = as_chars(input.subspan(kMsChap2ChallengeSize + kMsChapResponseSize));
  const Credential credential = Credential::cleartext("clientPass");
  static_cast<void>(verify_ms_chap2(
      credential, {.ms_chap_challenge = challenge, .ms_chap2_response = response, .user_name = user_name}));
  static_cast<void>(verify_ms_chap1(credential, {.ms_chap_challenge = challenge.first(kMsChap1ChallengeSize),
                                                 .ms_chap_response = response}));
  static_cast<void>(verify_chap(credential, {.chap_password = response.first(kChapPasswordSize),
                                             .chap_challenge = challenge,
                                             .request_authenticator = challenge}));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Bytes input(data, size);
  const std::string_view text = as_chars(input);
  check_credential_parsers(text);
  check_mac(text);
  std::array<std::uint8_t, 2 * kNtPasswordUnitsMax> unicode{};
  static_cast<void>(utf8_to_utf16le(text, unicode));
  check_ms_chap(input);
  return 0;
}
