#include "server/engine/access_policy.h"

#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/engine/error_reason.h"
#include "server/engine/key_store.h"

namespace smcrypt::server {
namespace {

constexpr absl::string_view kOperationNames[kNumAccessOperations] = {
    "hash", "mac", "sign", "verify", "encrypt", "decrypt", "public_key", "keygen",
    "random", "info", "key_exchange", "list_keys", "rewrap", "datakey"};

constexpr size_t kMaxPatternSize = 256;

bool ValidKeyPattern(absl::string_view p) {
  if (p.empty() || p.size() > kMaxPatternSize) return false;
  for (char c : p) {
    const bool ok = absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                    c == '_' || c == '-' || c == '*';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

absl::string_view AccessOperationName(AccessOperation op) {
  const int i = static_cast<int>(op);
  return i >= 0 && i < kNumAccessOperations ? kOperationNames[i] : "unknown";
}

bool OperationTakesKey(AccessOperation op) {
  switch (op) {
    case AccessOperation::kHash:
    case AccessOperation::kKeygen:
    case AccessOperation::kRandom:
    case AccessOperation::kInfo:
    case AccessOperation::kListKeys:
      return false;
    default:
      return true;
  }
}

std::string ClientIdentity::Name() const {
  if (!sans.empty()) return sans.front();
  if (!common_name.empty()) return absl::StrCat("CN=", common_name);
  if (!subject.empty()) return subject;
  return "anonymous";
}

std::string AccessKey::Describe() const {
  switch (kind) {
    case Kind::kKeyId:
      // Quoted only when it is a well-formed key_id; any other bytes are not echoed.
      if (IsValidKeyId(key_id)) return absl::StrCat("key_id '", key_id, "'");
      return absl::StrCat("a key_id of ", key_id.size(),
                          " bytes that is not 1-128 characters of [A-Za-z0-9._-]");
    case Kind::kInline: return "an inline key";
    case Kind::kNone: break;
  }
  return "no key";
}

bool GlobMatch(absl::string_view pattern, absl::string_view text) {
  // Iterative wildcard matching with one backtrack point (O(|pattern| * |text|) worst).
  size_t p = 0, t = 0, star = absl::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != absl::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

absl::StatusOr<std::unique_ptr<AccessPolicy>> AccessPolicy::Parse(absl::string_view text,
                                                                  absl::string_view source) {
  std::unique_ptr<AccessPolicy> policy(new AccessPolicy());
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    auto error = [&](absl::string_view reason) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", line_number, ": ", reason));
    };
    if (const size_t hash = line.find('#'); hash != absl::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    // allow <operations> <keys> <identity...>: three words, then the rest of the line.
    std::vector<absl::string_view> head;
    absl::string_view rest = line;
    for (int i = 0; i < 3 && !rest.empty(); ++i) {
      const size_t end = rest.find_first_of(" \t");
      head.push_back(rest.substr(0, end));
      rest = end == absl::string_view::npos ? absl::string_view()
                                            : absl::StripLeadingAsciiWhitespace(rest.substr(end));
    }
    if (head.size() < 3 || rest.empty()) {
      return error("expected 'allow <operations> <keys> <identity>'");
    }
    head.push_back(rest);
    if (head[0] != "allow") {
      return error(absl::StrCat("unknown rule '", head[0], "' (only 'allow' rules exist)"));
    }
    Rule rule;
    for (absl::string_view op : absl::StrSplit(head[1], ',')) {
      if (op == "*") {
        rule.operations = (1u << kNumAccessOperations) - 1;
        continue;
      }
      bool found = false;
      for (int i = 0; i < kNumAccessOperations; ++i) {
        if (op == kOperationNames[i]) {
          rule.operations |= 1u << i;
          found = true;
        }
      }
      if (!found) {
        return error(absl::StrCat(
            "unknown operation '", op,
            "' (hash, mac, sign, verify, encrypt, decrypt, public_key, keygen, random, info, key_exchange, *)"));
      }
    }
    for (absl::string_view key : absl::StrSplit(head[2], ',')) {
      if (key == "@inline") {
        rule.inline_keys = true;
      } else if (!ValidKeyPattern(key)) {
        return error(absl::StrCat("bad key pattern '", key,
                                  "' (key_id characters [A-Za-z0-9._-], '*', or @inline)"));
      } else {
        if (key == "*") rule.inline_keys = true;
        rule.key_patterns.emplace_back(key);
      }
    }
    absl::string_view identity = absl::StripAsciiWhitespace(head[3]);
    if (identity == "*") {
      rule.identity_kind = IdentityKind::kAny;
    } else if (identity == "anonymous") {
      rule.identity_kind = IdentityKind::kAnonymous;
    } else if (absl::ConsumePrefix(&identity, "san:")) {
      rule.identity_kind = IdentityKind::kSan;
    } else if (absl::ConsumePrefix(&identity, "cn:")) {
      rule.identity_kind = IdentityKind::kCommonName;
    } else if (absl::ConsumePrefix(&identity, "subject:")) {
      rule.identity_kind = IdentityKind::kSubject;
    } else {
      return error(absl::StrCat("unknown identity '", identity,
                                "' (san:, cn:, subject:, anonymous or *)"));
    }
    if (rule.identity_kind == IdentityKind::kSan ||
        rule.identity_kind == IdentityKind::kCommonName ||
        rule.identity_kind == IdentityKind::kSubject) {
      if (identity.empty() || identity.size() > kMaxPatternSize) {
        return error(absl::StrCat("identity pattern must be 1 to ", kMaxPatternSize,
                                  " characters"));
      }
      rule.identity_pattern = std::string(identity);
    }
    policy->rules_.push_back(std::move(rule));
  }
  return policy;
}

absl::StatusOr<std::unique_ptr<AccessPolicy>> AccessPolicy::LoadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("--access_policy: cannot read ", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return Parse(text, path);
}

bool AccessPolicy::Matches(const Rule& rule, const ClientIdentity& client) {
  switch (rule.identity_kind) {
    case IdentityKind::kAny:
      return true;
    case IdentityKind::kAnonymous:
      return !client.authenticated;
    case IdentityKind::kSan:
      if (!client.authenticated) return false;
      for (const std::string& san : client.sans) {
        if (GlobMatch(rule.identity_pattern, san)) return true;
      }
      return false;
    case IdentityKind::kCommonName:
      return client.authenticated && !client.common_name.empty() &&
             GlobMatch(rule.identity_pattern, client.common_name);
    case IdentityKind::kSubject:
      return client.authenticated && !client.subject.empty() &&
             GlobMatch(rule.identity_pattern, client.subject);
  }
  return false;
}

absl::Status AccessPolicy::Check(const ClientIdentity& client, AccessOperation op,
                                 const AccessKey& key) const {
  const uint32_t bit = 1u << static_cast<int>(op);
  const bool takes_key = OperationTakesKey(op);
  for (const Rule& rule : rules_) {
    if ((rule.operations & bit) == 0 || !Matches(rule, client)) continue;
    if (!takes_key || key.kind == AccessKey::Kind::kNone) return absl::OkStatus();
    if (key.kind == AccessKey::Kind::kInline) {
      if (rule.inline_keys) return absl::OkStatus();
      continue;
    }
    for (const std::string& pattern : rule.key_patterns) {
      if (GlobMatch(pattern, key.key_id)) return absl::OkStatus();
    }
  }
  return WithReason(absl::PermissionDeniedError(absl::StrCat(
                        "access policy: client '", client.Name(), "' may not ",
                        AccessOperationName(op), " with ", key.Describe())),
                    reason::kAccessDenied, {{"operation", AccessOperationName(op)}});
}

}  // namespace smcrypt::server
