// The read-through cache between the UDP workers and the SQL user tables.
// Workers look users up in memory and never wait: a miss queues a fetch for
// a bounded pool of connection threads and the worker parks the request; the
// pool answers every request waiting for that user through the answer sink
// (the worker's eventfd, UdpServer::post_answers). The worker drops a
// request whose answer does not come within sql_users.miss_wait_ms
// (gateway::ParkingSetup::lookup_timeout; the NAS retransmits and finds the
// user cached). The mutex is never held across a
// query.
// Found and not-found answers are kept for `ttl` and `negative_ttl`; at most
// `entries_max` users are held. docs/authentication.md and docs/limits.md.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/time.h"
#include "gateway/user_store.h"
#include "gateway_shell/sql_user_source.h"
#include "radius/dictionary.h"

namespace rw::gateway_shell {

struct SqlUserCacheOptions {
  Duration ttl = Duration::seconds(60);           // A user found is served this long.
  Duration negative_ttl = Duration::seconds(10);  // A user with no rows is "unknown" this long.
  std::size_t entries_max = 100'000;              // Users held; an arbitrary one is evicted beyond.
  std::size_t queue_max = 1024;                   // Fetches waiting for a connection.
  std::size_t connections = 2;                    // Connection threads (the pool).
  std::size_t waiting_max = 4096;                 // Requests waiting for fetches, all users together.
  Duration reconnect_backoff = Duration::seconds(1);
};

struct SqlUserCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;  // Lookups that had to fetch (first or after expiry).
  std::uint64_t unavailable =
      0;  // Fetches refused (queue or waiters full) or answered "unavailable" (database error).
  std::uint64_t fetches = 0;  // Fetches done by the pool.
  std::uint64_t fetch_errors = 0;
  std::size_t entries = 0;
  std::size_t waiting = 0;  // Requests waiting for a fetch now.
};

class SqlUserCache final : public gateway::UserStore {
 public:
  // Opens one connection per pool thread, on that thread, with `connect`.
  using Connect = std::function<Result<std::unique_ptr<SqlUserSource>, std::string>()>;
  // `clock` gives `now` (tests pass a fake one; the gateway passes
  // io::monotonic_now). `on_error` hears fetch and compile errors (for the log).
  SqlUserCache(SqlUserCacheOptions options, Connect connect,
               std::shared_ptr<const radius::Dictionary> dictionary, std::function<Instant()> clock,
               std::function<void(const std::string&)> on_error = {});
  ~SqlUserCache() override;
  SqlUserCache(const SqlUserCache&) = delete;
  SqlUserCache& operator=(const SqlUserCache&) = delete;

  [[nodiscard]] Lookup find(std::string_view user_name) override;
  [[nodiscard]] bool fetch(std::string_view user_name, gateway::Ticket ticket) override;
  [[nodiscard]] SqlUserCacheStats stats() const;

  // Where answers go (a gateway::Answer of kind kUserLookup per waiting
  // request): the UDP server's post_answers, by ticket_worker. Called on the
  // pool's threads, never under the cache's mutex. Without one, answers are
  // lost and the parked requests time out.
  using AnswerSink = std::function<void(const gateway::Answer& answer)>;
  void set_answer_sink(AnswerSink sink);

 private:
  struct Entry {
    std::shared_ptr<const auth::SqlUser> user;  // Null while the first fetch is in flight.
    Instant expires{};
    bool fetching = false;
    std::vector<gateway::Ticket> waiters;  // Requests parked on this fetch.
  };
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };

  void run(std::stop_token stop);
  void evict_one_locked(Instant now);

  const SqlUserCacheOptions options_;
  const Connect connect_;
  const std::shared_ptr<const radius::Dictionary> dictionary_;
  const std::function<Instant()> clock_;
  const std::function<void(const std::string&)> on_error_;

  mutable std::mutex mutex_;
  std::condition_variable_any queued_;  // A name was queued.
  std::unordered_map<std::string, Entry, NameHash, std::equal_to<>> entries_;
  std::deque<std::string> queue_;
  SqlUserCacheStats stats_;
  AnswerSink answer_sink_;  // Guarded by mutex_; copied out to be called.
  std::vector<std::jthread> pool_;
};

}  // namespace rw::gateway_shell
