// Creating the data folder: nested, idempotent, and errors that say where.
#include "consensus/data_folder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rw::consensus {
namespace {

class DataFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("rw_data_folder_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

TEST_F(DataFolderTest, CreatesEveryMissingLevel) {
  const auto folder = root_ / "a" / "b" / "member-1";
  ASSERT_TRUE(create_data_folder(folder.string()));
  EXPECT_TRUE(std::filesystem::is_directory(folder));
}

TEST_F(DataFolderTest, AnExistingFolderAndItsFilesAreLeftAlone) {
  const auto folder = root_ / "member-1";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "metadata1") << "x";
  ASSERT_TRUE(create_data_folder(folder.string() + "/"));
  EXPECT_TRUE(std::filesystem::exists(folder / "metadata1"));
}

TEST_F(DataFolderTest, ARelativeFolderIsCreatedUnderTheWorkingFolder) {
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(root_);
  const auto created = create_data_folder("data/member-2");
  std::filesystem::current_path(previous);
  ASSERT_TRUE(created) << created.error();
  EXPECT_TRUE(std::filesystem::is_directory(root_ / "data" / "member-2"));
}

TEST_F(DataFolderTest, AFileInTheWaySaysWhichCallAndPath) {
  std::ofstream(root_ / "file") << "x";
  const auto created = create_data_folder((root_ / "file" / "member-1").string());
  ASSERT_FALSE(created);
  EXPECT_NE(created.error().find("mkdir"), std::string::npos) << created.error();
  EXPECT_NE(created.error().find((root_ / "file" / "member-1").string()), std::string::npos)
      << created.error();
}

}  // namespace
}  // namespace rw::consensus
