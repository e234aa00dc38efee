// decide_access: the method is chosen by the attributes the NAS sent, the
// way FreeRADIUS's default site does (User-Password: PAP; CHAP-Password:
// CHAP; MS-CHAP-Challenge with MS-CHAP2-Response or MS-CHAP-Response:
// MS-CHAPv2 or v1). Auth-Type := Accept or Reject from the users file wins.
#include "gateway/access.h"

#include <algorithm>
#include <array>

#include "auth/chap.h"
#include "auth/mab.h"
#include "auth/password.h"
#include "gateway/authorize.h"

namespace rw::gateway {
namespace {

namespace attr = radius::attr;
namespace ms = radius::ms;

// Looks request attributes up for the users policy, straight from the
// packet: no copy, no allocation.
class PacketAttributes final : public auth::RequestAttributes {
 public:
  explicit PacketAttributes(const radius::Packet& packet) : packet_(packet) {}

  [[nodiscard]] std::optional<Bytes> find(const radius::AttributeDef& def, std::size_t index) const override {
    if (def.internal || def.type > 255) return std::nullopt;
    std::size_t seen = 0;
    for (const radius::Attribute attribute : packet_.attributes()) {
      if (def.vendor == 0) {
        if (attribute.type == def.type && seen++ == index) return attribute.value;
        continue;
      }
      if (attribute.type != attr::kVendorSpecific) continue;
      const auto vsa = radius::split_vendor_specific(attribute.value);
      if (!vsa || vsa->vendor != def.vendor) continue;
      ByteReader reader(vsa->body);
      while (reader.remaining() >= 2) {
        std::uint8_t type = 0;
        std::uint8_t length = 0;
        if (!reader.read_u8(type) || !reader.read_u8(length) || length < 2) break;
        const Bytes value = reader.read_bytes(length - 2u);
        if (reader.failed()) break;
        if (type == def.type && seen++ == index) return value;
      }
    }
    return std::nullopt;
  }

 private:
  const radius::Packet& packet_;
};

std::uint32_t u32_of(Bytes value) {
  std::uint32_t out = 0;
  ByteReader reader(value);
  return reader.read_u32(out) ? out : 0;
}

// The known good password from the users policy's control items, parsed at
// load (GatewayState): Cleartext-Password first, since CHAP and MS-CHAP need
// it or its NT hash, then the first other password item in control order.
const auth::Credential* known_good(const GatewayState& state, const auth::UserCredentials& credentials,
                                   const auth::UsersDecision& decision) {
  if (const radius::AttributeDef* cleartext = state.known().cleartext_password) {
    if (const config::UsersItem* item = decision.find_control(*cleartext)) {
      if (const auth::Credential* credential = credentials.find(*item)) return credential;
    }
  }
  for (const config::UsersItem* item : decision.control()) {
    if (const auth::Credential* credential = credentials.find(*item)) return credential;
  }
  return nullptr;
}

// A reject nobody configured carries none of the matched user's reply items:
// a Reply-Message that only known users get would tell who exists
// (docs/security.md "Authentication replies").
void reject(AccessOutcome& outcome, RejectReason reason) {
  outcome.accepted = false;
  outcome.reject = reason;
  outcome.users.clear_reply();
}

// A reject the users policy asked for (Auth-Type := Reject) keeps its
// Reply-Message, as FreeRADIUS sends it.
void explicit_reject(AccessOutcome& outcome, RejectReason reason) {
  outcome.accepted = false;
  outcome.reject = reason;
}

// Every rejected MS-CHAP request gets the same MS-CHAP-Error, whether the
// user is unknown, has no NT hash, or sent a wrong response: the error is
// built from the request alone (RFC 2759 §6, RFC 2433 Appendix A).
void add_ms_chap_error(const radius::Packet& request, RandomSource& random, AccessOutcome& outcome) {
  const auto challenge = request.find_vendor(radius::kVendorMicrosoft, ms::kChapChallenge);
  if (!challenge) return;
  if (const auto response = request.find_vendor(radius::kVendorMicrosoft, ms::kChap2Response)) {
    outcome.ms_chap_error = auth::ms_chap2_error(auth::ms_chap_ident(*response), random);
  } else if (const auto v1 = request.find_vendor(radius::kVendorMicrosoft, ms::kChapResponse)) {
    outcome.ms_chap_error = auth::ms_chap1_error(auth::ms_chap_ident(*v1));
  }
}

void accept_by_default(AccessOutcome& outcome) {
  outcome.accepted = true;
  outcome.note = AcceptNote::kMabDefault;
}

// Checks the password or response the request carries against `known_good`.
// A crypt(3) password is left to the pool when the inputs say so.
void check_method(const radius::Packet& request, const AccessInputs& inputs,
                  const auth::Credential& known_good, AccessOutcome& outcome) {
  if (inputs.password || inputs.password_malformed) {
    outcome.method = outcome.method == AuthMethod::kMab ? AuthMethod::kMab : AuthMethod::kPap;
    if (inputs.password_malformed) return reject(outcome, RejectReason::kMalformedUserPassword);
    if (known_good.kind == auth::CredentialKind::kCrypt) {
      if (inputs.crypt_verdict != nullptr) {
        if (!inputs.crypt_verdict->crypt_matched) {
          return reject(outcome, reject_reason_of(inputs.crypt_verdict->crypt_error));
        }
        outcome.accepted = true;
        return;
      }
      if (inputs.crypt_elsewhere) {
        outcome.need = AccessNeed::kCryptCheck;
        outcome.crypt_setting = known_good.secret;
        return;
      }
    }
    auto verified = auth::verify_pap(known_good, *inputs.password);
    if (!verified) return reject(outcome, reject_reason_of(verified.error()));
    outcome.accepted = true;
    return;
  }
  if (const auto chap_password = request.find(attr::kChapPassword)) {
    outcome.method = AuthMethod::kChap;
    std::optional<Bytes> challenge;
    if (const auto attribute = request.find(attr::kChapChallenge)) challenge = attribute->value;
    auto verified = auth::verify_chap(known_good, {chap_password->value, challenge, request.authenticator()});
    if (!verified) return reject(outcome, reject_reason_of(verified.error()));
    outcome.accepted = true;
    return;
  }
  const auto challenge = request.find_vendor(radius::kVendorMicrosoft, ms::kChapChallenge);
  if (const auto response = request.find_vendor(radius::kVendorMicrosoft, ms::kChap2Response);
      challenge && response) {
    outcome.method = AuthMethod::kMsChap2;
    auto verified = auth::verify_ms_chap2(known_good, {*challenge, *response, outcome.user_name});
    if (!verified) return reject(outcome, reject_reason_of(verified.error()));
    outcome.ms_chap2 = *verified;
    outcome.accepted = true;
    return;
  }
  if (const auto response = request.find_vendor(radius::kVendorMicrosoft, ms::kChapResponse);
      challenge && response) {
    outcome.method = AuthMethod::kMsChap1;
    auto verified = auth::verify_ms_chap1(known_good, {*challenge, *response});
    if (!verified) return reject(outcome, reject_reason_of(verified.error()));
    outcome.ms_chap1 = *verified;
    outcome.accepted = true;
    return;
  }
  if (request.find(attr::kEapMessage)) {
    outcome.method = AuthMethod::kEap;
    return reject(outcome, RejectReason::kEapNotEnabled);
  }
  reject(outcome, RejectReason::kNoCredentials);
}

// Whether the request is MAC Authentication Bypass, from the User-Password
// the caller unhid (auth/mab.h states the rule).
bool is_mab(const radius::Packet& request, const AccessInputs& inputs, std::string_view user_name) {
  // Cheap tests first: most requests are not MAB.
  const auto calling = request.find(attr::kCallingStationId);
  if (!calling || !auth::parse_mac(user_name) || inputs.password_malformed) return false;
  return auth::is_mab_request(user_name, as_chars(calling->value), inputs.password);
}

}  // namespace

std::string_view to_string(AuthMethod method) {
  switch (method) {
    case AuthMethod::kNone:
      return "none";
    case AuthMethod::kPap:
      return "PAP";
    case AuthMethod::kChap:
      return "CHAP";
    case AuthMethod::kMsChap1:
      return "MS-CHAP";
    case AuthMethod::kMsChap2:
      return "MS-CHAPv2";
    case AuthMethod::kMab:
      return "MAB";
    case AuthMethod::kEap:
      return "EAP";
  }
  return "unknown";
}

std::string_view method_name(AuthMethod method, std::uint8_t eap_type) {
  if (method != AuthMethod::kEap) return to_string(method);
  switch (static_cast<eap::Type>(eap_type)) {
    case eap::Type::kMd5Challenge:
      return "EAP-MD5";
    case eap::Type::kTls:
      return "EAP-TLS";
    case eap::Type::kTtls:
      return "EAP-TTLS";
    case eap::Type::kPeap:
      return "PEAP";
    default:
      return "EAP";
  }
}

namespace {

// The users policy for `lookup_name`: the first store that knows the user,
// then its check items and Auth-Type. Returns the known good password when
// the request is to be checked against one; null when `outcome` is decided
// or waits. `mab`: the request is MAC Authentication Bypass (the listed MAC
// is the check); `password_needed`: without it, a user the policy admits is
// accepted here.
const auth::Credential* apply_users_policy(const GatewayState& state, const radius::Packet& request,
                                           const AccessInputs& inputs, std::string_view lookup_name, bool mab,
                                           bool password_needed, AccessOutcome& outcome) {
  const bool mab_default_accept = state.options().access.mab_default == MabDefault::kAccept;
  const TenantState& tenant = tenant_of(state, inputs);

  // The first store that knows the user decides; when none does, the users
  // file (its DEFAULT entries) does if it is listed. Finding a name in the
  // users file's index allocates nothing; SQL answers from memory, or the
  // decision waits for its fetch.
  const config::UsersFile* users = nullptr;
  const auth::UserCredentials* credentials = &tenant.credentials();
  bool files_listed = false;
  for (const config::UsersStore store : tenant.users_stores()) {
    if (store == config::UsersStore::kFiles) {
      files_listed = true;
      if (!tenant.users().entries_named(lookup_name).empty()) {
        users = &tenant.users();
        break;
      }
      continue;
    }
    std::shared_ptr<const auth::SqlUser> user;
    if (inputs.fetched_user != nullptr) {
      user = *inputs.fetched_user;
      if (user == nullptr) {
        outcome.store_unavailable = true;
        return nullptr;
      }
    } else if (inputs.user_store != nullptr) {
      UserStore::Lookup found = inputs.user_store->find(lookup_name);
      if (found.status != UserStore::Status::kFound) {
        outcome.need = AccessNeed::kUserLookup;
        outcome.lookup_name = lookup_name;
        return nullptr;
      }
      user = std::move(found.user);
    } else {
      continue;
    }
    if (user->known) {
      outcome.sql_user = std::move(user);
      users = &outcome.sql_user->users;
      credentials = &outcome.sql_user->credentials;
      break;
    }
  }
  if (users == nullptr) {
    if (!files_listed) {
      if (mab && mab_default_accept) {
        accept_by_default(outcome);
        return nullptr;
      }
      reject(outcome, mab ? RejectReason::kUnlistedMac : RejectReason::kUnknownUser);
      return nullptr;
    }
    users = &tenant.users();
  }

  const PacketAttributes attributes(request);
  outcome.users_file = users;
  if (auto evaluated = auth::evaluate_users(*users, lookup_name, attributes, outcome.users); !evaluated) {
    reject(outcome, reject_reason_of(evaluated.error()));
    return nullptr;
  }
  // MAB has no secret: the MAC being listed by name (a users entry or SQL
  // rows, which compile to entries named after it) is the whole check. A
  // catch-all DEFAULT lists nothing, so a MAC only DEFAULT entries match is
  // unlisted and `mab_default` decides (docs/authentication.md "MAB").
  const bool mab_listed = mab && outcome.users.named_matched();
  if (mab && !mab_listed && !mab_default_accept) {
    reject(outcome, RejectReason::kUnlistedMac);
    return nullptr;
  }
  if (!outcome.users.matched()) {
    if (mab) {
      accept_by_default(outcome);
    } else {
      reject(outcome, RejectReason::kUnknownUser);
    }
    return nullptr;
  }

  const KnownAttributes& known = state.known();
  if (known.auth_type != nullptr) {
    if (const auto* item = outcome.users.find_control(*known.auth_type)) {
      const std::uint32_t auth_type = u32_of(item->bytes());
      if (auth_type == known.auth_type_reject) {
        explicit_reject(outcome, RejectReason::kAuthTypeReject);
        return nullptr;
      }
      if (auth_type == known.auth_type_accept && !mab) {
        outcome.accepted = true;
        return nullptr;
      }
    }
  }
  if (mab) {
    // The MAC being listed is the check: is_mab() already required any
    // User-Password to be that MAC, in whatever notation the NAS used.
    outcome.accepted = true;
    if (!mab_listed) outcome.note = AcceptNote::kMabDefault;
    return nullptr;
  }
  if (!password_needed) {
    outcome.accepted = true;
    return nullptr;
  }
  const auth::Credential* credential = known_good(state, *credentials, outcome.users);
  if (credential == nullptr) reject(outcome, RejectReason::kNoKnownGoodPassword);
  return credential;
}

void decide(const GatewayState& state, const radius::Packet& request, const AccessInputs& inputs,
            AccessOutcome& outcome) {
  clear_outcome(outcome);
  const auto user_name = request.find(attr::kUserName);
  if (!user_name) return reject(outcome, RejectReason::kNoUserName);
  outcome.user_name = as_chars(user_name->value);

  // MAB entries are looked up under the canonical MAC, whatever the NAS's notation.
  std::string_view lookup_name = outcome.user_name;
  const bool mab = is_mab(request, inputs, outcome.user_name);
  if (mab) {
    outcome.method = AuthMethod::kMab;
    outcome.mac_text = auth::canonical_mac(*auth::parse_mac(outcome.user_name));
    lookup_name = auth::view(outcome.mac_text);
  }
  const auth::Credential* credential =
      apply_users_policy(state, request, inputs, lookup_name, mab, /*password_needed=*/true, outcome);
  if (credential == nullptr) return;
  check_method(request, inputs, *credential, outcome);
}

}  // namespace

void clear_outcome(AccessOutcome& outcome) {
  outcome.accepted = false;
  outcome.method = AuthMethod::kNone;
  outcome.user_name = {};
  outcome.reject = RejectReason::kUnknownUser;
  outcome.note = AcceptNote::kNone;
  outcome.users.clear();
  outcome.users_file = nullptr;
  outcome.ms_chap2.reset();
  outcome.ms_chap1.reset();
  outcome.ms_chap_error.reset();
  outcome.sql_user.reset();
  outcome.store_unavailable = false;
  outcome.need = AccessNeed::kNothing;
  outcome.lookup_name = {};
  outcome.crypt_setting = {};
  outcome.rule = {};
  outcome.policy_reply = nullptr;
  outcome.eap = EapReply{};
  outcome.eap_job.reset();
}

const auth::Credential* decide_user(const GatewayState& state, const radius::Packet& request,
                                    const AccessInputs& inputs, std::string_view lookup_name,
                                    bool password_needed, AccessOutcome& outcome) {
  return apply_users_policy(state, request, inputs, lookup_name, /*mab=*/false, password_needed, outcome);
}

void decide_access(const GatewayState& state, const radius::Packet& request, const AccessInputs& inputs,
                   RandomSource& random, AccessOutcome& outcome) {
  decide(state, request, inputs, outcome);
  const bool decided = outcome.need == AccessNeed::kNothing && !outcome.store_unavailable;
  // Authentication first, then authorization (docs/policy.md "Semantics").
  if (decided) authorize(state, request, inputs, outcome);
  if (decided && !outcome.accepted) add_ms_chap_error(request, random, outcome);
}

}  // namespace rw::gateway
