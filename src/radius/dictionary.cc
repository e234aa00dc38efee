// The Dictionary's tables and lookups, and the Builder that fills them and
// checks every definition against the earlier ones (docs/dictionary.md,
// "Conflicts").
#include "radius/dictionary.h"

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "base/assert.h"
#include "radius/dictionary_builder.h"

namespace rw::radius {

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

namespace {

// Orders names as FreeRADIUS compares them: ASCII case folded.
int compare_ignoring_case(std::string_view a, std::string_view b) {
  const std::size_t common = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < common; ++i) {
    const char x = ascii_lower(a[i]);
    const char y = ascii_lower(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

// FNV-1a over the case-folded name: allocation-free, so lookups by a
// borrowed string_view allocate nothing.
struct NameHash {
  std::size_t operator()(std::string_view name) const {
    std::uint64_t hash = 14695981039346656037ull;
    for (char c : name) {
      hash ^= static_cast<unsigned char>(ascii_lower(c));
      hash *= 1099511628211ull;
    }
    return static_cast<std::size_t>(hash);
  }
};
struct NameEqual {
  bool operator()(std::string_view a, std::string_view b) const { return equal_ignoring_case(a, b); }
};

// Where a number lives: top level (parent null) or inside a tlv, extended or
// evs attribute.
struct NumberKey {
  const AttributeDef* parent;
  std::uint32_t vendor;
  std::uint32_t type;
  bool operator==(const NumberKey&) const = default;
};
struct NumberKeyHash {
  std::size_t operator()(const NumberKey& key) const {
    std::uint64_t hash = reinterpret_cast<std::uintptr_t>(key.parent);
    hash = hash * 0x9E3779B97F4A7C15ull ^ key.vendor;
    hash = hash * 0x9E3779B97F4A7C15ull ^ key.type;
    return static_cast<std::size_t>(hash ^ (hash >> 29));
  }
};

NumberKey key_of(const AttributeDef& def) { return {def.parent, def.vendor, def.type}; }

template <class T>
using NameMap = std::unordered_map<std::string_view, T*, NameHash, NameEqual>;

std::string describe(const AttributeDef& def) {
  std::string where = def.vendor == 0 ? std::string() : fmt::format("vendor {} ", def.vendor);
  if (def.parent != nullptr) where += fmt::format("inside {} ", def.parent->name);
  return fmt::format("{}type {} {}", where, def.type, to_string(def.data_type));
}

bool same_definition(const AttributeDef& a, const AttributeDef& b) {
  return a.parent == b.parent && a.vendor == b.vendor && a.type == b.type && a.data_type == b.data_type &&
         a.has_tag == b.has_tag && a.encryption == b.encryption;
}

std::optional<std::uint32_t> value_limit(DataType type) {
  switch (type) {
    case DataType::kByte:
      return 0xFF;
    case DataType::kShort:
      return 0xFFFF;
    case DataType::kInteger:
    case DataType::kSigned:
    case DataType::kInteger64:
      return 0xFFFFFFFF;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::kString:
      return "string";
    case DataType::kOctets:
      return "octets";
    case DataType::kIpAddr:
      return "ipaddr";
    case DataType::kIpv6Addr:
      return "ipv6addr";
    case DataType::kIpv6Prefix:
      return "ipv6prefix";
    case DataType::kIpv4Prefix:
      return "ipv4prefix";
    case DataType::kInteger:
      return "integer";
    case DataType::kByte:
      return "byte";
    case DataType::kShort:
      return "short";
    case DataType::kSigned:
      return "signed";
    case DataType::kInteger64:
      return "integer64";
    case DataType::kDate:
      return "date";
    case DataType::kIfid:
      return "ifid";
    case DataType::kEther:
      return "ether";
    case DataType::kAbinary:
      return "abinary";
    case DataType::kTlv:
      return "tlv";
    case DataType::kVsa:
      return "vsa";
    case DataType::kExtended:
      return "extended";
    case DataType::kLongExtended:
      return "long-extended";
    case DataType::kEvs:
      return "evs";
    case DataType::kComboIp:
      return "combo-ip";
  }
  return "unknown";
}

bool is_integer(DataType type) { return value_limit(type).has_value(); }

std::optional<std::uint32_t> AttributeDef::value_by_name(std::string_view wanted) const {
  if (values_by_name.size() != values.size()) {
    for (const Value& value : values) {
      if (equal_ignoring_case(value.name, wanted)) return value.number;
    }
    return std::nullopt;
  }
  auto it = std::lower_bound(values_by_name.begin(), values_by_name.end(), wanted,
                             [this](std::uint32_t index, std::string_view key) {
                               return compare_ignoring_case(values[index].name, key) < 0;
                             });
  if (it == values_by_name.end() || !equal_ignoring_case(values[*it].name, wanted)) return std::nullopt;
  return values[*it].number;
}

std::optional<std::string_view> AttributeDef::name_of_value(std::uint32_t number) const {
  if (values_by_name.size() != values.size()) {  // Hand-made: not sorted by the Builder.
    for (const Value& value : values) {
      if (value.number == number) return value.name;
    }
    return std::nullopt;
  }
  auto it = std::lower_bound(values.begin(), values.end(), number,
                             [](const Value& value, std::uint32_t n) { return value.number < n; });
  if (it == values.end() || it->number != number) return std::nullopt;
  return it->name;
}

std::string DictionaryError::to_string() const {
  return fmt::format("{}:{}:{}: {}", file, line, column, message);
}

struct Dictionary::Tables {
  std::deque<AttributeDef> attributes;
  std::deque<VendorDef> vendors;
  std::deque<std::string> alias_names;  // Keys of by_name added by ALIAS.
  NameMap<AttributeDef> by_name;
  std::unordered_map<NumberKey, AttributeDef*, NumberKeyHash> by_number;
  NameMap<VendorDef> vendor_by_name;
  std::unordered_map<std::uint32_t, VendorDef*> vendor_by_number;
  // While building: VALUEs by the number they name (see attach_value).
  std::unordered_map<NumberKey, std::vector<AttributeDef::Value>, NumberKeyHash> values_by_number;
};

Dictionary::Dictionary(std::unique_ptr<Tables> tables) : tables_(std::move(tables)) {}
Dictionary::~Dictionary() = default;

std::shared_ptr<const Dictionary> Dictionary::builtin() {
  static const std::shared_ptr<const Dictionary> instance = [] {
    Builder builder;
    add_builtin_definitions(builder);
    auto built = builder.finish();
    RW_ASSERT(built.has_value());  // The built-in table is consistent (tested).
    return *built;
  }();
  return instance;
}

const AttributeDef* Dictionary::find(std::string_view name) const {
  auto it = tables_->by_name.find(name);
  return it == tables_->by_name.end() ? nullptr : it->second;
}

const AttributeDef* Dictionary::find(std::uint32_t vendor, std::uint32_t type) const {
  auto it = tables_->by_number.find(NumberKey{nullptr, vendor, type});
  return it == tables_->by_number.end() ? nullptr : it->second;
}

const AttributeDef* Dictionary::find_child(const AttributeDef& parent, std::uint32_t type) const {
  return find_evs_child(parent, parent.vendor, type);
}

const AttributeDef* Dictionary::find_evs_child(const AttributeDef& evs, std::uint32_t vendor,
                                               std::uint32_t type) const {
  auto it = tables_->by_number.find(NumberKey{&evs, vendor, type});
  return it == tables_->by_number.end() ? nullptr : it->second;
}

const VendorDef* Dictionary::find_vendor(std::string_view name) const {
  auto it = tables_->vendor_by_name.find(name);
  return it == tables_->vendor_by_name.end() ? nullptr : it->second;
}

const VendorDef* Dictionary::find_vendor(std::uint32_t number) const {
  auto it = tables_->vendor_by_number.find(number);
  return it == tables_->vendor_by_number.end() ? nullptr : it->second;
}

std::size_t Dictionary::attribute_count() const { return tables_->by_name.size(); }

// ---------------------------------------------------------------------------
// Builder

Dictionary::Builder::Builder() : tables_(std::make_unique<Tables>()) {}
Dictionary::Builder::~Builder() = default;

const AttributeDef* Dictionary::Builder::find(std::string_view name) const {
  auto it = tables_->by_name.find(name);
  return it == tables_->by_name.end() ? nullptr : it->second;
}

const AttributeDef* Dictionary::Builder::find_number(const AttributeDef* parent, std::uint32_t vendor,
                                                     std::uint32_t type) const {
  auto it = tables_->by_number.find(NumberKey{parent, vendor, type});
  return it == tables_->by_number.end() ? nullptr : it->second;
}

const VendorDef* Dictionary::Builder::find_vendor(std::string_view name) const {
  auto it = tables_->vendor_by_name.find(name);
  return it == tables_->vendor_by_name.end() ? nullptr : it->second;
}

const VendorDef* Dictionary::Builder::find_vendor(std::uint32_t number) const {
  auto it = tables_->vendor_by_number.find(number);
  return it == tables_->vendor_by_number.end() ? nullptr : it->second;
}

Result<const AttributeDef*, std::string> Dictionary::Builder::add_attribute(AttributeDef def) {
  if (def.vendor == 0 && def.parent == nullptr && def.type > 255) def.internal = true;
  if (auto it = tables_->by_name.find(def.name); it != tables_->by_name.end()) {
    AttributeDef* earlier = it->second;
    if (!same_definition(*earlier, def)) {
      return fail(fmt::format("attribute '{}' is already defined as {}, not {}", def.name, describe(*earlier),
                              describe(def)));
    }
    // Defining a name again takes its number back from any alias defined
    // in between, as in FreeRADIUS (dictionary.compat before rfc2865).
    tables_->by_number.insert_or_assign(key_of(*earlier), earlier);
    return earlier;
  }
  AttributeDef& stored = tables_->attributes.emplace_back(std::move(def));
  tables_->by_name.emplace(stored.name, &stored);
  // The latest definition of a number is the one found by number; earlier
  // names stay aliases, found by name (FreeRADIUS does the same).
  tables_->by_number.insert_or_assign(key_of(stored), &stored);
  return &stored;
}

Result<const VendorDef*, std::string> Dictionary::Builder::add_vendor(VendorDef vendor) {
  if (auto it = tables_->vendor_by_name.find(vendor.name); it != tables_->vendor_by_name.end()) {
    const VendorDef& earlier = *it->second;
    if (earlier.number == vendor.number && earlier.type_width == vendor.type_width &&
        earlier.length_width == vendor.length_width && earlier.continuation == vendor.continuation) {
      return &earlier;
    }
    return fail(fmt::format("vendor '{}' is already defined with number {} format={},{}", vendor.name,
                            earlier.number, earlier.type_width, earlier.length_width));
  }
  if (auto it = tables_->vendor_by_number.find(vendor.number); it != tables_->vendor_by_number.end()) {
    const VendorDef& earlier = *it->second;
    if (earlier.type_width != vendor.type_width || earlier.length_width != vendor.length_width) {
      return fail(fmt::format("vendor {} is already defined as '{}' with format={},{}", vendor.number,
                              earlier.name, earlier.type_width, earlier.length_width));
    }
  }
  VendorDef& stored = tables_->vendors.emplace_back(std::move(vendor));
  tables_->vendor_by_name.emplace(stored.name, &stored);
  tables_->vendor_by_number.emplace(stored.number, &stored);
  return &stored;
}

Result<void, std::string> Dictionary::Builder::add_alias(std::string_view alias, std::string_view target) {
  auto it = tables_->by_name.find(target);
  if (it == tables_->by_name.end()) return fail(fmt::format("ALIAS of unknown attribute '{}'", target));
  AttributeDef* def = it->second;
  if (auto existing = tables_->by_name.find(alias); existing != tables_->by_name.end()) {
    if (existing->second == def) return {};
    return fail(fmt::format("ALIAS '{}' is already the name of another attribute", alias));
  }
  const std::string& stored = tables_->alias_names.emplace_back(alias);
  tables_->by_name.emplace(stored, def);
  return {};
}

Result<void, std::string> Dictionary::Builder::add_value(std::string_view attribute, std::string_view name,
                                                         std::uint32_t number, SourcePosition where) {
  auto it = tables_->by_name.find(attribute);
  if (it == tables_->by_name.end()) {
    pending_values_.push_back(PendingValue{std::string(attribute), std::string(name), number,
                                           std::string(where.file), where.line, where.column});
    return {};
  }
  return attach_value(*it->second, name, number);
}

// VALUEs belong to the number, as in FreeRADIUS: a VALUE named through one
// alias is shared by every integer attribute with that number.
Result<void, std::string> Dictionary::Builder::attach_value(const AttributeDef& named, std::string_view name,
                                                            std::uint32_t number) {
  const auto limit = value_limit(named.data_type);
  // FreeRADIUS accepts VALUEs on a few octets attributes
  // (CableLabs-Event-Message); they name nothing a value could be parsed
  // from, so they are ignored.
  if (!limit) return {};
  if (number > *limit) {
    return fail(fmt::format("VALUE {} is too large for attribute '{}' of type {}", number, named.name,
                            to_string(named.data_type)));
  }
  std::vector<AttributeDef::Value>& values = tables_->values_by_number[key_of(named)];
  for (const AttributeDef::Value& value : values) {
    if (!equal_ignoring_case(value.name, name)) continue;
    if (value.number == number) return {};  // FreeRADIUS files repeat some VALUEs.
    return fail(
        fmt::format("VALUE '{}' of attribute '{}' is already defined as {}", name, named.name, value.number));
  }
  values.push_back(AttributeDef::Value{std::string(name), number});
  return {};
}

Result<std::shared_ptr<const Dictionary>, DictionaryError> Dictionary::Builder::finish() {
  for (const PendingValue& pending : pending_values_) {
    auto it = tables_->by_name.find(pending.attribute);
    if (it == tables_->by_name.end()) {
      return fail(DictionaryError{pending.file, pending.line, pending.column,
                                  fmt::format("VALUE for unknown attribute '{}'", pending.attribute)});
    }
    auto attached = attach_value(*it->second, pending.name, pending.number);
    if (!attached) {
      return fail(DictionaryError{pending.file, pending.line, pending.column, std::move(attached.error())});
    }
  }
  pending_values_.clear();
  for (AttributeDef& def : tables_->attributes) {
    const auto limit = value_limit(def.data_type);
    auto shared = tables_->values_by_number.find(key_of(def));
    if (!limit || shared == tables_->values_by_number.end()) continue;
    for (const AttributeDef::Value& value : shared->second) {
      if (value.number <= *limit) def.values.push_back(value);
    }
    // Stable: the first name defined for a number stays first, so it is the
    // one format_value prints.
    std::stable_sort(def.values.begin(), def.values.end(),
                     [](const auto& a, const auto& b) { return a.number < b.number; });
    def.values_by_name.resize(def.values.size());
    for (std::uint32_t i = 0; i < def.values.size(); ++i) def.values_by_name[i] = i;
    std::stable_sort(def.values_by_name.begin(), def.values_by_name.end(),
                     [&def](std::uint32_t a, std::uint32_t b) {
                       return compare_ignoring_case(def.values[a].name, def.values[b].name) < 0;
                     });
  }
  tables_->values_by_number.clear();
  return std::shared_ptr<const Dictionary>(new Dictionary(std::move(tables_)));
}

}  // namespace rw::radius
