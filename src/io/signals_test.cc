// Tests of synchronous signal handling: a blocked signal stays pending and
// wait_for_signal() / wait_for_stop_signal() take it.
#include "io/signals.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

namespace rw::io {
namespace {

TEST(WaitForStopSignal, ReturnsPendingTermination) {
  ASSERT_TRUE(block_process_signals().has_value());
  ASSERT_EQ(pthread_kill(pthread_self(), SIGTERM), 0);
  EXPECT_EQ(wait_for_stop_signal(), "SIGTERM");
}

TEST(WaitForStopSignal, ContinuesAfterHangupUntilInterrupt) {
  ASSERT_TRUE(block_process_signals().has_value());
  ASSERT_EQ(pthread_kill(pthread_self(), SIGHUP), 0);
  ASSERT_EQ(pthread_kill(pthread_self(), SIGINT), 0);
  EXPECT_EQ(wait_for_stop_signal(), "SIGINT");
}

TEST(WaitForSignal, HangupIsAReloadRequest) {
  ASSERT_TRUE(block_process_signals().has_value());
  ASSERT_EQ(pthread_kill(pthread_self(), SIGHUP), 0);
  std::optional<SignalEvent> event = wait_for_signal(Duration::seconds(5));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->request, SignalRequest::kReload);
  EXPECT_EQ(event->name, "SIGHUP");
}

TEST(WaitForSignal, NothingPendingTimesOut) {
  ASSERT_TRUE(block_process_signals().has_value());
  EXPECT_FALSE(wait_for_signal(Duration::milliseconds(10)).has_value());
}

}  // namespace
}  // namespace rw::io
