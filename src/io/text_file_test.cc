// Whole-file reads and atomic replacement.
#include "io/text_file.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

namespace rw::io {
namespace {

TEST(TextFile, ReplaceThenReadGivesTheTextAndLeavesNoTemporary) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "rw_text_file_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "a.yaml").string();
  ASSERT_TRUE(replace_text_file(path, "first\n"));
  ASSERT_TRUE(replace_text_file(path, "second\n"));
  auto text = read_text_file(path);
  ASSERT_TRUE(text) << text.error().to_string();
  EXPECT_EQ(*text, "second\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
}

TEST(TextFile, MissingFileSaysWhichAndWhy) {
  auto text = read_text_file("/nonexistent/rw/a.yaml");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().error_number, ENOENT);
  EXPECT_NE(text.error().call.find("/nonexistent/rw/a.yaml"), std::string::npos);
}

}  // namespace
}  // namespace rw::io
