// spdlog setup, with a JSON line formatter for log collectors.
#include "io/logging.h"

#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "base/utf8.h"

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

// Text lines: spdlog's pattern, around a message whose every byte that could
// end or forge a line is escaped (text_escape).
class TextFormatter final : public spdlog::formatter {
 public:
  TextFormatter() : pattern_(kPattern, spdlog::pattern_time_type::utc) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string escaped = text_escape(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
    pattern_.format(copy, dest);
  }

  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<TextFormatter>();
  }

 private:
  static constexpr const char* kPattern = "%Y-%m-%dT%H:%M:%S.%eZ %l [%t] %v";
  spdlog::pattern_formatter pattern_;
};

constexpr char kHexDigits[] = "0123456789abcdef";

void append_hex_escape(std::string& out, unsigned char byte) {
  out += "\\x";
  out.push_back(kHexDigits[byte >> 4]);
  out.push_back(kHexDigits[byte & 0xf]);
}

// Walks `text` by UTF-8 sequence: `plain(out, c)` handles each ASCII byte
// that is not a control character, `bad(out, byte)` each control byte
// (0x00-0x1f, 0x7f) and each byte outside well-formed UTF-8; longer
// well-formed sequences are copied.
template <class Plain, class Bad>
std::string escape(std::string_view text, Plain plain, Bad bad) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto byte = static_cast<unsigned char>(text[at]);
    const std::size_t length = utf8_sequence(text, at);
    if (length == 0 || byte < 0x20 || byte == 0x7f) {
      bad(out, byte);
      ++at;
    } else if (length == 1) {
      plain(out, text[at]);
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

}  // namespace

std::string json_escape(std::string_view text) {
  return escape(
      text,
      [](std::string& out, char c) {
        if (c == '"' || c == '\\') out.push_back('\\');
        out.push_back(c);
      },
      [](std::string& out, unsigned char byte) {
        if (byte < 0x20) {
          out += fmt::format("\\u{:04x}", byte);
        } else if (byte == 0x7f) {
          out.push_back(static_cast<char>(byte));  // Legal in a JSON string.
        } else {
          out += "\\ufffd";  // JSON strings are Unicode: a bad byte is U+FFFD.
        }
      });
}

std::string text_escape(std::string_view text) {
  return escape(
      text,
      [](std::string& out, char c) {
        if (c == '\\') out.push_back('\\');
        out.push_back(c);
      },
      [](std::string& out, unsigned char byte) { append_hex_escape(out, byte); });
}

void setup_logging(const config::GatewayConfig::Logging& logging) {
  auto logger =
      std::make_shared<spdlog::logger>("radiusward", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (logging.format == config::LogFormat::kJson) {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_formatter(std::make_unique<TextFormatter>());
  }
  logger->set_level(to_spdlog(logging.level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace rw::io
