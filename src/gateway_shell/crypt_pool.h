// The crypt(3) pool: threads that check User-Passwords against crypt(3)
// strings ($1$, $5$, $6$, $2b$, $y$, ...) away from the UDP workers, since
// bcrypt and yescrypt cost milliseconds each by design and a burst of
// guesses must not stall cleartext, NT-hash, MAB or accounting requests.
// Each thread checks with crypt_rn and its own scratch area (auth::verify_pap);
// the queue is bounded (docs/limits.md): at the bound verify() refuses and
// the worker drops the request (crypt_queue_full), the NAS retries.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "gateway/user_store.h"

namespace rw::gateway_shell {

struct CryptPoolOptions {
  std::size_t threads = 2;      // Checking threads.
  std::size_t queue_max = 256;  // Checks waiting for a thread, all workers together.
};

struct CryptPoolStats {
  std::uint64_t checked = 0;
  std::uint64_t refused = 0;  // verify() calls refused at the queue bound.
};

class CryptPool final : public gateway::CryptVerifier {
 public:
  // Where verdicts go: the UDP server's post_answers, by ticket_worker.
  // Called on the pool's threads.
  using AnswerSink = std::function<void(const gateway::Answer& answer)>;

  CryptPool(CryptPoolOptions options, AnswerSink sink);
  ~CryptPool() override;
  CryptPool(const CryptPool&) = delete;
  CryptPool& operator=(const CryptPool&) = delete;

  [[nodiscard]] bool verify(std::string_view crypt_setting, std::string_view password,
                            gateway::Ticket ticket) override;
  [[nodiscard]] CryptPoolStats stats() const;

 private:
  // Fixed-size copies, so that queueing allocates nothing after the deque's
  // blocks are warm; the password is wiped once checked.
  struct Job {
    gateway::Ticket ticket = 0;
    std::array<char, 512> setting{};
    std::size_t setting_length = 0;
    std::array<char, 256> password{};
    std::size_t password_length = 0;
  };
  void run(std::stop_token stop);

  const CryptPoolOptions options_;
  const AnswerSink sink_;
  mutable std::mutex mutex_;
  std::condition_variable_any queued_;
  std::deque<Job> queue_;  // Guarded by mutex_.
  CryptPoolStats stats_;   // Guarded by mutex_.
  std::vector<std::jthread> threads_;
};

}  // namespace rw::gateway_shell
