// The one race the tsan preset suppresses (tests/support/tsan.supp), replayed
// step by step with libuv alone: libraft 0.15.0's UvWriterClose closes the
// eventfd it polls and only then calls uv_poll_stop, whose
// epoll_ctl(EPOLL_CTL_DEL) names the closed number. A libuv worker that opens
// a file in between gets that number, and ThreadSanitizer reports the
// epoll_ctl against the worker's open (docs/consensus.md "Known library
// problems seen in tests", item 4, says why it is harmless). Under
// ThreadSanitizer this test fails without the suppression: the report makes
// the process exit 66.

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <uv.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace rw::consensus {
namespace {

// Relaxed, so that ThreadSanitizer sees no ordering between the two threads:
// the order is the one libraft's loop thread and a worker can fall into.
void wait_for(const std::atomic<int>& step, int value) {
  while (step.load(std::memory_order_relaxed) != value) std::this_thread::yield();
}

TEST(LibraftWriterClose, AReusedEventFdNumberIsTheOneSuppressedRace) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  const int event_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ASSERT_GE(event_fd, 0);
  uv_poll_t poller;
  ASSERT_EQ(uv_poll_init(&loop, &poller, event_fd), 0);
  ASSERT_EQ(uv_poll_start(&poller, UV_READABLE, [](uv_poll_t*, int, int) {}), 0);
  ASSERT_EQ(uv_run(&loop, UV_RUN_NOWAIT), 1);  // The eventfd joins the loop's epoll set.

  std::atomic<int> step{0};
  std::atomic<int> reopened{-1};
  std::thread worker([&] {
    wait_for(step, 1);
    reopened.store(::open("/dev/null", O_RDONLY | O_CLOEXEC), std::memory_order_relaxed);
    step.store(2, std::memory_order_relaxed);
  });

  // UvWriterClose's order: close the eventfd, then stop polling it.
  EXPECT_EQ(::close(event_fd), 0);  // Not ASSERT: returning now would leave the worker joinable.
  step.store(1, std::memory_order_relaxed);
  wait_for(step, 2);
  EXPECT_EQ(uv_poll_stop(&poller), 0);  // epoll_ctl(DEL) of a number the worker owns now.
  uv_close(reinterpret_cast<uv_handle_t*>(&poller), nullptr);
  worker.join();

  // The lowest free number is reused: the worker's file got the eventfd's.
  EXPECT_EQ(reopened.load(), event_fd);
  // The DEL touched neither: the closed eventfd had left the epoll set, and
  // the worker's file was never in it, so it is still open and readable.
  char byte = 0;
  EXPECT_EQ(::read(reopened.load(), &byte, 1), 0);
  EXPECT_EQ(::close(reopened.load()), 0);

  EXPECT_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
}  // namespace rw::consensus
