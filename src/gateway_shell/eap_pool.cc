// The EAP pool; see eap_pool.h.
#include "gateway_shell/eap_pool.h"

#include <pthread.h>

#include <algorithm>

namespace rw::gateway_shell {

EapPool::EapPool(EapPoolOptions options, AnswerSink sink) : options_(options), sink_(std::move(sink)) {
  for (std::size_t i = 0; i < std::max<std::size_t>(options_.threads, 1); ++i) {
    threads_.emplace_back([this](std::stop_token stop) { run(stop); });
  }
}

EapPool::~EapPool() {
  for (std::jthread& thread : threads_) thread.request_stop();
  queued_.notify_all();
  threads_.clear();  // Joins; jobs still queued end with their conversations.
}

bool EapPool::step(std::shared_ptr<gateway::EapStepJob> job, gateway::Ticket ticket) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= options_.queue_max) {
      ++stats_.refused;
      return false;
    }
    queue_.push_back(Queued{.job = std::move(job), .ticket = ticket});
  }
  queued_.notify_one();
  return true;
}

EapPoolStats EapPool::stats() const {
  std::lock_guard lock(mutex_);
  EapPoolStats stats = stats_;
  stats.queued = queue_.size();
  return stats;
}

void EapPool::run(std::stop_token stop) {
  pthread_setname_np(pthread_self(), "rw-eap");
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    if (!queued_.wait(lock, stop, [&] { return !queue_.empty(); })) break;
    Queued next = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    next.job->run();
    const eap::Step::Kind kind = next.job->step.kind;
    sink_(
        gateway::Answer{.ticket = next.ticket, .kind = gateway::AnswerKind::kEapStep, .eap_step = next.job});
    next.job.reset();
    lock.lock();
    switch (kind) {
      case eap::Step::Kind::kRequest:
      case eap::Step::Kind::kCredential:
        ++stats_.requests;
        break;
      case eap::Step::Kind::kSuccess:
        ++stats_.successes;
        break;
      case eap::Step::Kind::kFailure:
        ++stats_.failures;
        break;
      case eap::Step::Kind::kDiscard:
        ++stats_.discards;
        break;
    }
  }
}

}  // namespace rw::gateway_shell
