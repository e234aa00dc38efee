// Diameter AVPs inside EAP-TTLS (ttls_avps.h; RFC 5281 §10.1).
#include "eap/ttls_avps.h"

#include <algorithm>

#include "base/assert.h"

namespace rw::eap {

std::string_view to_string(AvpError error) {
  switch (error) {
    case AvpError::kTruncatedHeader:
      return "AVP header truncated";
    case AvpError::kLengthTooShort:
      return "AVP Length shorter than its header";
    case AvpError::kLengthPastEnd:
      return "AVP Length past the end of the data";
    case AvpError::kTooManyAvps:
      return "more AVPs than the bound";
  }
  return "unknown AVP error";
}

Result<std::vector<Avp>, AvpError> parse_avps(Bytes data, std::size_t avps_max) {
  std::vector<Avp> avps;
  ByteReader reader(data);
  while (reader.remaining() > 0) {
    if (avps.size() == avps_max) return fail(AvpError::kTooManyAvps);
    Avp avp;
    std::uint32_t flags_and_length = 0;
    if (!reader.read_u32(avp.code) || !reader.read_u32(flags_and_length))
      return fail(AvpError::kTruncatedHeader);
    avp.flags = static_cast<std::uint8_t>(flags_and_length >> 24);
    const std::size_t length = flags_and_length & 0x00FF'FFFF;
    std::size_t header = 8;
    if ((avp.flags & kAvpFlagVendor) != 0) {
      std::uint32_t vendor = 0;
      if (!reader.read_u32(vendor)) return fail(AvpError::kTruncatedHeader);
      avp.vendor_id = vendor;
      header = 12;
    }
    if (length < header) return fail(AvpError::kLengthTooShort);
    if (length - header > reader.remaining()) return fail(AvpError::kLengthPastEnd);
    avp.data = reader.read_bytes(length - header);
    // RFC 5281 §10.1: padded to a multiple of four octets; the last may not be.
    const std::size_t padding = (4 - length % 4) % 4;
    (void)reader.read_bytes(std::min(padding, reader.remaining()));
    avps.push_back(avp);
  }
  return avps;
}

std::vector<std::uint8_t> encode_avp(std::uint32_t code, Bytes data, bool mandatory) {
  return encode_vendor_avp(std::nullopt, code, data, mandatory);
}

std::vector<std::uint8_t> encode_vendor_avp(std::optional<std::uint32_t> vendor_id, std::uint32_t code,
                                            Bytes data, bool mandatory) {
  RW_ASSERT(data.size() < 0x00FF'FFFF - 12);
  const std::uint32_t header = vendor_id ? 12 : 8;
  const auto length = static_cast<std::uint32_t>(header + data.size());
  const std::uint32_t flags =
      (mandatory ? std::uint32_t{kAvpFlagMandatory} : 0u) | (vendor_id ? std::uint32_t{kAvpFlagVendor} : 0u);
  std::vector<std::uint8_t> out;
  const std::uint32_t words[3] = {code, flags << 24 | length, vendor_id.value_or(0)};
  for (std::size_t i = 0; i < header / 4; ++i) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(words[i] >> shift));
  }
  out.insert(out.end(), data.begin(), data.end());
  out.resize((out.size() + 3) / 4 * 4, 0);
  return out;
}

}  // namespace rw::eap
