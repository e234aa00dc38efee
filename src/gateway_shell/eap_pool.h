// The EAP pool: threads that step EAP-TLS, PEAP and EAP-TTLS conversations
// (gateway/eap_step.h) away from the UDP workers and the RadSec thread. A
// TLS handshake costs milliseconds of CPU (RSA or ECDSA signatures,
// certificate checks), so a burst of 802.1X logins must not stall PAP, MAB
// or accounting behind it. The queue is bounded (docs/limits.md "EAP"): at
// the bound step() refuses, the worker puts the conversation back unchanged
// and drops the request (eap_queue_full), the NAS retries. Each job holds
// the conversation it steps, taken out of the shared table, so no two
// threads ever step one conversation.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "base/time.h"
#include "gateway/eap_step.h"

namespace rw::gateway_shell {

struct EapPoolOptions {
  std::size_t threads = 2;      // Stepping threads (eap.pool_threads).
  std::size_t queue_max = 256;  // Steps waiting for a thread, all workers together (eap.pool_queue_max).
  // How long a step waits for the SQL store to fetch an inner user it does
  // not hold in memory (sql_users.miss_wait).
  Duration sql_wait = Duration::milliseconds(20);
};

// The pool's figures for /metrics (docs/admin_api.md "/metrics").
struct EapPoolStats {
  std::size_t queued = 0;       // Steps waiting now.
  std::uint64_t refused = 0;    // step() calls refused at the queue bound.
  std::uint64_t requests = 0;   // Steps that went on with another EAP-Request.
  std::uint64_t successes = 0;  // Steps that ended in EAP-Success (a handshake and method succeeded).
  std::uint64_t failures = 0;   // Steps that ended in EAP-Failure.
  std::uint64_t discards = 0;   // Steps whose response was discarded (a wrong Identifier).
};

class EapPool final : public gateway::EapStepper, public gateway::InnerUserWait {
 public:
  // Where stepped jobs go: the UDP server's post_answers, by ticket_worker.
  // Called on the pool's threads.
  using AnswerSink = std::function<void(const gateway::Answer& answer)>;

  EapPool(EapPoolOptions options, AnswerSink sink);
  ~EapPool() override;
  EapPool(const EapPool&) = delete;
  EapPool& operator=(const EapPool&) = delete;

  [[nodiscard]] bool step(std::shared_ptr<gateway::EapStepJob> job, gateway::Ticket ticket) override;
  [[nodiscard]] EapPoolStats stats() const;
  // Asks `store` to fetch the user (its answer goes to no worker) and polls
  // its memory until sql_wait passed. On the pool's threads only.
  [[nodiscard]] bool wait_for(gateway::UserStore& store, std::string_view user_name) override;

 private:
  struct Queued {
    std::shared_ptr<gateway::EapStepJob> job;
    gateway::Ticket ticket = 0;
  };
  void run(std::stop_token stop);

  const EapPoolOptions options_;
  const AnswerSink sink_;
  mutable std::mutex mutex_;
  std::condition_variable_any queued_;
  std::deque<Queued> queue_;  // Guarded by mutex_.
  EapPoolStats stats_;        // Guarded by mutex_ (but `queued`, which is queue_.size()).
  std::vector<std::jthread> threads_;
};

}  // namespace rw::gateway_shell
