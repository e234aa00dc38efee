// Publication of reloaded gateway states.
#include "gateway_shell/published_state.h"

#include <algorithm>
#include <iterator>

#include "io/heap.h"

namespace rw::gateway_shell {

void PublishedState::publish(std::shared_ptr<const gateway::GatewayState> state) {
  const std::lock_guard lock(mutex_);
  retired_.push_back(std::move(current_));
  current_ = std::move(state);
  // Under the lock: a worker that sees the new generation reads the new state.
  generation_.fetch_add(1, std::memory_order_release);
}

std::size_t PublishedState::collect() {
  std::vector<std::shared_ptr<const gateway::GatewayState>> unused;
  std::size_t held = 0;
  {
    const std::lock_guard lock(mutex_);
    // Only the retired list hands out no copies: a count of 1 cannot grow again.
    const auto still_held = std::partition(retired_.begin(), retired_.end(),
                                           [](const auto& state) { return state.use_count() > 1; });
    std::move(still_held, retired_.end(), std::back_inserter(unused));
    retired_.erase(still_held, retired_.end());
    held = retired_.size();
  }
  // Freed here, outside the lock, so that workers never wait for it, and
  // handed back to the system: glibc's allocator would otherwise keep the
  // pages of a large users file, and a gateway grew by the whole size of its
  // files at each reload (docs/operations.md "Reload").
  if (!unused.empty()) {
    unused.clear();
    (void)io::release_free_heap();
  }
  return held;
}

std::pair<std::uint64_t, std::shared_ptr<const gateway::GatewayState>> PublishedState::current() const {
  const std::lock_guard lock(mutex_);
  return {generation_.load(std::memory_order_relaxed), current_};
}

}  // namespace rw::gateway_shell
