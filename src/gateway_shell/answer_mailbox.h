// Answers (gateway::Answer: a commit, an SQL user, a crypt(3) verdict, a
// session count) posted by other threads to the one thread that owns a
// request handler, which an eventfd in its epoll set wakes: each UDP worker
// and the RadSec listener have one. Once the reserved capacity holds, neither
// side allocates: the owner swaps two vectors.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "base/result.h"
#include "gateway/datagram.h"
#include "io/file_descriptor.h"
#include "io/system_error.h"

namespace rw::gateway_shell {

class AnswerMailbox {
 public:
  // `capacity`: the answers expected between two takes (reserved twice).
  [[nodiscard]] static Result<std::unique_ptr<AnswerMailbox>, io::SystemError> create(std::size_t capacity);

  // The eventfd to watch for EPOLLIN: readable once answers wait.
  [[nodiscard]] int fd() const { return event_.get(); }
  // Any thread. Wakes the owner only when the mailbox was empty.
  void post(std::span<const gateway::Answer> answers);
  // The owner's thread: calls `on_answer` with each answer posted since the
  // last take, in the order posted, then lets them go (an answer may hold an
  // SQL user).
  template <class OnAnswer>
  void take(OnAnswer&& on_answer) {
    for (const gateway::Answer& answer : swap_in()) on_answer(answer);
    taken_.clear();
  }

 private:
  AnswerMailbox() = default;
  // Empties the eventfd and swaps the posted answers in.
  std::vector<gateway::Answer>& swap_in();

  io::FileDescriptor event_;
  std::mutex mutex_;
  std::vector<gateway::Answer> posted_;  // Guarded by mutex_.
  std::vector<gateway::Answer> taken_;   // The owner's side of the swap.
};

}  // namespace rw::gateway_shell
