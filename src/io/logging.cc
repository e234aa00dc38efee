// spdlog setup, with a JSON line formatter for log collectors.
#include "io/logging.h"

#include <spdlog/formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace rw::io {
namespace {

spdlog::level::level_enum to_spdlog(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::kTrace:
      return spdlog::level::trace;
    case config::LogLevel::kDebug:
      return spdlog::level::debug;
    case config::LogLevel::kInfo:
      return spdlog::level::info;
    case config::LogLevel::kWarn:
      return spdlog::level::warn;
    case config::LogLevel::kError:
      return spdlog::level::err;
    case config::LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

// {"time":"2026-01-01T12:00:00.123Z","level":"info","thread":42,"message":"..."}
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since_epoch = msg.time.time_since_epoch();
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds);
    const std::time_t time = static_cast<std::time_t>(seconds.count());
    const auto level = spdlog::level::to_string_view(msg.level);
    fmt::format_to(std::back_inserter(dest),
                   R"({{"time":"{:%Y-%m-%dT%H:%M:%S}.{:03}Z","level":"{}","thread":{},"message":"{}"}})",
                   fmt::gmtime(time), millis.count(), std::string_view(level.data(), level.size()),
                   msg.thread_id, json_escape(std::string_view(msg.payload.data(), msg.payload.size())));
    dest.push_back('\n');
  }

  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (byte < 0x20) {
      out += fmt::format("\\u{:04x}", byte);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

void setup_logging(const config::GatewayConfig::Logging& logging) {
  auto logger =
      std::make_shared<spdlog::logger>("radiusward", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (logging.format == config::LogFormat::kJson) {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l [%t] %v", spdlog::pattern_time_type::utc);
  }
  logger->set_level(to_spdlog(logging.level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace rw::io
