// A user store the gateway reads besides its users file (SQL), seen from the
// packet path: a lookup that answers from memory or within a small bounded
// wait, never a query on the worker's thread. The implementation
// (io/sql_user_cache.h) owns the connections and threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "auth/sql_users.h"

namespace rw::gateway {

class UserStore {
 public:
  enum class Status : std::uint8_t {
    kFound,        // `user` holds the user's compiled rows (user->known may be false: no rows).
    kUnavailable,  // Not known yet (the lookup is in flight) or the database failed:
                   // the request is dropped and the NAS's retransmission finds it.
  };
  struct Lookup {
    Status status = Status::kUnavailable;
    std::shared_ptr<const auth::SqlUser> user;
  };

  virtual ~UserStore() = default;
  // Looks `user_name` up. Called from UDP workers concurrently; allocates
  // nothing when the answer is cached.
  [[nodiscard]] virtual Lookup find(std::string_view user_name) = 0;
};

}  // namespace rw::gateway
