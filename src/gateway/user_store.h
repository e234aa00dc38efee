// A user store the gateway reads besides its users file (SQL), seen from the
// packet path: a lookup in memory that never waits, and a fetch that is
// answered later, through the worker's answer path, as a
// gateway::Answer of kind kUserLookup. The implementation
// (gateway_shell/sql_user_cache.h) owns the connections and threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "auth/sql_users.h"
#include "gateway/datagram.h"

namespace rw::gateway {

class UserStore {
 public:
  enum class Status : std::uint8_t {
    kFound,  // `user` holds the user's compiled rows (user->known may be false: no rows).
    kMiss,   // Not in memory: fetch() it and park the request.
  };
  struct Lookup {
    Status status = Status::kMiss;
    std::shared_ptr<const auth::SqlUser> user;
  };

  virtual ~UserStore() = default;
  // Looks `user_name` up in memory only. Called from UDP workers
  // concurrently; never waits for a database; allocates nothing on a hit.
  [[nodiscard]] virtual Lookup find(std::string_view user_name) = 0;
  // Asks for `user_name`: the answer (the user, or none when the database
  // could not answer) comes back as an Answer of kind kUserLookup for
  // `ticket`, possibly before this returns. False when it cannot be asked
  // (the fetch queue is full): the request is dropped and the NAS retries.
  [[nodiscard]] virtual bool fetch(std::string_view user_name, Ticket ticket) = 0;
};

// Checks crypt(3) passwords ($1$, $5$, $6$, $2b$, $y$, ...) away from the UDP
// workers: bcrypt and yescrypt cost milliseconds each by design
// (gateway_shell/crypt_pool.h). The verdict comes back as an Answer of kind
// kCryptVerdict for `ticket`.
class CryptVerifier {
 public:
  virtual ~CryptVerifier() = default;
  // False when the pool's queue is full: the request is dropped and the NAS
  // retries. Copies both strings.
  [[nodiscard]] virtual bool verify(std::string_view crypt_setting, std::string_view password,
                                    Ticket ticket) = 0;
};

}  // namespace rw::gateway
