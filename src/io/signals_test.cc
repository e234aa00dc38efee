// Tests of synchronous signal handling: a blocked signal stays pending and
// wait_for_stop_signal() takes it.
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

}  // namespace
}  // namespace rw::io
