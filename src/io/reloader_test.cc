// Tests of the reload serialisation: generations move on accepted reloads
// only, every error of a rejected one is kept, attempts never overlap, and
// the admin routes answer 200 / 422 with the outcome.
#include "io/reloader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace rw::io {
namespace {

config::ConfigError error_at(int line) { return config::ConfigError{"users", line, 3, "bad entry"}; }

TEST(Reloader, AcceptedReloadsCountGenerations) {
  int calls = 0;
  Reloader reloader([&]() -> Result<void, config::ConfigErrors> {
    ++calls;
    return {};
  });
  EXPECT_EQ(reloader.status().generation, 0u);
  EXPECT_FALSE(reloader.status().last.has_value());
  const ReloadOutcome first = reloader.reload("SIGHUP");
  EXPECT_TRUE(first.accepted);
  EXPECT_EQ(first.generation, 1u);
  const ReloadOutcome second = reloader.reload("admin API");
  EXPECT_EQ(second.generation, 2u);
  const ReloadStatus status = reloader.status();
  EXPECT_EQ(status.generation, 2u);
  EXPECT_EQ(status.accepted, 2u);
  EXPECT_EQ(status.rejected, 0u);
  ASSERT_TRUE(status.last.has_value());
  EXPECT_EQ(status.last->trigger, "admin API");
  EXPECT_GT(status.last->unix_ms, 0);
  EXPECT_EQ(calls, 2);
}

TEST(Reloader, RejectedReloadKeepsTheGenerationAndEveryError) {
  bool fail_next = false;
  Reloader reloader([&]() -> Result<void, config::ConfigErrors> {
    if (fail_next) return fail(config::ConfigErrors{error_at(4), error_at(9)});
    return {};
  });
  ASSERT_TRUE(reloader.reload("SIGHUP").accepted);
  fail_next = true;
  const ReloadOutcome rejected = reloader.reload("SIGHUP");
  EXPECT_FALSE(rejected.accepted);
  EXPECT_EQ(rejected.generation, 1u);
  ASSERT_EQ(rejected.errors.size(), 2u);
  EXPECT_EQ(rejected.errors[1].to_string(), "users:9:3: bad entry");
  const ReloadStatus status = reloader.status();
  EXPECT_EQ(status.generation, 1u);
  EXPECT_EQ(status.rejected, 1u);
  const nlohmann::json json = nlohmann::json::parse(reload_status_json(status).dump());
  EXPECT_EQ(json["generation"], 1);
  EXPECT_EQ(json["last"]["accepted"], false);
  EXPECT_EQ(json["last"]["errors"][0], "users:4:3: bad entry");
}

TEST(Reloader, AttemptsNeverOverlap) {
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  Reloader reloader([&]() -> Result<void, config::ConfigErrors> {
    if (inside.fetch_add(1) != 0) overlapped = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    inside.fetch_sub(1);
    return {};
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) (void)reloader.reload("test");
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(overlapped.load());
  EXPECT_EQ(reloader.status().generation, 40u);
}

TEST(ReloadRoutes, PostAnswersTheOutcomeAndGetTheStatus) {
  bool fail_next = false;
  Reloader reloader([&]() -> Result<void, config::ConfigErrors> {
    if (fail_next) return fail(config::ConfigErrors{error_at(2)});
    return {};
  });
  AdminServer server;
  add_reload_routes(server, reloader);
  HttpRequest post{.method = "POST", .target = "/reload", .path = "/reload"};
  const AdminResponse accepted = server.respond(post, false);
  EXPECT_EQ(accepted.status, 200);
  EXPECT_EQ(nlohmann::json::parse(accepted.body)["generation"], 1);
  fail_next = true;
  const AdminResponse rejected = server.respond(post, false);
  EXPECT_EQ(rejected.status, 422);
  const nlohmann::json body = nlohmann::json::parse(rejected.body);
  EXPECT_EQ(body["accepted"], false);
  EXPECT_EQ(body["errors"][0], "users:2:3: bad entry");
  HttpRequest get{.method = "GET", .target = "/reload", .path = "/reload"};
  const AdminResponse status = server.respond(get, false);
  EXPECT_EQ(status.status, 200);
  EXPECT_EQ(nlohmann::json::parse(status.body)["reloads_rejected"], 1);
}

}  // namespace
}  // namespace rw::io
