// The attribute dictionary: names, numbers, data types and named values of
// RADIUS attributes. Built in: RFC 2865, 2866, 2868, 2869, 3162, 3579, 5176,
// 6911 and the Microsoft vendor attributes of RFC 2548. More are loaded from
// FreeRADIUS-format dictionary files (freeradius-common's /usr/share/freeradius).
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
  kString,     // text: UTF-8
  kOctets,     // string: opaque bytes
  kIpAddr,     // ipv4addr
  kIpv6Addr,   // ipv6addr
  kIpv6Prefix, // ipv6prefix
  kIpv4Prefix, // ipv4prefix
  kInteger,    // integer (32 bits)
  kByte,       // 8-bit unsigned
  kShort,      // 16-bit unsigned
  kSigned,     // 32-bit signed
  kInteger64,  // integer64
  kDate,       // time: seconds since 1970
  kIfid,       // ifid: 8 bytes
  kEther,      // 6 bytes
  kAbinary,    // Ascend binary filter, kept as octets
  kTlv,        // a container of sub-attributes
  kVsa,        // Vendor-Specific (26)
  kExtended,   // RFC 6929 extended type
  kLongExtended,
  kEvs,
  kComboIp,    // ipv4 or ipv6 by length
};

std::string_view to_string(DataType type);

// How the value is hidden on the wire (FreeRADIUS `encrypt=` flag).
enum class Encryption : std::uint8_t {
  kNone,
  kUserPassword,    // encrypt=1: RFC 2865 §5.2
  kTunnelPassword,  // encrypt=2: RFC 2868 §3.5 (salted)
  kAscendSecret,    // encrypt=3
};

// One attribute definition. `vendor` is 0 for the standard space.
struct AttributeDef {
  std::string name;
  std::uint32_t vendor = 0;
  std::uint32_t type = 0;
  DataType data_type = DataType::kOctets;
  Encryption encryption = Encryption::kNone;
  bool has_tag = false;   // RFC 2868 tagged attribute (Tunnel-*)
  bool concat = false;    // value may span several attributes (EAP-Message)
  // Named values (VALUE lines) for integer types, sorted by number.
  struct Value {
    std::string name;
    std::uint32_t number;
  };
  std::vector<Value> values;

  [[nodiscard]] std::optional<std::uint32_t> value_by_name(std::string_view name) const;
  [[nodiscard]] std::optional<std::string_view> name_of_value(std::uint32_t number) const;
};

// A vendor (VENDOR lines): its Private Enterprise Number and the widths of
// the type and length fields of its sub-attributes (format=t,l; 1,1 default).
struct VendorDef {
  std::string name;
  std::uint32_t number = 0;
  std::uint8_t type_width = 1;
  std::uint8_t length_width = 1;
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
  // The built-in standard and Microsoft attributes.
  static std::shared_ptr<const Dictionary> builtin();

  // The built-in attributes plus those of a FreeRADIUS-format dictionary file
  // and everything it $INCLUDEs. Redefining a built-in attribute with the same
  // number and type is accepted; a conflicting definition is an error.
  static Result<std::shared_ptr<const Dictionary>, DictionaryError> load(const std::string& path);

  // Parses dictionary text (for tests and fuzzing); `$INCLUDE` is refused.
  static Result<std::shared_ptr<const Dictionary>, DictionaryError> parse(std::string_view text,
                                                                           std::string_view file_name);

  [[nodiscard]] const AttributeDef* find(std::string_view name) const;  // case-insensitive
  [[nodiscard]] const AttributeDef* find(std::uint32_t vendor, std::uint32_t type) const;
  [[nodiscard]] const VendorDef* find_vendor(std::string_view name) const;
  [[nodiscard]] const VendorDef* find_vendor(std::uint32_t number) const;
  [[nodiscard]] std::size_t attribute_count() const;

  ~Dictionary();
  Dictionary(const Dictionary&) = delete;
  Dictionary& operator=(const Dictionary&) = delete;

  class Builder;  // Defined in dictionary.cc.

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

// Formats wire bytes as text, the inverse of parse_value where possible
// (named VALUEs for integers, dotted quads, 0x-hex for unprintable octets).
std::string format_value(const AttributeDef& def, Bytes value);

}  // namespace rw::radius
