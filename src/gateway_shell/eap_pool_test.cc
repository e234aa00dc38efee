// The EAP pool's bounds: with its one thread busy, steps wait in the queue
// up to queue_max and the next is refused (counted); every queued step is
// run and posted back, each with the conversation it holds, and counted by
// outcome.
#include "gateway_shell/eap_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "base/random.h"
#include "config/clients_file.h"
#include "config/users_file.h"

namespace rw::gateway_shell {
namespace {

std::shared_ptr<const gateway::GatewayState> a_state() {
  auto dictionary = radius::Dictionary::builtin();
  auto users = config::UsersFile::parse("alice Cleartext-Password := \"a\"\n", "users", dictionary,
                                        gateway::gateway_users_limits());
  EXPECT_TRUE(users);
  auto clients = config::parse_clients("client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n",
                                       "clients");
  EXPECT_TRUE(clients);
  auto state = gateway::GatewayState::build({dictionary, clients->clients, std::move(*users), {}});
  EXPECT_TRUE(state);
  return *state;
}

// A job whose step is cheap and known: a new conversation given alice's
// EAP-Response/Identity with nothing offered ends in EAP-Failure.
std::shared_ptr<gateway::EapStepJob> a_job(const std::shared_ptr<const gateway::GatewayState>& state,
                                           RandomSource& random) {
  auto job = std::make_shared<gateway::EapStepJob>();
  job->held.conversation = std::make_unique<eap::Conversation>(eap::ConversationOptions{}, "localhost");
  job->response = {2, 7, 0, 10, 1, 'a', 'l', 'i', 'c', 'e'};
  job->response_identifier = 7;
  job->state = state;
  job->client = &state->clients().front();
  job->random = &random;
  return job;
}

// Holds the pool's thread inside the sink until opened.
class Gate {
 public:
  void wait_open() {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
  }
  void wait_for_waiter() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ > 0; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool open_ = false;
};

TEST(EapPool, RefusesAtTheQueueBoundAndAnswersEveryQueuedStep) {
  const auto state = a_state();
  SeededRandom random(1);
  Gate gate;
  std::mutex mutex;
  std::condition_variable answered_cv;
  std::vector<gateway::Answer> answered;
  {
    EapPool pool(EapPoolOptions{.threads = 1, .queue_max = 2}, [&](const gateway::Answer& answer) {
      gate.wait_open();
      std::lock_guard lock(mutex);
      answered.push_back(answer);
      answered_cv.notify_all();
    });
    ASSERT_TRUE(pool.step(a_job(state, random), 1));
    gate.wait_for_waiter();  // The thread holds step 1: the queue is empty.
    EXPECT_EQ(pool.stats().queued, 0U);
    EXPECT_TRUE(pool.step(a_job(state, random), 2));
    EXPECT_TRUE(pool.step(a_job(state, random), 3));
    EXPECT_EQ(pool.stats().queued, 2U);
    // At the bound: refused, counted, and the job (with its conversation) is the caller's again.
    auto refused = a_job(state, random);
    EXPECT_FALSE(pool.step(refused, 4));
    EXPECT_NE(refused->held.conversation, nullptr);
    EXPECT_FALSE(refused->stepped);
    EXPECT_EQ(pool.stats().refused, 1U);
    gate.open();
    std::unique_lock lock(mutex);
    ASSERT_TRUE(answered_cv.wait_for(lock, std::chrono::seconds(30), [&] { return answered.size() == 3; }));
  }
  std::vector<gateway::Ticket> tickets;
  for (const gateway::Answer& answer : answered) {
    EXPECT_EQ(answer.kind, gateway::AnswerKind::kEapStep);
    ASSERT_NE(answer.eap_step, nullptr);
    EXPECT_TRUE(answer.eap_step->stepped);
    EXPECT_EQ(answer.eap_step->step.kind, eap::Step::Kind::kFailure);
    // The conversation comes back with the step, for the worker to end or put back.
    EXPECT_NE(answer.eap_step->held.conversation, nullptr);
    tickets.push_back(answer.ticket);
  }
  EXPECT_EQ(tickets, (std::vector<gateway::Ticket>{1, 2, 3}));  // One thread: in order.
}

TEST(EapPool, CountsStepsByOutcome) {
  const auto state = a_state();
  SeededRandom random(2);
  std::mutex mutex;
  std::condition_variable answered_cv;
  std::size_t answered = 0;
  EapPool pool(EapPoolOptions{.threads = 2, .queue_max = 16}, [&](const gateway::Answer&) {
    std::lock_guard lock(mutex);
    ++answered;
    answered_cv.notify_all();
  });
  for (gateway::Ticket ticket = 1; ticket <= 5; ++ticket)
    ASSERT_TRUE(pool.step(a_job(state, random), ticket));
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(answered_cv.wait_for(lock, std::chrono::seconds(30), [&] { return answered == 5; }));
  }
  // The figures are counted after the answer is posted: wait for them.
  for (int i = 0; i < 3000 && pool.stats().failures < 5; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const EapPoolStats stats = pool.stats();
  EXPECT_EQ(stats.failures, 5U);
  EXPECT_EQ(stats.successes, 0U);
  EXPECT_EQ(stats.refused, 0U);
  EXPECT_EQ(stats.queued, 0U);
}

// A store that holds a user once asked to fetch it (or never).
class FetchingStore final : public gateway::UserStore {
 public:
  Lookup find(std::string_view) override {
    if (!filled) return {};
    return {Status::kFound, std::make_shared<const auth::SqlUser>()};
  }
  bool fetch(std::string_view name, gateway::Ticket ticket) override {
    fetched.emplace_back(std::string(name), ticket);
    if (fills) filled = true;
    return accepts;
  }
  bool fills = true;
  bool accepts = true;
  bool filled = false;
  std::vector<std::pair<std::string, gateway::Ticket>> fetched;
};

// An inner SQL user the store does not hold: fetched with a ticket no
// worker answers to, and waited for up to sql_wait; not at all when the
// store cannot fetch.
TEST(EapPool, WaitsForAnInnerSqlUserUpToItsBound) {
  EapPool pool(EapPoolOptions{.threads = 1, .queue_max = 1, .sql_wait = Duration::milliseconds(30)},
               [](const gateway::Answer&) {});
  FetchingStore store;
  EXPECT_TRUE(pool.wait_for(store, "dora"));
  ASSERT_EQ(store.fetched.size(), 1u);
  EXPECT_EQ(store.fetched[0].first, "dora");
  EXPECT_EQ(gateway::ticket_worker(store.fetched[0].second), 0xFFFF);
  FetchingStore slow;
  slow.fills = false;
  EXPECT_FALSE(pool.wait_for(slow, "dora"));
  FetchingStore full;
  full.accepts = false;
  full.fills = false;
  EXPECT_FALSE(pool.wait_for(full, "dora"));
  EXPECT_EQ(full.fetched.size(), 1u);
}

}  // namespace
}  // namespace rw::gateway_shell
