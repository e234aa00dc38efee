// EAP-MD5 (RFC 3748 §5.4, RFC 1994 §4.1).
#include "eap/md5_method.h"

#include <algorithm>

#include "auth/chap.h"
#include "auth/password.h"

namespace rw::eap {
std::vector<std::uint8_t> md5_type_data(Bytes value, std::string_view name) {
  std::vector<std::uint8_t> out;
  out.reserve(1 + value.size() + name.size());
  out.push_back(static_cast<std::uint8_t>(value.size()));
  out.insert(out.end(), value.begin(), value.end());
  const Bytes name_bytes = as_bytes(name);
  out.insert(out.end(), name_bytes.begin(), name_bytes.end());
  return out;
}

std::array<std::uint8_t, kMd5ValueLength> md5_response_value(std::uint8_t identifier,
                                                             std::string_view password, Bytes challenge) {
  return auth::chap_response(identifier, password, challenge);
}

Md5Method::Md5Method(std::string_view identity, RandomSource& random)
    : identity_(identity), random_(random) {}

MethodStep Md5Method::start() {
  random_.fill(challenge_);
  answered_ = false;
  return request_step(md5_type_data(challenge_));
}

MethodStep Md5Method::on_response(Bytes type_data) {
  // Value-Size, Value, then the peer's Name (ignored: the EAP identity decides).
  ByteReader reader(type_data);
  std::uint8_t size = 0;
  if (!reader.read_u8(size) || size != kMd5ValueLength) {
    return failure_step("the MD5-Challenge Response's Value is not 16 octets");
  }
  const Bytes value = reader.read_bytes(size);
  if (reader.failed()) return failure_step("the MD5-Challenge Response is shorter than its Value-Size");
  std::copy(value.begin(), value.end(), value_.begin());
  answered_ = true;
  return credential_step();
}

MethodStep Md5Method::on_credential(const auth::Credential* known_good) {
  if (!answered_) return failure_step("no MD5-Challenge Response to check");
  if (known_good == nullptr) return failure_step("no known good password");
  if (known_good->kind != auth::CredentialKind::kCleartext) {
    return failure_step("EAP-MD5 needs a Cleartext-Password", auth::AuthError::kChapNeedsCleartext);
  }
  if (known_good->secret.empty()) return failure_step("empty password", auth::AuthError::kEmptyPassword);
  const auto expected = md5_response_value(identifier_, known_good->secret, challenge_);
  if (!constant_time_equal(expected, value_)) {
    return failure_step("the MD5-Challenge Response does not match", auth::AuthError::kWrongPassword);
  }
  return success_step();
}

}  // namespace rw::eap
