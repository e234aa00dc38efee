// Names of AuthError values, for counters and the per-request debug trace.
#include "auth/auth_error.h"

namespace rw::auth {

std::string_view to_string(AuthError error) {
  switch (error) {
    case AuthError::kWrongPassword:
      return "wrong password";
    case AuthError::kEmptyPassword:
      return "empty password";
    case AuthError::kInvalidUtf8:
      return "password is not valid UTF-8";
    case AuthError::kPasswordTooLong:
      return "password too long";
    case AuthError::kPasswordHasNul:
      return "password contains a NUL octet";
    case AuthError::kChapNeedsCleartext:
      return "CHAP needs Cleartext-Password; the stored password is a hash";
    case AuthError::kMsChapNeedsNtHash:
      return "MS-CHAP needs Cleartext-Password or NT-Password";
    case AuthError::kMalformedChapPassword:
      return "CHAP-Password is not 17 octets";
    case AuthError::kMalformedChapChallenge:
      return "CHAP-Challenge is shorter than 5 octets";
    case AuthError::kMalformedMsChapChallenge:
      return "MS-CHAP-Challenge has the wrong length";
    case AuthError::kMalformedMsChapResponse:
      return "MS-CHAP response is not 50 octets";
    case AuthError::kLmResponseNotSupported:
      return "MS-CHAPv1 LAN Manager response is not supported";
    case AuthError::kCryptFailed:
      return "crypt(3) rejected the stored password hash";
  }
  return "unknown";
}

}  // namespace rw::auth
