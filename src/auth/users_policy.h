// The FreeRADIUS `files` module semantics over a parsed users file: which
// entries apply to a request, and the control items (the credentials and
// Auth-Type to authenticate with) and reply items they produce. Pure: no
// I/O, no clock, no allocation for requests whose regex checks are on text
// attributes. docs/users_and_clients.md describes the semantics.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "config/users_file.h"
#include "radius/dictionary.h"

namespace rw::auth {

// The request's attributes as the policy sees them; the gateway adapts its
// decoded packet to this.
class RequestAttributes {
 public:
  virtual ~RequestAttributes() = default;

  // The value of the `index`-th instance (0-based, in packet order) of
  // `def` in the request, or nullopt when it has fewer. Values are untagged
  // and decrypted where the comparison needs it (User-Password is never
  // compared: the users file reader refuses it on the check line).
  [[nodiscard]] virtual std::optional<Bytes> find(const radius::AttributeDef& def,
                                                  std::size_t index) const = 0;
};

// One attribute of a decoded request, borrowed.
struct RequestAttribute {
  const radius::AttributeDef* def = nullptr;
  Bytes value;
};

// RequestAttributes over a borrowed list of (definition, value) pairs. Two
// definitions are the same attribute when they are the same object or have
// the same vendor, number and parent, so lists built from another
// Dictionary instance still match.
class RequestAttributeList final : public RequestAttributes {
 public:
  explicit RequestAttributeList(std::span<const RequestAttribute> attributes) : attributes_(attributes) {}
  [[nodiscard]] std::optional<Bytes> find(const radius::AttributeDef& def, std::size_t index) const override;

 private:
  std::span<const RequestAttribute> attributes_;
};

// Why evaluate_users could not finish. The caller rejects the request: a
// partial control or reply list could grant the wrong thing.
enum class UsersPolicyError : std::uint8_t {
  kControlListFull,  // More than UsersDecision::kControlMax control items.
  kReplyListFull,    // More than UsersDecision::kReplyMax reply items.
};
std::string_view to_string(UsersPolicyError error);

// The outcome of evaluate_users, in caller-owned fixed storage that is
// reused from request to request. Items point into the UsersFile, which must
// outlive the use of the decision.
class UsersDecision {
 public:
  static constexpr std::size_t kControlMax = 64;
  static constexpr std::size_t kReplyMax = 128;
  static constexpr std::size_t kAppliedMax = 32;  // Applied entries remembered for the trace.

  // Whether at least one entry applied (FreeRADIUS: the module returned ok
  // rather than noop).
  [[nodiscard]] bool matched() const { return applied_count_ > 0; }
  // Whether an entry named after the user applied, not only DEFAULT entries:
  // MAB accepts a MAC only when the operator listed it
  // (docs/authentication.md "MAB").
  [[nodiscard]] bool named_matched() const { return named_applied_; }
  // Control items: Cleartext-Password, NT-Password, Crypt-Password,
  // Auth-Type, Simultaneous-Use, ... after :=, = and += were applied.
  [[nodiscard]] std::span<const config::UsersItem* const> control() const {
    return {control_.data(), control_size_};
  }
  // Reply items in the order they go into the reply.
  [[nodiscard]] std::span<const config::UsersItem* const> reply() const {
    return {reply_.data(), reply_size_};
  }
  // Indices into UsersFile::entries() of the applied entries, in order (the
  // first kAppliedMax of them), and how many applied in all.
  [[nodiscard]] std::span<const std::uint32_t> applied_entries() const {
    return {applied_.data(), std::min(applied_count_, kAppliedMax)};
  }
  [[nodiscard]] std::size_t applied_count() const { return applied_count_; }

  // The first control item for `def` (any tag), or nullptr.
  [[nodiscard]] const config::UsersItem* find_control(const radius::AttributeDef& def) const;
  // The first reply item for `def` (any tag), or nullptr.
  [[nodiscard]] const config::UsersItem* find_reply(const radius::AttributeDef& def) const;

  void clear() {
    control_size_ = 0;
    reply_size_ = 0;
    applied_count_ = 0;
    named_applied_ = false;
  }
  // Drops the reply items only: a reject that no explicit policy asked for
  // carries none of the matched user's items (docs/security.md
  // "Authentication replies").
  void clear_reply() { reply_size_ = 0; }

 private:
  friend Result<void, UsersPolicyError> evaluate_users(const config::UsersFile&, std::string_view,
                                                       const RequestAttributes&, UsersDecision&);

  std::array<const config::UsersItem*, kControlMax> control_{};
  std::array<const config::UsersItem*, kReplyMax> reply_{};
  std::array<std::uint32_t, kAppliedMax> applied_{};
  std::size_t control_size_ = 0;
  std::size_t reply_size_ = 0;
  std::size_t applied_count_ = 0;
  bool named_applied_ = false;
};

// Applies `users` to a request for `user_name` (the User-Name as the
// gateway chose to match it, e.g. after stripping a realm), FreeRADIUS
// `files` semantics:
//  - Entries named `user_name` (case-sensitive) and DEFAULT entries are
//    walked in file order; the index makes this O(those entries).
//  - An entry applies when every comparison on its check line holds against
//    `request`: ==, !=, <, <=, >, >= (numbers numerically, addresses and
//    dates as numbers, text and octets byte-wise), =~ and !~ (POSIX extended
//    regex), =* (present) and !* (absent). A comparison holds when any
//    instance of the attribute satisfies it; an absent attribute satisfies
//    only !*.
//  - An applied entry's :=, = and += check items go to the control list and
//    its reply items to the reply list: := replaces every item of the same
//    attribute and tag (in place of the first), = adds only when there is
//    none, += always adds.
//  - The walk stops after an applied entry unless it has Fall-Through = Yes.
// `decision` is cleared first. Allocates nothing, except that a regex test
// on a non-text attribute formats its value as text first.
[[nodiscard]] Result<void, UsersPolicyError> evaluate_users(const config::UsersFile& users,
                                                            std::string_view user_name,
                                                            const RequestAttributes& request,
                                                            UsersDecision& decision);

}  // namespace rw::auth
