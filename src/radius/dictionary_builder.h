// Dictionary::Builder: accumulates attribute, vendor and VALUE definitions,
// checks them against each other, and freezes them into an immutable
// Dictionary. Used by the built-in table (dictionary_builtin.cc) and the
// FreeRADIUS file reader (dictionary_file.cc); internal to src/radius.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "radius/dictionary.h"

namespace rw::radius {

// Where a definition came from, for error messages.
struct SourcePosition {
  std::string_view file;
  int line = 0;
  int column = 0;
};

class Dictionary::Builder {
 public:
  Builder();
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // Adds an attribute. A second definition of a name with the same parent,
  // vendor, number, data type, tag and encryption is accepted and returns the
  // first; any other redefinition of a name is an error. A new name for an
  // existing number is an alias: both are found by name, and the latest
  // defined is found by number (FreeRADIUS semantics). Vendor-0 top-level
  // numbers above 255 become internal.
  [[nodiscard]] Result<const AttributeDef*, std::string> add_attribute(AttributeDef def);

  // Adds a VALUE name. When `attribute` is not defined yet, the VALUE waits
  // until finish() (FreeRADIUS files may name an attribute before defining it).
  [[nodiscard]] Result<void, std::string> add_value(std::string_view attribute, std::string_view name,
                                                    std::uint32_t number, SourcePosition where);

  // Adds a vendor. Redefining a name with the same number and format is
  // accepted; a new name for a known number is an alias.
  [[nodiscard]] Result<const VendorDef*, std::string> add_vendor(VendorDef vendor);

  // Makes `alias` another name of the existing attribute `target` (ALIAS).
  [[nodiscard]] Result<void, std::string> add_alias(std::string_view alias, std::string_view target);

  // Lookups over what has been added so far.
  [[nodiscard]] const AttributeDef* find(std::string_view name) const;
  [[nodiscard]] const AttributeDef* find_number(const AttributeDef* parent, std::uint32_t vendor,
                                                std::uint32_t type) const;
  [[nodiscard]] const VendorDef* find_vendor(std::string_view name) const;
  [[nodiscard]] const VendorDef* find_vendor(std::uint32_t number) const;

  // Resolves waiting VALUEs and freezes the tables. The Builder is empty
  // afterwards.
  [[nodiscard]] Result<std::shared_ptr<const Dictionary>, DictionaryError> finish();

 private:
  struct PendingValue {
    std::string attribute;
    std::string name;
    std::uint32_t number;
    std::string file;
    int line;
    int column;
  };
  [[nodiscard]] Result<void, std::string> attach_value(const AttributeDef& named, std::string_view name,
                                                       std::uint32_t number);

  std::unique_ptr<Tables> tables_;
  std::vector<PendingValue> pending_values_;
};

// Adds the built-in definitions (dictionary_builtin.cc).
void add_builtin_definitions(Dictionary::Builder& builder);

// Text helpers shared by the dictionary and value code. Names compare as in
// FreeRADIUS: ASCII case folded, everything else byte for byte.
char ascii_lower(char c);
bool equal_ignoring_case(std::string_view a, std::string_view b);
// Decimal or 0x-hex, no sign, no spaces; nullopt on junk or past 64 bits.
std::optional<std::uint64_t> parse_unsigned(std::string_view text);

}  // namespace rw::radius
