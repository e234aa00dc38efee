// link_warning: the gateway's log line while it cannot reach the leader.

#include "submission/link_warning.h"

#include <gtest/gtest.h>

namespace rw::submission {
namespace {

TEST(LinkWarning, SilentWithoutNewTimeouts) {
  ForwarderStatus now;
  now.counters.submit_timeouts = 2;
  now.counters.connect_timeouts = 5;
  now.pending_records = 100;
  EXPECT_FALSE(link_warning(now.counters, now).has_value());
}

TEST(LinkWarning, NamesTheTimeoutsSinceTheLastWarningTheAddressAndThePendingRecords) {
  ForwarderCounters last;
  last.submit_timeouts = 1;
  last.connect_timeouts = 2;
  ForwarderStatus now;
  now.counters = last;
  now.counters.connect_timeouts = 5;
  now.pending_records = 2481;
  now.address = "10.0.0.1:1813";
  const std::optional<std::string> text = link_warning(last, now);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("0 submit and 3 connect timeout(s)"), std::string::npos) << *text;
  EXPECT_NE(text->find("2481 record(s)"), std::string::npos) << *text;
  EXPECT_NE(text->find("10.0.0.1:1813"), std::string::npos) << *text;
}

TEST(LinkWarning, SilentOnceTheLinkIsReadyAgain) {
  ForwarderStatus now;
  now.counters.connect_timeouts = 3;
  now.state = LinkState::kReady;
  EXPECT_FALSE(link_warning(ForwarderCounters{}, now).has_value());
  now.state = LinkState::kWaiting;
  EXPECT_TRUE(link_warning(ForwarderCounters{}, now).has_value());
}

TEST(LinkWarning, NamesCommitTimeoutsEvenOnceReadyAgain) {
  ForwarderCounters last;
  last.commit_timeouts = 1;
  ForwarderStatus now;
  now.counters = last;
  EXPECT_FALSE(link_warning(last, now).has_value());
  now.counters.commit_timeouts = 3;
  now.state = LinkState::kReady;
  now.pending_records = 512;
  now.address = "10.0.0.2:1813";
  const std::optional<std::string> text = link_warning(last, now);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("2 Submit(s) unanswered for the commit timeout"), std::string::npos) << *text;
  EXPECT_NE(text->find("512 record(s)"), std::string::npos) << *text;
  EXPECT_NE(text->find("10.0.0.2:1813 (ready)"), std::string::npos) << *text;
}

}  // namespace
}  // namespace rw::submission
