// The known good passwords of a users file's control items, parsed once when
// the file (or an SQL user compiled into one) is loaded, so that deciding a
// request allocates nothing and a malformed password is a load error with
// its position rather than a reject at 3 a.m.
#pragma once

#include <string>
#include <unordered_map>

#include "auth/password.h"
#include "base/result.h"
#include "config/users_file.h"
#include "radius/dictionary.h"

namespace rw::auth {

class UserCredentials {
 public:
  // Parses every password control item (Cleartext-Password, NT-Password,
  // Crypt-Password, Password-With-Header, ...) of `users`. An NT-Password
  // already in its 16-octet wire form (`nt_password` in the dictionary) is
  // taken as the hash. Errors read `file:line:col: Attribute: why`.
  [[nodiscard]] static Result<UserCredentials, std::string> parse(const config::UsersFile& users,
                                                                  const radius::AttributeDef* nt_password);
  // The same, into this (empty) object: for a file that lives beside it.
  [[nodiscard]] Result<void, std::string> load(const config::UsersFile& users,
                                               const radius::AttributeDef* nt_password);

  // The credential parsed from `item` (an item of the parsed file), or
  // nullptr for items that are no password.
  [[nodiscard]] const Credential* find(const config::UsersItem& item) const {
    const auto it = credentials_.find(&item);
    return it == credentials_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<const config::UsersItem*, Credential> credentials_;
};

}  // namespace rw::auth
