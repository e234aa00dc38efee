#include "admin/explain_view.h"

#include <gtest/gtest.h>

namespace rw::admin {
namespace {

TEST(ExplainView, ABlockPerTraceWithTheOutcomeLast) {
  const auto view = view_trace(
      R"({"sequence": 12, "selector": 1, "unix_ms": 1764640000000, "from": "127.0.0.1:4000", "client": "edge",)"
      R"( "request": "Access-Request id 7", "user": "alice", "steps": ["client: edge", "method: PAP"],)"
      R"( "outcome": "Access-Accept"})");
  ASSERT_TRUE(view.has_value()) << view.error();
  EXPECT_EQ(view->sequence, 12u);
  EXPECT_EQ(view->text,
            "2025-12-02 01:46:40 #12 Access-Request id 7 from 127.0.0.1:4000 client edge user \"alice\"\n"
            "    client: edge\n"
            "    method: PAP\n"
            "  => Access-Accept\n");
}

TEST(ExplainView, TerminalControlBytesAreNotPrinted) {
  const auto view = view_trace(R"({"sequence": 1, "steps": ["\u001b[2J"], "outcome": "x\u001b"})");
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->text.find('\x1b'), std::string::npos);
}

TEST(ExplainView, RefusesWhatIsNotATrace) {
  EXPECT_FALSE(view_trace("[]").has_value());
  EXPECT_FALSE(view_trace(R"({"steps": []})").has_value());
  EXPECT_FALSE(view_trace(R"({"sequence": 1})").has_value());
  EXPECT_FALSE(view_trace("not json").has_value());
}

}  // namespace
}  // namespace rw::admin
