// digest_files: SHA-256, size and load time of each file, and a file that
// cannot be read kept with its reason; ConfigInForce hands out the body
// replaced last.
#include "io/config_in_force.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rw::io {
namespace {

TEST(DigestFiles, Sha256SizeAndLoadTime) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "digest_files";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "abc").string();
  std::ofstream(path) << "abc";
  const auto files =
      digest_files({config::LoadedFile{.path = path, .what = "users file"},
                    config::LoadedFile{.path = (dir / "none").string(), .what = "clients file"}});
  ASSERT_EQ(files.size(), 2u);
  // FIPS 180-2, appendix B.1.
  EXPECT_EQ(files[0].sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(files[0].size, 3u);
  EXPECT_EQ(files[0].what, "users file");
  EXPECT_GT(files[0].loaded_unix_ms, 1'700'000'000'000);  // After 2023: the wall clock, in ms.
  EXPECT_EQ(files[1].sha256, "");
  EXPECT_EQ(files[1].what, "clients file (not read: No such file or directory)");
  std::filesystem::remove_all(dir);
}

TEST(ConfigInForce, HandsOutTheLastBody) {
  ConfigInForce config;
  EXPECT_EQ(config.body(), nullptr);
  config.replace("first");
  const std::shared_ptr<const std::string> held = config.body();
  config.replace("second");
  EXPECT_EQ(*config.body(), "second");
  EXPECT_EQ(*held, "first");  // A reader keeps what it took.
}

}  // namespace
}  // namespace rw::io
