// The EAP pool; see eap_pool.h.
#include "gateway_shell/eap_pool.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>

namespace rw::gateway_shell {
namespace {

// A ticket no worker answers to: worker 65535 does not exist (the UDP
// server ignores it, the RadSec thread's index is small). The SQL store
// fills its memory with the user all the same, which is what wait_for needs.
constexpr gateway::Ticket kNobodysTicket = gateway::make_ticket(0xFFFF, 0, 0);

}  // namespace

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

bool EapPool::wait_for(gateway::UserStore& store, std::string_view user_name) {
  if (!store.fetch(user_name, kNobodysTicket)) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(options_.sql_wait.ns);
  for (;;) {
    if (store.find(user_name).status == gateway::UserStore::Status::kFound) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
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
    next.job->wait = this;
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
