// The configuration in force as the admin API's /config shows it
// (docs/admin_api.md "/config"): every key of a gateway's or member's
// parsed configuration as JSON, with secrets replaced by "<redacted>"
// (client secrets, passwords in libpq connection strings; key files are
// named by path, their contents never read here), and the files the
// configuration named with their SHA-256, size and load time. Pure: the
// shell reads the files and the clock and hands the figures in.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/clients_file.h"
#include "config/gateway_config.h"
#include "config/member_config.h"

namespace rw::config {

// What a secret is shown as.
inline constexpr std::string_view kRedacted = "<redacted>";

// One file a configuration named, as loaded.
struct LoadedFile {
  std::string path{};
  std::string what{};    // "config file", "clients file", "TLS key", ...
  std::string sha256{};  // lowercase hex of the bytes read
  std::uint64_t size = 0;
  std::int64_t loaded_unix_ms = 0;
};

// A libpq connection string with its passwords redacted: the values of
// `password` and `sslpassword` in keyword/value form, and in URI form
// (postgresql://, postgres://) the userinfo's password and those query
// parameters. A string that does not parse in either form is redacted
// whole: a secret is never let through on a parse error.
[[nodiscard]] std::string redact_conninfo(std::string_view conninfo);

// Every key of the gateway's configuration, and its clients (from the
// clients file, their secrets redacted).
[[nodiscard]] nlohmann::ordered_json gateway_config_json(const GatewayConfig& config,
                                                         std::span<const ClientDef> clients);

// Every key of a member's configuration.
[[nodiscard]] nlohmann::ordered_json member_config_json(const MemberConfig& config);

// "2026-12-02T03:04:05.678Z" for Unix milliseconds (UTC, ISO 8601).
[[nodiscard]] std::string iso8601_utc(std::int64_t unix_ms);

// The /config body: {"role", "config", "files": [{path, what, sha256, size, loaded}]}.
[[nodiscard]] std::string config_body(std::string_view role, const nlohmann::ordered_json& config,
                                      std::span<const LoadedFile> files);

// The files `config` names that the process reads at start, in the order
// of its keys: the config file itself, users and clients files,
// dictionaries, the SQLite users database, the cluster TLS files and the
// admin token file. The dictionary folder is named by its `dictionary`
// file; files it $INCLUDEs are not listed.
[[nodiscard]] std::vector<LoadedFile> named_files(const GatewayConfig& config);
[[nodiscard]] std::vector<LoadedFile> named_files(const MemberConfig& config);

}  // namespace rw::config
