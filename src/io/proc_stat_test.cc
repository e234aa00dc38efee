// parse_proc_stat on lines as the kernel writes them, and read_proc_stat on
// this process.
#include "io/proc_stat.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace rw::io {
namespace {

TEST(ProcStat, ReadsTheParentAndTheCpuTicksAfterTheCommand) {
  // A command holding spaces and a ')' must not shift the fields.
  const auto stat = parse_proc_stat(
      "4242 (rw (x) y) S 17 4242 4242 0 -1 4194560 2817 0 0 0 250 31 0 0 20 0 5 0 8812 1 2 3");
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->parent_pid, 17);
  EXPECT_EQ(stat->cpu_ticks, 281u);
}

TEST(ProcStat, RefusesACutOrMalformedLine) {
  EXPECT_FALSE(parse_proc_stat("").has_value());
  EXPECT_FALSE(parse_proc_stat("4242 (postgres) S 17 4242").has_value());
  EXPECT_FALSE(parse_proc_stat("4242 (postgres) S 17 4242 4242 0 -1 4194560 2817 0 0 0 2x0 31").has_value());
}

TEST(ProcStat, ReadsThisProcess) {
  const auto stat = read_proc_stat(static_cast<int>(::getpid()));
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->parent_pid, static_cast<int>(::getppid()));
  EXPECT_FALSE(read_proc_stat(-1).has_value());
}

}  // namespace
}  // namespace rw::io
