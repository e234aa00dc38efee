// The users-file policy; see users_policy.h.
#include "auth/users_policy.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace rw::auth {

using config::UsersItem;
using config::UsersOperator;

namespace {

bool same_attribute(const radius::AttributeDef& a, const radius::AttributeDef& b) {
  return &a == &b || (a.vendor == b.vendor && a.type == b.type && a.parent == b.parent && a.name == b.name);
}

}  // namespace

std::optional<Bytes> RequestAttributeList::find(const radius::AttributeDef& def, std::size_t index) const {
  for (const RequestAttribute& attribute : attributes_) {
    if (attribute.def == nullptr || !same_attribute(*attribute.def, def)) continue;
    if (index == 0) return attribute.value;
    --index;
  }
  return std::nullopt;
}

std::string_view to_string(UsersPolicyError error) {
  switch (error) {
    case UsersPolicyError::kControlListFull:
      return "control list full";
    case UsersPolicyError::kReplyListFull:
      return "reply list full";
  }
  return "?";
}

namespace {

const UsersItem* find_item(std::span<const UsersItem* const> items, const radius::AttributeDef& def) {
  for (const UsersItem* item : items) {
    if (same_attribute(*item->def, def)) return item;
  }
  return nullptr;
}

}  // namespace

const UsersItem* UsersDecision::find_control(const radius::AttributeDef& def) const {
  return find_item(control(), def);
}

const UsersItem* UsersDecision::find_reply(const radius::AttributeDef& def) const {
  return find_item(reply(), def);
}

namespace {

// Big-endian unsigned of 1 to 8 bytes.
std::optional<std::uint64_t> as_unsigned(Bytes value) {
  if (value.empty() || value.size() > 8) return std::nullopt;
  std::uint64_t out = 0;
  for (std::uint8_t byte : value) out = out << 8 | byte;
  return out;
}

template <class T>
int three_way(T a, T b) {
  return a < b ? -1 : (a > b ? 1 : 0);
}

// Orders the request's value against the item's. nullopt when the request
// value is malformed for the type (such a value satisfies no comparison).
std::optional<int> compare_values(const radius::AttributeDef& def, Bytes request, Bytes item) {
  using radius::DataType;
  switch (def.data_type) {
    case DataType::kByte:
    case DataType::kShort:
    case DataType::kInteger:
    case DataType::kInteger64:
    case DataType::kDate:
    case DataType::kIpAddr: {
      // RFC 8044 §3: fixed-size big-endian numbers; addresses order as such.
      if (request.size() != item.size()) return std::nullopt;
      auto a = as_unsigned(request);
      auto b = as_unsigned(item);
      if (!a || !b) return std::nullopt;
      return three_way(*a, *b);
    }
    case DataType::kSigned: {
      if (request.size() != 4 || item.size() != 4) return std::nullopt;
      return three_way(static_cast<std::int32_t>(*as_unsigned(request)),
                       static_cast<std::int32_t>(*as_unsigned(item)));
    }
    default: {
      std::size_t common = std::min(request.size(), item.size());
      int order = common == 0 ? 0 : std::memcmp(request.data(), item.data(), common);
      if (order != 0) return order < 0 ? -1 : 1;
      return three_way(request.size(), item.size());
    }
  }
}

bool regex_matches(const UsersItem& item, Bytes value) {
  using radius::DataType;
  if (item.def->data_type == DataType::kString || item.def->data_type == DataType::kOctets) {
    return item.regex->matches(value);
  }
  // FreeRADIUS matches the printed form of non-text values (10.0.0.1, Framed-User).
  std::string text = radius::format_value(*item.def, value);
  return item.regex->matches(as_bytes(text));
}

bool holds_for(const UsersItem& item, Bytes value) {
  switch (item.op) {
    case UsersOperator::kRegexMatch:
      return regex_matches(item, value);
    case UsersOperator::kRegexNoMatch:
      return !regex_matches(item, value);
    default:
      break;
  }
  std::optional<int> order = compare_values(*item.def, value, item.bytes());
  if (!order) return false;
  switch (item.op) {
    case UsersOperator::kEqual:
      return *order == 0;
    case UsersOperator::kNotEqual:
      return *order != 0;
    case UsersOperator::kLess:
      return *order < 0;
    case UsersOperator::kLessEqual:
      return *order <= 0;
    case UsersOperator::kGreater:
      return *order > 0;
    case UsersOperator::kGreaterEqual:
      return *order >= 0;
    default:
      return false;
  }
}

bool check_holds(const UsersItem& item, const RequestAttributes& request) {
  if (item.op == UsersOperator::kPresent) return request.find(*item.def, 0).has_value();
  if (item.op == UsersOperator::kAbsent) return !request.find(*item.def, 0).has_value();
  // FreeRADIUS tries every instance of the attribute until one satisfies the
  // check; with none present, only !* holds.
  for (std::size_t index = 0;; ++index) {
    std::optional<Bytes> value = request.find(*item.def, index);
    if (!value) return false;
    if (holds_for(item, *value)) return true;
  }
}

bool entry_applies(const config::UserEntry& entry, const RequestAttributes& request) {
  return std::all_of(entry.check.begin(), entry.check.end(), [&](const UsersItem& item) {
    return !config::is_comparison(item.op) || check_holds(item, request);
  });
}

// Adds `item` to a fixed list with the operator's meaning. Returns false
// when the list is full.
template <std::size_t N>
bool add_to_list(std::array<const UsersItem*, N>& list, std::size_t& size, const UsersItem* item) {
  auto same = [&](const UsersItem* other) {
    return other->tag == item->tag && same_attribute(*other->def, *item->def);
  };
  auto begin = list.begin();
  auto end = list.begin() + static_cast<std::ptrdiff_t>(size);
  auto first = std::find_if(begin, end, same);
  switch (item->op) {
    case UsersOperator::kAssign:
      if (first != end) return true;
      break;
    case UsersOperator::kSet:
      if (first != end) {
        *first = item;
        auto kept = std::remove_if(first + 1, end, same);
        size = static_cast<std::size_t>(kept - begin);
        return true;
      }
      break;
    default:
      break;
  }
  if (size >= N) return false;
  list[size++] = item;
  return true;
}

}  // namespace

Result<void, UsersPolicyError> evaluate_users(const config::UsersFile& users, std::string_view user_name,
                                              const RequestAttributes& request, UsersDecision& decision) {
  decision.clear();
  std::span<const config::UserEntry> entries = users.entries();
  std::span<const std::uint32_t> named = users.entries_named(user_name);
  std::span<const std::uint32_t> defaults = users.default_entries();
  std::size_t n = 0;
  std::size_t d = 0;
  // Both index lists are in file order; merging them walks the file's order.
  while (n < named.size() || d < defaults.size()) {
    bool take_named = d >= defaults.size() || (n < named.size() && named[n] < defaults[d]);
    std::uint32_t index = take_named ? named[n++] : defaults[d++];
    const config::UserEntry& entry = entries[index];
    if (!entry_applies(entry, request)) continue;
    if (decision.applied_count_ < UsersDecision::kAppliedMax)
      decision.applied_[decision.applied_count_] = index;
    ++decision.applied_count_;
    if (!entry.is_default) decision.named_applied_ = true;
    for (const UsersItem& item : entry.check) {
      if (config::is_comparison(item.op)) continue;
      if (!add_to_list(decision.control_, decision.control_size_, &item)) {
        return fail(UsersPolicyError::kControlListFull);
      }
    }
    for (const UsersItem& item : entry.reply) {
      if (!add_to_list(decision.reply_, decision.reply_size_, &item))
        return fail(UsersPolicyError::kReplyListFull);
    }
    if (!entry.fall_through) break;
  }
  return {};
}

}  // namespace rw::auth
