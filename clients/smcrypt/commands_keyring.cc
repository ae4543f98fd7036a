// keys: ListKeys, every page of it, as a table or as JSON.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/session.h"
#include "google/protobuf/util/json_util.h"

namespace smcrypt::cli {
namespace {

namespace v1 = ::smcrypt::v1;

// kMaxPages bounds the listing (a server answering tokens forever is a bug, not a keyring).
constexpr int kMaxPages = 100000;

// ListAll gathers every page into one response; `reloaded` is set when the keyring's load
// time changed between pages (the listing may then mix two keyrings).
absl::StatusOr<v1::ListKeysResponse> ListAll(const Session& session, uint32_t page_size,
                                            bool* reloaded) {
  v1::ListKeysResponse all;
  std::string token;
  for (int page = 0; page < kMaxPages; ++page) {
    v1::ListKeysRequest req;
    req.set_page_size(page_size);
    req.set_page_token(token);
    v1::ListKeysResponse resp;
    grpc::ClientContext ctx;
    session.Prepare(&ctx);
    grpc::Status s = session.stub().ListKeys(&ctx, req, &resp);
    if (!s.ok()) return RpcStatus(s);
    if (page == 0) {
      all.set_keyring_load_time_unix_micros(resp.keyring_load_time_unix_micros());
    } else if (resp.keyring_load_time_unix_micros() != all.keyring_load_time_unix_micros()) {
      *reloaded = true;
    }
    for (v1::KeyInfo& k : *resp.mutable_keys()) *all.add_keys() = std::move(k);
    token = resp.next_page_token();
    if (token.empty()) return all;
  }
  return RpcStatus(grpc::Status(grpc::StatusCode::INTERNAL,
                                absl::StrCat("ListKeys gave more than ", kMaxPages, " pages")));
}

std::string TimeText(int64_t unix_micros) {
  if (unix_micros == 0) return "-";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMicros(unix_micros),
                          absl::UTCTimeZone());
}

std::string StateOf(const v1::KeyInfo& k, const v1::KeyVersionInfo& v) {
  if (v.version() == k.primary_version()) return "primary";
  return v.retired() ? "retired" : "retained";
}

// Table lays out one row per key version, columns padded to their widest cell.
std::string Table(const v1::ListKeysResponse& all) {
  std::vector<std::vector<std::string>> rows = {
      {"KEY ID", "FAMILY", "PRIMARY", "MIN", "VERSION", "STATE", "LOADED (UTC)",
       "PUBLIC KEY SHA-256"}};
  for (const v1::KeyInfo& k : all.keys()) {
    for (const v1::KeyVersionInfo& v : k.versions()) {
      rows.push_back({k.key_id(), k.key_family(), absl::StrCat(k.primary_version()),
                      absl::StrCat(k.min_version()), absl::StrCat(v.version()), StateOf(k, v),
                      TimeText(v.load_time_unix_micros()),
                      v.public_key_sha256().empty() ? "-"
                                                    : absl::BytesToHexString(
                                                          v.public_key_sha256())});
    }
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out = absl::StrCat("keyring loaded ", TimeText(all.keyring_load_time_unix_micros()),
                                 ", ", all.keys_size(), " key(s)\n");
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, row[i]);
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 2, ' ');
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

absl::StatusOr<int> RunKeys(const Args& args) {
  if (!args.positional().empty()) return UsageError("keys takes no arguments");
  absl::StatusOr<uint64_t> page_size = UintFlag(args, "page-size", 0, 1, 1000);
  if (!page_size.ok()) return page_size.status();
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  bool reloaded = false;
  absl::StatusOr<v1::ListKeysResponse> all =
      ListAll(*session, static_cast<uint32_t>(*page_size), &reloaded);
  if (!all.ok()) return all.status();
  if (reloaded) {
    std::fprintf(stderr, "smcrypt keys: the server reloaded its keyring while listing; "
                         "run again for one consistent listing\n");
  }
  std::string text;
  if (args.Has("json")) {
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.preserve_proto_field_names = true;
    if (!google::protobuf::util::MessageToJsonString(*all, &text, options).ok()) {
      return absl::InternalError("cannot render the key list as JSON");
    }
  } else {
    text = Table(*all);
  }
  if (absl::Status w = WriteOutput(args, text); !w.ok()) return w;
  return kExitOk;
}

}  // namespace

std::vector<Command> KeyringCommands() {
  return {
      {"keys", "the keyring a server has loaded: keys, versions, primary, minimum",
       "smcrypt keys [--json] [--page-size N] [--out FILE]",
       R"(Lists every key of the server's keyring (ListKeys, all pages): one row per
loaded version with the key's family, primary and minimum version, the version's state
(primary, retained, or retired: below the minimum), when this server loaded its current
bytes, and for SM2, EC and RSA keys the SHA-256 of the public key (secret keys show
"-": nothing about them is listed). The first line says when the server loaded its
keyring. With --json, the ListKeysResponse of all pages (protobuf JSON: the fingerprint
in base64, times in microseconds since 1970). Before promoting a new version, run it
against every replica and check that each lists the version.

Examples:
  smcrypt keys --target smcrypt-0.smcrypt:50051
  smcrypt keys --json --out keys.json)",
       {{"json", "", "print the listing as JSON"},
        {"page-size", "N", "keys per ListKeys call, 1-1000 (default: the server's, 100)"},
        {"out", "FILE", "write to FILE instead of stdout"}},
       kConnectionFlags, &RunKeys},
  };
}

}  // namespace smcrypt::cli
