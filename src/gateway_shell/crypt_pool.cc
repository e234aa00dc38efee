// The crypt(3) pool; see crypt_pool.h.
#include "gateway_shell/crypt_pool.h"

#include <pthread.h>

#include <algorithm>
#include <string>

#include "auth/password.h"

namespace rw::gateway_shell {

CryptPool::CryptPool(CryptPoolOptions options, AnswerSink sink) : options_(options), sink_(std::move(sink)) {
  for (std::size_t i = 0; i < std::max<std::size_t>(options_.threads, 1); ++i) {
    threads_.emplace_back([this](std::stop_token stop) { run(stop); });
  }
}

CryptPool::~CryptPool() {
  for (std::jthread& thread : threads_) thread.request_stop();
  queued_.notify_all();
  threads_.clear();  // Joins.
}

bool CryptPool::verify(std::string_view crypt_setting, std::string_view password, gateway::Ticket ticket) {
  Job job{.ticket = ticket};
  if (crypt_setting.size() > job.setting.size() || password.size() > job.password.size()) {
    // Longer than crypt(3) or RFC 2865 §5.2 allow: a verdict without a check.
    sink_(gateway::Answer{.ticket = ticket,
                          .kind = gateway::AnswerKind::kCryptVerdict,
                          .crypt_error = auth::AuthError::kPasswordTooLong});
    return true;
  }
  std::copy(crypt_setting.begin(), crypt_setting.end(), job.setting.begin());
  job.setting_length = crypt_setting.size();
  std::copy(password.begin(), password.end(), job.password.begin());
  job.password_length = password.size();
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= options_.queue_max) {
      ++stats_.refused;
      std::fill(job.password.begin(), job.password.end(), '\0');
      return false;
    }
    queue_.push_back(job);
  }
  std::fill(job.password.begin(), job.password.end(), '\0');
  queued_.notify_one();
  return true;
}

CryptPoolStats CryptPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CryptPool::run(std::stop_token stop) {
  pthread_setname_np(pthread_self(), "rw-crypt");
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    if (!queued_.wait(lock, stop, [&] { return !queue_.empty(); })) break;
    Job job = queue_.front();
    std::fill(queue_.front().password.begin(), queue_.front().password.end(), '\0');
    queue_.pop_front();
    lock.unlock();
    const auth::Credential credential =
        auth::Credential::crypt(std::string_view(job.setting.data(), job.setting_length));
    const auto verified =
        auth::verify_pap(credential, std::string_view(job.password.data(), job.password_length));
    std::fill(job.password.begin(), job.password.end(), '\0');
    gateway::Answer answer{.ticket = job.ticket, .kind = gateway::AnswerKind::kCryptVerdict};
    answer.crypt_matched = verified.has_value();
    if (!verified) answer.crypt_error = verified.error();
    sink_(answer);
    lock.lock();
    ++stats_.checked;
  }
}

}  // namespace rw::gateway_shell
