// Tests of the one YAML reader both configs are built on: key checking,
// positions, each typed getter's range and error text, and the address
// syntax (parse_host_port) shared by the gateway's and the member's config.
#include "config/yaml_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rw::config {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Reads a small schema through every getter, as the configs do.
class SampleReader : YamlReader {
 public:
  struct Out {
    std::int64_t count = 0;
    std::optional<Duration> wait{};
    std::string name{};
    std::optional<ConfiguredPath> file{};
    bool flag = false;
    std::vector<HostPort> peers{};
    GatewayConfig::Logging logging{};
    std::optional<LogFormat> format{};
  };

  explicit SampleReader(std::string_view file_name) : YamlReader(file_name) {}

  std::vector<std::string> read(std::string_view text, std::size_t bytes_max = 4096) {
    read_document(text, bytes_max, [&](const YAML::Node& root) {
      if (!expect_root(root)) return;
      const auto seen = each_key(
          root, "", [&](const std::string& key, const YAML::Node& value, const SourceLocation& where) {
            if (key == "count") {
              set_integer(out_.count, value, where, 1, 10);
            } else if (key == "wait_ms") {
              out_.wait = duration(value, where, DurationUnit::kMilliseconds, 0, 500);
            } else if (key == "name") {
              out_.name = non_empty(value, where, "a name").value_or("");
            } else if (key == "file") {
              out_.file = path(value, where);
            } else if (key == "flag") {
              out_.flag = boolean(value, where).value_or(false);
            } else if (key == "format") {
              out_.format = choice<LogFormat>(value, where, "text or json", [](std::string_view word) {
                return parse_named(word, {LogFormat::kText, LogFormat::kJson});
              });
            } else if (key == "logging") {
              logging(value, where, out_.logging);
            } else if (key == "peers") {
              sequence(value, where, "peers", [&](const YAML::Node& element) {
                std::optional<HostPort> peer = address(element, at(element));
                if (peer && listed(out_.peers, *peer)) {
                  errors_.push_back(peer->where.error("listed twice"));
                } else if (peer) {
                  out_.peers.push_back(*peer);
                }
              });
            } else if (key == "section") {
              if (expect_map(value, where, "of things")) {
                const auto inner = each_key(
                    value, "section.", [](const std::string& name, const YAML::Node&, const SourceLocation&) {
                      return name == "a";
                    });
                require(inner, "section.", "a", at(value));
              }
            } else {
              return false;
            }
            return true;
          });
      require(seen, "", "count", at(root));
    });
    std::vector<std::string> out;
    for (const ConfigError& error : errors_) out.push_back(error.to_string());
    return out;
  }

  const Out& out() const { return out_; }

 private:
  Out out_;
};

std::vector<std::string> errors_of(std::string_view text) { return SampleReader("etc/x.yaml").read(text); }

TEST(YamlReader, ReadsEveryTypedValue) {
  SampleReader reader("etc/x.yaml");
  EXPECT_THAT(reader.read("count: 7\nwait_ms: 250\nname: n\nfile: a/b\nflag: True\nformat: json\n"
                          "peers: [127.0.0.1:1, '[::1]:2']\nlogging: {level: warn, format: json}\n"
                          "section: {a: 1}\n"),
              IsEmpty());
  const SampleReader::Out& out = reader.out();
  EXPECT_EQ(out.count, 7);
  EXPECT_EQ(out.wait, Duration::milliseconds(250));
  EXPECT_EQ(out.name, "n");
  ASSERT_TRUE(out.file.has_value());
  EXPECT_EQ(out.file->path, "etc/a/b");
  EXPECT_EQ(out.file->where.line, 4);
  EXPECT_TRUE(out.flag);
  EXPECT_EQ(out.format, LogFormat::kJson);
  ASSERT_EQ(out.peers.size(), 2u);
  EXPECT_EQ(out.peers[0].host, "127.0.0.1");
  EXPECT_EQ(out.peers[1].host, "::1");
  EXPECT_TRUE(out.peers[1].is_v6);
  EXPECT_EQ(out.peers[1].port, 2);
  EXPECT_EQ(out.peers[1].where.line, 7);
  EXPECT_EQ(out.logging.level, LogLevel::kWarn);
  EXPECT_EQ(out.logging.format, LogFormat::kJson);
}

TEST(YamlReader, ReportsUnknownRepeatedAndMissingKeysWithTheirSection) {
  EXPECT_THAT(errors_of("count: 1\ncolour: red\ncount: 2\nsection: {b: 1}\n? [x]\n: 1\n"),
              ElementsAre("etc/x.yaml:2:1: unknown key 'colour'", "etc/x.yaml:3:1: duplicate key 'count'",
                          "etc/x.yaml:4:11: unknown key 'section.b'",
                          "etc/x.yaml:4:10: missing required key 'section.a'",
                          "etc/x.yaml:5:3: keys must be plain words"));
  EXPECT_THAT(errors_of("name: x\n"), ElementsAre("etc/x.yaml:1:1: missing required key 'count'"));
}

TEST(YamlReader, ReportsEachBadValueAtItsPosition) {
  EXPECT_THAT(
      errors_of("count: 11\nwait_ms: -1\nname: ''\nfile:\nflag: yes\nformat: xml\n"
                "peers: [localhost:1, 10.0.0.1:1, '[::1]:0', 10.0.0.1:1]\nsection: 3\n"),
      ElementsAre("etc/x.yaml:1:8: expected an integer between 1 and 10, got '11'",
                  "etc/x.yaml:2:10: expected an integer between 0 and 500, got '-1'",
                  "etc/x.yaml:3:7: expected a name, got an empty string", "etc/x.yaml:4:1: expected a path",
                  "etc/x.yaml:5:7: expected true or false, got 'yes'",
                  "etc/x.yaml:6:9: expected text or json, got 'xml'",
                  "etc/x.yaml:7:9: expected IPv4:port or [IPv6]:port, got 'localhost:1'",
                  "etc/x.yaml:7:34: expected IPv4:port or [IPv6]:port, got '[::1]:0'",
                  "etc/x.yaml:7:45: listed twice", "etc/x.yaml:8:10: expected a mapping of things"));
  EXPECT_THAT(errors_of("count: 1\nlogging: {level: loud, colour: red}\npeers: 1\n"),
              ElementsAre("etc/x.yaml:2:18: expected one of trace, debug, info, warn, error, off, got 'loud'",
                          "etc/x.yaml:2:24: unknown key 'logging.colour'",
                          "etc/x.yaml:3:8: expected a list of peers"));
}

TEST(YamlReader, RefusesEmptyNonMappingOversizedAndMalformedDocuments) {
  EXPECT_THAT(errors_of(""), ElementsAre("etc/x.yaml:1:1: the configuration is empty"));
  EXPECT_THAT(errors_of("- 1\n"),
              ElementsAre("etc/x.yaml:1:1: the configuration must be a mapping of keys to values"));
  EXPECT_THAT(SampleReader("etc/x.yaml").read("count: 1\n", 4),
              ElementsAre("etc/x.yaml: the file is larger than 4 bytes"));
  const std::vector<std::string> malformed = errors_of("count: [1\n");
  ASSERT_EQ(malformed.size(), 1u);
  EXPECT_THAT(malformed[0], ::testing::StartsWith("etc/x.yaml:2:1: "));
}

TEST(ParseHostPort, KeepsTheWrittenTextAndTheHostWithoutBrackets) {
  const std::optional<HostPort> v4 = parse_host_port("192.0.2.1:7301");
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->text, "192.0.2.1:7301");
  EXPECT_EQ(v4->host, "192.0.2.1");
  const std::optional<HostPort> v6 = parse_host_port("[::1]:7301");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->text, "[::1]:7301");
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->bytes[15], 1);
}

TEST(ParseHostPort, ComparesEndpointsHoweverWritten) {
  EXPECT_TRUE(parse_host_port("[::1]:7301")->same_endpoint(*parse_host_port("[0:0::1]:7301")));
  EXPECT_FALSE(parse_host_port("[::1]:7301")->same_endpoint(*parse_host_port("[::1]:7302")));
  // ::ffff:127.0.0.1 is another socket family than 127.0.0.1: not the same.
  EXPECT_FALSE(parse_host_port("127.0.0.1:1")->same_endpoint(*parse_host_port("[::ffff:127.0.0.1]:1")));
  EXPECT_FALSE(parse_host_port("[::1%lo]:1").has_value());
  EXPECT_FALSE(parse_host_port("[::1]:1x").has_value());
  EXPECT_FALSE(parse_host_port("[127.0.0.1]:1").has_value());
}

}  // namespace
}  // namespace rw::config
