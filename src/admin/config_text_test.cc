// `ctl config`'s text: the files table and the nested key list, control
// bytes made printable, and the errors on answers that are not /config's.
#include "admin/config_text.h"

#include <gtest/gtest.h>

namespace rw::admin {
namespace {

TEST(RenderConfig, FilesTableThenKeys) {
  const std::string body =
      R"({"role":"gateway","config":{"auth_port":1812,"listen":["127.0.0.1","::1"],)"
      R"("logging":{"level":"info"},"sql_users":null,"clients":[{"name":"nas1","secret":"<redacted>"}]},)"
      R"("files":[{"path":"/etc/rw/gateway.yaml","what":"config file","sha256":"ab12","size":321,)"
      R"("loaded":"2026-12-02T03:04:05.678Z"}]})";
  auto text = render_config(body);
  ASSERT_TRUE(text.has_value()) << text.error();
  EXPECT_NE(text->find("role  gateway\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("PATH"), std::string::npos);
  EXPECT_NE(text->find("/etc/rw/gateway.yaml"), std::string::npos);
  EXPECT_NE(text->find("2026-12-02T03:04:05.678Z"), std::string::npos);
  EXPECT_NE(text->find("127.0.0.1, ::1"), std::string::npos);
  EXPECT_NE(text->find("<redacted>"), std::string::npos);
  EXPECT_LT(text->find("auth_port"), text->find("logging"));  // The answer's key order.
  EXPECT_NE(text->find("sql_users"), std::string::npos);
}

TEST(RenderConfig, ControlBytesArePrintable) {
  auto text = render_config(R"({"role":"member","config":{"data_dir":"a\u001b[2Jb"},"files":[]})");
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->find('\x1b'), std::string::npos);
  EXPECT_NE(text->find("a?[2Jb"), std::string::npos);
}

TEST(RenderConfig, RefusesOtherAnswers) {
  EXPECT_FALSE(render_config("not json").has_value());
  EXPECT_FALSE(render_config(R"({"config":{}})").has_value());
  EXPECT_FALSE(render_config(R"({"config":[],"files":[]})").has_value());
  EXPECT_FALSE(render_config(R"({"config":{},"files":[1]})").has_value());
}

}  // namespace
}  // namespace rw::admin
