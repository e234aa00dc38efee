// AnswerMailbox: a mutex-guarded vector and an eventfd (answer_mailbox.h).
#include "gateway_shell/answer_mailbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace rw::gateway_shell {

Result<std::unique_ptr<AnswerMailbox>, io::SystemError> AnswerMailbox::create(std::size_t capacity) {
  std::unique_ptr<AnswerMailbox> mailbox(new AnswerMailbox());
  mailbox->event_ = io::FileDescriptor(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!mailbox->event_.valid()) return fail(io::last_system_error("eventfd"));
  mailbox->posted_.reserve(capacity);
  mailbox->taken_.reserve(capacity);
  return mailbox;
}

void AnswerMailbox::post(std::span<const gateway::Answer> answers) {
  if (answers.empty()) return;
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    wake = posted_.empty();
    posted_.insert(posted_.end(), answers.begin(), answers.end());
  }
  if (!wake) return;
  const std::uint64_t one = 1;
  // A full eventfd counter (never in practice) still leaves it readable.
  (void)!write(event_.get(), &one, sizeof one);
}

std::vector<gateway::Answer>& AnswerMailbox::swap_in() {
  std::uint64_t value = 0;
  (void)!read(event_.get(), &value, sizeof value);
  std::lock_guard lock(mutex_);
  taken_.swap(posted_);
  return taken_;
}

}  // namespace rw::gateway_shell
