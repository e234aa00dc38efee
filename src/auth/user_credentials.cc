// Parsing a users file's passwords at load; see user_credentials.h.
#include "auth/user_credentials.h"

#include <algorithm>

namespace rw::auth {

Result<UserCredentials, std::string> UserCredentials::parse(const config::UsersFile& users,
                                                            const radius::AttributeDef* nt_password) {
  UserCredentials out;
  if (auto loaded = out.load(users, nt_password); !loaded) return fail(loaded.error());
  return out;
}

Result<void, std::string> UserCredentials::load(const config::UsersFile& users,
                                                const radius::AttributeDef* nt_password) {
  for (const config::UserEntry& entry : users.entries()) {
    for (const config::UsersItem& item : entry.check) {
      const radius::AttributeDef* def = item.def;
      if (!def->internal || config::is_comparison(item.op)) continue;
      const Bytes value = item.bytes();
      Result<Credential, CredentialError> credential =
          def == nt_password && value.size() == kNtHashSize ? Credential::nt_hash([&] {
            NtHash hash{};
            std::copy(value.begin(), value.end(), hash.begin());
            return hash;
          }())
                                                            : parse_credential(def->name, as_chars(value));
      if (!credential && credential.error() == CredentialError::kUnknownAttribute) continue;
      if (!credential) {
        return fail(users.file_of(entry) + ":" + std::to_string(item.line) + ":" +
                    std::to_string(item.column) + ": " + def->name + ": " +
                    std::string(to_string(credential.error())));
      }
      credentials_.emplace(&item, std::move(*credential));
    }
  }
  return {};
}

}  // namespace rw::auth
