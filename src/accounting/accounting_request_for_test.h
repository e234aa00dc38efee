// Test support: real, signed Accounting-Request packets (RFC 2866 §3) built
// with the codec's PacketBuilder, and records and entries made from them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accounting/entry.h"
#include "accounting/record.h"
#include "base/assert.h"
#include "radius/authenticator.h"
#include "radius/packet.h"

namespace rw::accounting::testing {

// What goes into one Accounting-Request.
struct RequestSpec {
  std::uint8_t identifier = 1;
  std::uint32_t status_type = status::kStart;
  std::string user_name = "bob";
  std::string session_id = "abc123";
  std::optional<std::array<std::uint8_t, 4>> nas_ip = std::array<std::uint8_t, 4>{10, 0, 0, 1};
  std::string nas_identifier;
  std::optional<std::uint32_t> nas_port = 7;
  std::string calling_station_id;
  std::optional<std::array<std::uint8_t, 4>> framed_ip;
  std::vector<std::uint8_t> framed_ipv6_prefix;  // the attribute's value
  std::optional<std::uint32_t> delay_s;
  std::optional<std::uint32_t> event_timestamp;
  std::optional<std::uint32_t> session_time_s;
  std::optional<std::uint32_t> input_octets;
  std::optional<std::uint32_t> interim_interval_s;
  std::string proxy_state;
  std::string class_value;
  bool message_authenticator = false;
  bool omit_status_type = false;
  bool omit_session_id = false;
};

// A signed Accounting-Request; owns its bytes.
class AccountingRequest {
 public:
  explicit AccountingRequest(const RequestSpec& spec) {
    radius::PacketBuilder builder(buffer_);
    builder.begin(radius::Code::kAccountingRequest, spec.identifier);
    if (spec.message_authenticator) builder.reserve_message_authenticator();
    if (!spec.omit_status_type) builder.add_u32(radius::attr::kAcctStatusType, spec.status_type);
    if (!spec.user_name.empty()) builder.add(radius::attr::kUserName, as_bytes(spec.user_name));
    if (!spec.omit_session_id) builder.add(radius::attr::kAcctSessionId, as_bytes(spec.session_id));
    if (spec.nas_ip) builder.add(radius::attr::kNasIpAddress, *spec.nas_ip);
    if (!spec.nas_identifier.empty())
      builder.add(radius::attr::kNasIdentifier, as_bytes(spec.nas_identifier));
    if (spec.nas_port) builder.add_u32(radius::attr::kNasPort, *spec.nas_port);
    if (!spec.calling_station_id.empty())
      builder.add(radius::attr::kCallingStationId, as_bytes(spec.calling_station_id));
    if (spec.framed_ip) builder.add(radius::attr::kFramedIpAddress, *spec.framed_ip);
    if (!spec.framed_ipv6_prefix.empty())
      builder.add(radius::attr::kFramedIpv6Prefix, spec.framed_ipv6_prefix);
    if (spec.session_time_s) builder.add_u32(radius::attr::kAcctSessionTime, *spec.session_time_s);
    if (spec.input_octets) builder.add_u32(radius::attr::kAcctInputOctets, *spec.input_octets);
    if (spec.interim_interval_s)
      builder.add_u32(radius::attr::kAcctInterimInterval, *spec.interim_interval_s);
    if (spec.event_timestamp) builder.add_u32(radius::attr::kEventTimestamp, *spec.event_timestamp);
    if (!spec.class_value.empty()) builder.add(radius::attr::kClass, as_bytes(spec.class_value));
    if (spec.delay_s) builder.add_u32(radius::attr::kAcctDelayTime, *spec.delay_s);
    if (!spec.proxy_state.empty()) builder.add(radius::attr::kProxyState, as_bytes(spec.proxy_state));
    auto wire = builder.finish();
    RW_ASSERT(wire.has_value());
    auto secret = radius::SharedSecret::create(as_bytes("testing123"));
    radius::sign_request(*wire, *secret);
    length_ = wire->size();
  }

  [[nodiscard]] radius::Packet packet() const {
    auto packet = radius::Packet::parse(Bytes(buffer_.data(), length_));
    RW_ASSERT(packet.has_value());
    return *packet;
  }

 private:
  std::array<std::uint8_t, radius::kMaxPacketLength> buffer_{};
  std::size_t length_ = 0;
};

inline const KeyRecipe& default_recipe() {
  static const KeyRecipe recipe = KeyRecipe::freeradius_default();
  return recipe;
}

// The record of a request from client "nas1" received at `received_unix_ms`.
inline Record record_of(const RequestSpec& spec, std::int64_t received_unix_ms = 1'700'000'000'000,
                        const std::string& client = "nas1") {
  auto record = make_record(AccountingRequest(spec).packet(), client, received_unix_ms, default_recipe());
  RW_ASSERT(record.has_value());
  return std::move(*record);
}

// A records entry; with `leader_unix_ms`, version 2 stamped with it.
inline std::vector<std::uint8_t> entry_of(const std::vector<Record>& records,
                                          std::optional<std::int64_t> leader_unix_ms = std::nullopt) {
  return encode_records_entry(records, leader_unix_ms);
}

// The Start of subscriber n as a large ISP's broadband NASes write it: long
// User-Name, Acct-Session-Id and NAS-Identifier (~215 bytes a session), 64
// NASes. What the ledger's bounds are measured with (docs/accounting.md
// "Snapshot at the bounds").
inline RequestSpec broadband_start(std::uint64_t n) {
  RequestSpec spec;
  spec.identifier = static_cast<std::uint8_t>(n);
  spec.status_type = status::kStart;
  spec.user_name = "subscriber-" + std::to_string(100'000'000 + n) + "@broadband.region-07.example.net";
  spec.session_id = "0A1B2C3D-" + std::to_string(1'000'000'000 + n) + "-4E5F60718293A4B5";
  spec.nas_identifier = "bng-" + std::to_string(n % 64) + ".pop-frankfurt.example.net";
  spec.interim_interval_s = 600;
  spec.delay_s = 0;
  return spec;
}

}  // namespace rw::accounting::testing
