// CHAP verification (RFC 1994 §4.1, RFC 2865 §2.2).
#include "auth/chap.h"

#include <nettle/md5.h>

#include <algorithm>

namespace rw::auth {

Bytes chap_challenge_of(const ChapRequest& request) {
  return request.chap_challenge ? *request.chap_challenge : request.request_authenticator;
}

std::array<std::uint8_t, kChapResponseSize> chap_response(std::uint8_t ident, std::string_view password,
                                                          Bytes challenge) {
  std::array<std::uint8_t, kChapResponseSize> response{};
  md5_ctx context;
  md5_init(&context);
  md5_update(&context, 1, &ident);
  md5_update(&context, password.size(), reinterpret_cast<const std::uint8_t*>(password.data()));
  md5_update(&context, challenge.size(), challenge.data());
  md5_digest(&context, response.size(), response.data());
  return response;
}

std::array<std::uint8_t, kChapPasswordSize> chap_password(std::uint8_t ident, std::string_view password,
                                                          Bytes challenge) {
  std::array<std::uint8_t, kChapPasswordSize> value{};
  value[0] = ident;
  const auto response = chap_response(ident, password, challenge);
  std::copy(response.begin(), response.end(), value.begin() + 1);
  return value;
}

Result<void, AuthError> verify_chap(const Credential& known_good, const ChapRequest& request) {
  if (request.chap_password.size() != kChapPasswordSize) return fail(AuthError::kMalformedChapPassword);
  if (request.chap_challenge && request.chap_challenge->size() < kChapChallengeSizeMin) {
    return fail(AuthError::kMalformedChapChallenge);
  }
  if (known_good.kind != CredentialKind::kCleartext) return fail(AuthError::kChapNeedsCleartext);
  if (known_good.secret.empty()) return fail(AuthError::kEmptyPassword);
  const std::uint8_t ident = request.chap_password[0];
  const auto expected = chap_response(ident, known_good.secret, chap_challenge_of(request));
  if (!constant_time_equal(expected, request.chap_password.subspan(1)))
    return fail(AuthError::kWrongPassword);
  return {};
}

}  // namespace rw::auth
