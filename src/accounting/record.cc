// Records, record keys and FreeRADIUS-compatible session keys
// (docs/wire_formats.md "Record key", docs/accounting.md "Session key").
#include "accounting/record.h"

// SHA256_Init/Update/Final are deprecated in OpenSSL 3 (see compute_record_key).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <openssl/sha.h>

#include <algorithm>
#include <bitset>
#include <charconv>

#include "base/assert.h"
#include "radius/md5.h"

namespace rw::accounting {

namespace {

constexpr std::uint8_t kRecordKeyVersion = 1;
// The longest text radius::append_value prints for one attribute: an
// octets value of 253 bytes as "0x" and hex digits; every other type prints
// shorter (a longer one would only grow the session text's buffer once).
constexpr std::size_t kValueTextMax = 2 + 2 * 253;
constexpr std::size_t kMaxAttributes = radius::kMaxPacketLength / 2;

// RFC 2866 §5.2 / RFC 2865 §5.33 / RFC 3579 §3.2: attributes that differ
// between a NAS's sends of one event, or that hop-by-hop parties change.
bool excluded_from_key(std::uint8_t type) {
  return type == radius::attr::kAcctDelayTime || type == radius::attr::kMessageAuthenticator ||
         type == radius::attr::kProxyState;
}

// RFC 3579 §3.2 (Message-Authenticator) and RFC 2865 §5.33 (Proxy-State)
// belong to one hop, not to the event.
bool excluded_from_record(std::uint8_t type) {
  return type == radius::attr::kMessageAuthenticator || type == radius::attr::kProxyState;
}

std::string hex_of(Bytes bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

bool is_hex_digit(std::uint8_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The first attribute of each wanted standard type, noted in one walk
// (each what Packet::find returns), instead of a walk per lookup: the
// session text looks up one or more attributes per recipe part.
class FirstOfEach {
 public:
  FirstOfEach(const radius::Packet& request, const std::bitset<256>& wanted) : wire_(request.wire()) {
    for (const radius::Attribute& attribute : request.attributes()) {
      if (!wanted.test(attribute.type) || found_.test(attribute.type)) continue;
      found_.set(attribute.type);
      offsets_[attribute.type] = static_cast<std::uint16_t>(attribute.offset);
    }
  }
  [[nodiscard]] std::optional<Bytes> find(std::uint8_t type) const {
    if (!found_.test(type)) return std::nullopt;
    const std::size_t at = offsets_[type];
    return wire_.subspan(at + 2, wire_[at + 1] - 2u);
  }

 private:
  Bytes wire_;
  std::bitset<256> found_;
  // Where found_ is set; the rest is never read, so not cleared.
  std::array<std::uint16_t, 256> offsets_;
};

// The value of the first attribute `def` names in `request`: standard, or a
// Vendor-Specific sub-attribute in the 1,1 format.
std::optional<Bytes> find_value(const radius::Packet& request, const FirstOfEach& first,
                                const radius::AttributeDef& def) {
  if (def.vendor == 0) return first.find(static_cast<std::uint8_t>(def.type));
  return request.find_vendor(def.vendor, static_cast<std::uint8_t>(def.type));
}

// The Class shortcut of acct_unique: the 32 hex digits after the prefix.
std::optional<Bytes> class_digits(const FirstOfEach& first, std::string_view prefix) {
  if (prefix.empty()) return std::nullopt;
  auto found = first.find(radius::attr::kClass);
  if (!found) return std::nullopt;
  Bytes value = *found;
  if (value.size() < prefix.size() + 32) return std::nullopt;
  if (!std::equal(prefix.begin(), prefix.end(), value.begin())) return std::nullopt;
  Bytes digits = value.subspan(prefix.size(), 32);
  if (!std::all_of(digits.begin(), digits.end(), is_hex_digit)) return std::nullopt;
  return digits;
}

SessionKey md5_key(std::string_view text) {
  // The md5 xlat hashes a C string: the text ends at its first NUL.
  text = text.substr(0, text.find('\0'));
  SessionKey key;
  key.bytes = radius::Md5::of(as_bytes(text));
  return key;
}

const radius::AttributeDef* resolve(std::string_view name, const radius::Dictionary& dictionary) {
  if (const auto* def = dictionary.find(name)) return def;
  unsigned number = 0;
  auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), number);
  if (error == std::errc() && end == name.data() + name.size() && number >= 1 && number <= 255) {
    return dictionary.find(0, number);
  }
  return nullptr;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

}  // namespace

std::string Digest16::hex() const { return hex_of(bytes); }

std::optional<Bytes> Record::find(std::uint8_t type) const {
  for (const radius::Attribute& attribute : attribute_range()) {
    if (attribute.type == type) return attribute.value;
  }
  return std::nullopt;
}

std::string_view to_string(RecordError error) {
  switch (error) {
    case RecordError::kNotAccountingRequest:
      return "not an Accounting-Request";
    case RecordError::kNoStatusType:
      return "no Acct-Status-Type";
    case RecordError::kNoSessionId:
      return "no Acct-Session-Id";
    case RecordError::kClientNameTooLong:
      return "client shortname too long";
  }
  return "unknown";
}

KeyRecipe KeyRecipe::freeradius_default() {
  auto recipe =
      parse("User-Name,Acct-Session-Id,NAS-IPv6-Address|NAS-IP-Address,NAS-Identifier,NAS-Port-Id,NAS-Port",
            "ai:", radius::Dictionary::builtin());
  RW_ASSERT(recipe.has_value());
  return std::move(*recipe);
}

Result<KeyRecipe, std::string> KeyRecipe::parse(std::string_view spec, std::string_view class_prefix,
                                                std::shared_ptr<const radius::Dictionary> dictionary) {
  RW_ASSERT(dictionary != nullptr);
  KeyRecipe recipe;
  while (true) {
    const std::size_t comma = spec.find(',');
    std::string_view part = spec.substr(0, comma);
    std::vector<const radius::AttributeDef*> alternatives;
    while (true) {
      const std::size_t bar = part.find('|');
      const std::string_view name = trim(part.substr(0, bar));
      const radius::AttributeDef* def = resolve(name, *dictionary);
      if (def == nullptr)
        return fail("unknown attribute '" + std::string(name) + "' in the session key recipe");
      const radius::VendorDef* vendor = def->vendor == 0 ? nullptr : dictionary->find_vendor(def->vendor);
      // Packet::find_vendor reads the 1,1 sub-attribute format only.
      const bool one_one = vendor == nullptr || (vendor->type_width == 1 && vendor->length_width == 1);
      if (def->parent != nullptr || def->internal || def->type > 255 || !one_one) {
        return fail("attribute '" + std::string(name) + "' cannot be part of the session key recipe");
      }
      alternatives.push_back(def);
      if (bar == std::string_view::npos) break;
      part.remove_prefix(bar + 1);
    }
    recipe.parts_.push_back(std::move(alternatives));
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  recipe.class_prefix_ = std::string(class_prefix);
  if (!class_prefix.empty()) recipe.wanted_.set(radius::attr::kClass);
  recipe.wanted_.set(radius::attr::kAcctSessionId);
  for (const auto& alternatives : recipe.parts_) {
    for (const radius::AttributeDef* def : alternatives) {
      if (def->vendor == 0) recipe.wanted_.set(def->type);
    }
  }
  recipe.dictionary_ = std::move(dictionary);
  return recipe;
}

void KeyRecipe::append_session_text(std::string& text, const radius::Packet& request) const {
  const FirstOfEach first(request, wanted_);
  if (auto digits = class_digits(first, class_prefix_)) {
    text += as_chars(*digits);
    text.push_back(',');
    if (auto session_id = first.find(radius::attr::kAcctSessionId)) text += as_chars(*session_id);
    return;
  }
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    if (i > 0) text.push_back(',');
    // %{A:-B}: the first alternative present; absent attributes print nothing.
    for (const radius::AttributeDef* def : parts_[i]) {
      if (auto value = find_value(request, first, *def)) {
        radius::append_value(text, *def, *value);
        break;
      }
    }
  }
}

std::string KeyRecipe::session_text(const radius::Packet& request) const {
  std::string text;
  append_session_text(text, request);
  return text;
}

SessionKey KeyRecipe::session_key(const radius::Packet& request) const {
  // One buffer per thread, kept: the gateway computes a session key per
  // Accounting-Request, on every worker, without allocating (issue 15).
  thread_local std::string text;
  text.clear();
  // Sized once for the longest text this recipe can print, so that a
  // longer request later does not grow it on the packet path.
  const std::size_t longest = class_prefix_.size() + parts_.size() * (kValueTextMax + 1) + 34 + 253;
  if (text.capacity() < longest) text.reserve(longest);
  append_session_text(text, request);
  return md5_key(text);
}

RecordKey compute_record_key(Bytes attributes, std::string_view client) {
  RW_ASSERT(client.size() <= kClientNameMax);
  // Offsets of the kept attributes; left uninitialised: this runs once per
  // record and zeroing it would cost more than the hash.
  std::array<std::uint16_t, kMaxAttributes> kept;
  std::size_t count = 0;
  for (const radius::Attribute& attribute : radius::AttributeRange(attributes, 0, attributes.size())) {
    if (excluded_from_key(attribute.type)) continue;
    RW_ASSERT(count < kept.size());
    // Order between types does not name the event; order within a type does
    // (RFC 2865 §5): an insertion sort by type, which is stable and needs
    // no allocation (requests carry a few dozen attributes).
    std::size_t at = count++;
    while (at > 0 && attributes[kept[at - 1]] > attribute.type) {
      kept[at] = kept[at - 1];
      --at;
    }
    kept[at] = static_cast<std::uint16_t>(attribute.offset);
  }
  // The low-level streaming calls, deprecated in OpenSSL 3 but present:
  // the one-shot SHA256() fetches the algorithm through EVP on every call
  // (a read lock, a reference taken and dropped), which cost more than the
  // hash of a 200-octet request (docs/accounting.md "Gateway accounting
  // path"). The bytes hashed are unchanged: version, client, kept TLVs.
  SHA256_CTX context;
  SHA256_Init(&context);
  const std::array<std::uint8_t, 2> head{kRecordKeyVersion, static_cast<std::uint8_t>(client.size())};
  SHA256_Update(&context, head.data(), head.size());
  SHA256_Update(&context, client.data(), client.size());
  for (std::size_t i = 0; i < count; ++i) {
    SHA256_Update(&context, attributes.data() + kept[i], attributes[kept[i] + 1u]);
  }
  std::array<std::uint8_t, SHA256_DIGEST_LENGTH> digest{};
  SHA256_Final(digest.data(), &context);
  RecordKey key;
  std::copy_n(digest.begin(), kKeyLength, key.bytes.begin());
  return key;
}

std::optional<RecordError> fill_record(Record& record, const radius::Packet& request,
                                       std::string_view client_shortname, std::int64_t received_unix_ms,
                                       const KeyRecipe& recipe) {
  if (request.code() != radius::Code::kAccountingRequest) return RecordError::kNotAccountingRequest;
  // One walk copies the kept attributes, whole TLVs (the parser has checked
  // each length octet), and notes the first of each attribute the record
  // reads — what Packet::find would return — instead of a walk per lookup.
  const Bytes wire = request.wire();
  std::optional<Bytes> status_type;
  std::optional<Bytes> session_id;
  std::optional<Bytes> event_timestamp;
  std::optional<Bytes> delay_time;
  record.attributes.clear();
  record.attributes.reserve(request.attribute_bytes().size());
  for (const radius::Attribute& attribute : request.attributes()) {
    std::optional<Bytes>* noted = nullptr;
    switch (attribute.type) {
      case radius::attr::kAcctStatusType:
        noted = &status_type;
        break;
      case radius::attr::kAcctSessionId:
        noted = &session_id;
        break;
      case radius::attr::kEventTimestamp:
        noted = &event_timestamp;
        break;
      case radius::attr::kAcctDelayTime:
        noted = &delay_time;
        break;
      default:
        break;
    }
    if (noted != nullptr && !noted->has_value()) *noted = attribute.value;
    if (excluded_from_record(attribute.type)) continue;
    const Bytes tlv = wire.subspan(attribute.offset, attribute.value.size() + 2);
    record.attributes.insert(record.attributes.end(), tlv.begin(), tlv.end());
  }
  // As Packet::find_u32: the first one, when it is 4 octets.
  const auto u32 = [](const std::optional<Bytes>& value) -> std::optional<std::uint32_t> {
    return value ? radius::integer_value(*value) : std::nullopt;
  };
  if (!u32(status_type)) return RecordError::kNoStatusType;
  if (!session_id || session_id->empty()) return RecordError::kNoSessionId;
  if (client_shortname.size() > kClientNameMax) return RecordError::kClientNameTooLong;

  record.status_type = *u32(status_type);
  record.received_unix_ms = received_unix_ms;
  record.client.assign(client_shortname);
  if (auto timestamp = u32(event_timestamp)) {
    record.event_unix_ms = static_cast<std::int64_t>(*timestamp) * 1000;
  } else {
    const std::int64_t delay_s = u32(delay_time).value_or(0);
    record.event_unix_ms = minus_ms(received_unix_ms, delay_s * 1000);
  }
  record.key = compute_record_key(record.attributes, record.client);
  record.session = recipe.session_key(request);
  return std::nullopt;
}

Result<Record, RecordError> make_record(const radius::Packet& request, std::string_view client_shortname,
                                        std::int64_t received_unix_ms, const KeyRecipe& recipe) {
  Record record;
  if (auto error = fill_record(record, request, client_shortname, received_unix_ms, recipe))
    return fail(*error);
  return record;
}

namespace {

void describe_vendor(Bytes value, const radius::Dictionary& dictionary,
                     std::vector<std::pair<std::string, std::string>>& out) {
  auto vsa = radius::split_vendor_specific(value);
  const radius::VendorDef* vendor = vsa ? dictionary.find_vendor(vsa->vendor) : nullptr;
  const bool one_one = vendor == nullptr || (vendor->type_width == 1 && vendor->length_width == 1);
  // Walk the 1,1 sub-attributes; any other layout is printed whole.
  bool well_formed = vsa.has_value() && one_one;
  if (well_formed) {
    Bytes body = vsa->body;
    std::size_t at = 0;
    while (at < body.size()) {
      if (body.size() - at < 2 || body[at + 1] < 2 || body[at + 1] > body.size() - at) {
        well_formed = false;
        break;
      }
      at += body[at + 1];
    }
  }
  if (!well_formed) {
    const radius::AttributeDef* def = dictionary.find(0, radius::attr::kVendorSpecific);
    out.emplace_back(def ? def->name : "Vendor-Specific", "0x" + hex_of(value));
    return;
  }
  Bytes body = vsa->body;
  for (std::size_t at = 0; at < body.size(); at += body[at + 1]) {
    const std::uint8_t type = body[at];
    Bytes sub = body.subspan(at + 2, body[at + 1] - 2u);
    if (const radius::AttributeDef* def = dictionary.find(vsa->vendor, type)) {
      out.emplace_back(def->name, radius::format_value(*def, sub));
    } else {
      out.emplace_back("Vendor-" + std::to_string(vsa->vendor) + "-Attr-" + std::to_string(type),
                       "0x" + hex_of(sub));
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> describe(const Record& record,
                                                          const radius::Dictionary& dictionary) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const radius::Attribute& attribute : record.attribute_range()) {
    if (attribute.type == radius::attr::kVendorSpecific) {
      describe_vendor(attribute.value, dictionary, out);
      continue;
    }
    if (const radius::AttributeDef* def = dictionary.find(0, attribute.type)) {
      out.emplace_back(def->name, radius::format_value(*def, attribute.value));
    } else {
      out.emplace_back("Attr-" + std::to_string(attribute.type), "0x" + hex_of(attribute.value));
    }
  }
  return out;
}

}  // namespace rw::accounting

#pragma GCC diagnostic pop
