// The gateway state the workers answer with, switched by a reload
// (docs/operations.md "Reload"): the reloader publishes a new GatewayState
// and each worker's handler takes it up before its next datagram, answer or
// tick, so every request is decided whole by one state. While nothing
// changes a worker pays one atomic load per call. What a worker holds across
// the switch stays: its duplicate cache, and its parked requests, which keep
// the state they started with. Retired states are freed by the publisher's
// thread (collect()), never by a worker in the middle of its batch.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "gateway/datagram.h"
#include "gateway/gateway_state.h"
#include "gateway/request_handler.h"

namespace rw::gateway_shell {

// Thread-safe.
class PublishedState {
 public:
  explicit PublishedState(std::shared_ptr<const gateway::GatewayState> initial)
      : current_(std::move(initial)) {}

  // Makes `state` current under the next generation; the previous state is
  // retired until no worker or parked request holds it.
  void publish(std::shared_ptr<const gateway::GatewayState> state);

  // Frees the retired states nobody holds any more; returns how many are
  // still held. Call it from the publishing thread (a state's destructor
  // may take a while for a large users file).
  std::size_t collect();

  // Starts at 0 and grows by one per publish().
  [[nodiscard]] std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // The current state and its generation, read together.
  [[nodiscard]] std::pair<std::uint64_t, std::shared_ptr<const gateway::GatewayState>> current() const;

 private:
  std::atomic<std::uint64_t> generation_{0};
  mutable std::mutex mutex_;
  std::shared_ptr<const gateway::GatewayState> current_;               // Guarded by mutex_.
  std::vector<std::shared_ptr<const gateway::GatewayState>> retired_;  // Guarded by mutex_.
};

// One worker's RequestHandler, switched to the published state between two
// calls.
class ReloadingHandler final : public gateway::DatagramHandler {
 public:
  // Requires: `published` outlives the handler.
  ReloadingHandler(std::unique_ptr<gateway::RequestHandler> handler, const PublishedState& published)
      : handler_(std::move(handler)), published_(published) {}

  std::size_t on_datagram(Instant now, const gateway::Arrival& arrival, const gateway::Endpoint& from,
                          Bytes datagram, MutableBytes reply) override {
    refresh();
    return handler_->on_datagram(now, arrival, from, datagram, reply);
  }
  void on_tick(Instant now) override {
    refresh();
    handler_->on_tick(now);
  }
  std::optional<gateway::DeferredReply> on_answer(Instant now, const gateway::Answer& answer,
                                                  MutableBytes reply) override {
    refresh();
    return handler_->on_answer(now, answer, reply);
  }
  std::optional<gateway::DeferredReply> next_timed_reply(Instant now, MutableBytes reply) override {
    return handler_->next_timed_reply(now, reply);
  }

  [[nodiscard]] const gateway::RequestHandler& handler() const { return *handler_; }
  // The generation of the state the handler decides with now.
  [[nodiscard]] std::uint64_t generation() const { return seen_; }

 private:
  void refresh() {
    if (published_.generation() == seen_) return;
    auto [latest, state] = published_.current();
    handler_->set_state(std::move(state));
    seen_ = latest;
  }

  std::unique_ptr<gateway::RequestHandler> handler_;
  const PublishedState& published_;
  // The factory made the handler with the start state, generation 0.
  std::uint64_t seen_ = 0;
};

// Wraps each handler `factory` makes in a ReloadingHandler. Both arguments
// must outlive the handlers.
class ReloadingHandlerFactory final : public gateway::DatagramHandlerFactory {
 public:
  ReloadingHandlerFactory(gateway::RequestHandlerFactory& factory, const PublishedState& published)
      : factory_(factory), published_(published) {}

  [[nodiscard]] std::unique_ptr<gateway::DatagramHandler> make_handler(int worker_index) override {
    return std::make_unique<ReloadingHandler>(factory_.make_request_handler(worker_index), published_);
  }

 private:
  gateway::RequestHandlerFactory& factory_;
  const PublishedState& published_;
};

}  // namespace rw::gateway_shell
