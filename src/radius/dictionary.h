// The attribute dictionary: names, numbers, data types and named values of
// RADIUS attributes. Built in: RFC 2865, 2866, 2867, 2868, 2869, 3162, 3576,
// 3579, 3580, 4072, 4372, 4675, 4818, 4849, 5176, 5580, 6911, 6929, the
// Microsoft vendor attributes of RFC 2548 and FreeRADIUS's server-side
// attributes (Auth-Type, Cleartext-Password, ...). More are loaded from
// FreeRADIUS-format dictionary files (freeradius-common's /usr/share/freeradius).
// docs/dictionary.md describes the file syntax and how conflicts are resolved.
//
// A Dictionary is built once at start and is immutable afterwards: lookups
// are const, allocate nothing and are safe from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace rw::radius {

// The wire types of FreeRADIUS dictionaries (RFC 8044 names in comments).
enum class DataType : std::uint8_t {
  kString,        // text: UTF-8
  kOctets,        // string: opaque bytes
  kIpAddr,        // ipv4addr
  kIpv6Addr,      // ipv6addr
  kIpv6Prefix,    // ipv6prefix
  kIpv4Prefix,    // ipv4prefix
  kInteger,       // integer (32 bits)
  kByte,          // 8-bit unsigned
  kShort,         // 16-bit unsigned
  kSigned,        // 32-bit signed
  kInteger64,     // integer64
  kDate,          // time: seconds since 1970
  kIfid,          // ifid: 8 bytes
  kEther,         // 6 bytes
  kAbinary,       // Ascend binary filter, kept as octets
  kTlv,           // tlv: a container of sub-attributes
  kVsa,           // vsa: Vendor-Specific (26)
  kExtended,      // extended: RFC 6929 §2.1 (241..244)
  kLongExtended,  // long-extended: RFC 6929 §2.2 (245, 246)
  kEvs,           // evs: RFC 6929 §2.4 Extended-Vendor-Specific
  kComboIp,       // ipv4 or ipv6 by length
};

// The FreeRADIUS name of the type: "string", "ipaddr", "integer64", ...
std::string_view to_string(DataType type);

// True for the types whose value is an unsigned or signed number and may
// carry VALUE names (byte, short, integer, signed, integer64).
bool is_integer(DataType type);

// How the value is hidden on the wire (FreeRADIUS `encrypt=` flag).
enum class Encryption : std::uint8_t {
  kNone,
  kUserPassword,    // encrypt=1: RFC 2865 §5.2
  kTunnelPassword,  // encrypt=2: RFC 2868 §3.5 (salted)
  kAscendSecret,    // encrypt=3
};

// One attribute definition. `vendor` is 0 for the standard space.
//
// Top-level attributes (parent == nullptr) are found by (vendor, type): the
// standard ones (vendor 0, type 1..255), the server-side ones (vendor 0, type
// above 255, `internal`), and Vendor-Specific sub-attributes (vendor != 0).
// Children of a tlv, extended or evs attribute have `parent` set and are found
// with Dictionary::find_child / find_evs_child.
struct AttributeDef {
  std::string name;
  std::uint32_t vendor = 0;
  std::uint32_t type = 0;
  DataType data_type = DataType::kOctets;
  Encryption encryption = Encryption::kNone;
  bool has_tag = false;   // RFC 2868 tagged attribute (Tunnel-*)
  bool concat = false;    // value may span several attributes (EAP-Message)
  bool internal = false;  // server-side only (Auth-Type, ...): never encoded on the wire
  bool array = false;     // FreeRADIUS `array`: several fixed-size values in one attribute
  bool secret = false;    // a secret: traces print it masked
  // For `octets[N]`: the exact length in bytes; 0 when the length is free.
  std::uint16_t fixed_length = 0;
  // The enclosing tlv, extended or evs attribute; owned by the Dictionary.
  const AttributeDef* parent = nullptr;

  // Named values (VALUE lines) for integer types, sorted by number. Where
  // several names share a number, the first defined comes first and is the
  // one format_value prints; the others are accepted as input.
  struct Value {
    std::string name;
    std::uint32_t number;
  };
  std::vector<Value> values;
  // Indices into `values` ordered by case-insensitive name, for
  // value_by_name; filled by the Dictionary (a hand-made AttributeDef without
  // it is searched linearly, in order).
  std::vector<std::uint32_t> values_by_name;

  // Case-insensitive, as FreeRADIUS; allocation-free.
  [[nodiscard]] std::optional<std::uint32_t> value_by_name(std::string_view name) const;
  [[nodiscard]] std::optional<std::string_view> name_of_value(std::uint32_t number) const;
};

// A vendor (VENDOR lines): its Private Enterprise Number and the widths of
// the type and length fields of its sub-attributes (format=t,l; 1,1 default).
struct VendorDef {
  std::string name;
  std::uint32_t number = 0;
  std::uint8_t type_width = 1;    // 1, 2 or 4
  std::uint8_t length_width = 1;  // 0, 1 or 2
  bool continuation = false;      // format=1,1,c (WiMAX): a continuation byte follows the length
};

// Where a dictionary file failed to load: "file:line:col: message".
struct DictionaryError {
  std::string file;
  int line = 0;
  int column = 0;
  std::string message;

  [[nodiscard]] std::string to_string() const;
};

class Dictionary {
 public:
  // The built-in standard, Microsoft and FreeRADIUS server-side attributes.
  // Built once on first use and shared.
  static std::shared_ptr<const Dictionary> builtin();

  // The built-in attributes plus those of a FreeRADIUS-format dictionary file
  // and everything it $INCLUDEs (paths relative to the including file's
  // folder; at most 32 levels deep; a file including itself is refused).
  // Redefining an attribute with the same number, data type and wire flags is
  // accepted; a conflicting definition is an error (docs/dictionary.md).
  static Result<std::shared_ptr<const Dictionary>, DictionaryError> load(const std::string& path);
  // The built-in attributes plus several files, read in order, each on top of
  // the ones before (the gateway's dictionary_dir, then dictionary_files).
  static Result<std::shared_ptr<const Dictionary>, DictionaryError> load(std::span<const std::string> paths);

  // Parses dictionary text on top of the built-in attributes (for tests and
  // fuzzing); `$INCLUDE` is refused, `$INCLUDE-` ignored. Reads no file.
  static Result<std::shared_ptr<const Dictionary>, DictionaryError> parse(std::string_view text,
                                                                          std::string_view file_name);

  // Case-insensitive; aliases (several names for one number) are all found.
  [[nodiscard]] const AttributeDef* find(std::string_view name) const;
  // A top-level attribute: standard (vendor 0) or a Vendor-Specific one.
  // Where several names share a number, the latest defined is returned, as in
  // FreeRADIUS (redefining a name takes the number back).
  [[nodiscard]] const AttributeDef* find(std::uint32_t vendor, std::uint32_t type) const;
  // A child of a tlv or extended attribute (same vendor as the parent).
  [[nodiscard]] const AttributeDef* find_child(const AttributeDef& parent, std::uint32_t type) const;
  // A vendor's attribute inside an Extended-Vendor-Specific attribute (RFC 6929 §2.4).
  [[nodiscard]] const AttributeDef* find_evs_child(const AttributeDef& evs, std::uint32_t vendor,
                                                   std::uint32_t type) const;
  [[nodiscard]] const VendorDef* find_vendor(std::string_view name) const;  // case-insensitive
  [[nodiscard]] const VendorDef* find_vendor(std::uint32_t number) const;
  // Distinct definitions, aliases included.
  [[nodiscard]] std::size_t attribute_count() const;

  ~Dictionary();
  Dictionary(const Dictionary&) = delete;
  Dictionary& operator=(const Dictionary&) = delete;

  class Builder;  // Defined in dictionary_builder.h (internal to this folder).

 private:
  struct Tables;
  explicit Dictionary(std::unique_ptr<Tables> tables);
  std::unique_ptr<Tables> tables_;
};

// Parses an attribute value written as text (users files, SQL rows, config)
// into its wire bytes: "10.0.0.1" for ipaddr, "Framed-User" or "2" for an
// integer with VALUEs, "0x0102" or plain text for octets, etc. Tags and
// encryption are not applied here. Returns a human-readable reason on error.
Result<std::vector<std::uint8_t>, std::string> parse_value(const AttributeDef& def, std::string_view text);

// Formats wire bytes as text, the inverse of parse_value: named VALUEs for
// integers, dotted quads, "Jan  1 2024 00:00:00 UTC" for dates, 0x-hex for
// octets. Bytes that are malformed for the type are printed as 0x-hex.
std::string format_value(const AttributeDef& def, Bytes value);
// The same text, appended to `out`: no allocation once `out` has the
// capacity (the gateway's session key, per accounting request).
void append_value(std::string& out, const AttributeDef& def, Bytes value);

}  // namespace rw::radius
