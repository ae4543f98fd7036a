// kex (KeyExchange): one SM2 key exchange (GB/T 32918.3-2016 §6) for a key smcryptd holds,
// with the peer's messages read from stdin and the server's written to stdout as lines
// "NAME HEX" (R_A, R_B, S_A, S_B, K), so two runs can be connected by pipes or a socket.
#include <iostream>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/io.h"
#include "clients/smcrypt/session.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::cli {
namespace {

namespace v1 = ::smcrypt::v1;

// ReadField reads lines from stdin until one is "NAME HEX" and returns the bytes. Empty
// lines and lines starting with '#' are skipped; any other line is an input error.
absl::StatusOr<std::string> ReadField(absl::string_view name) {
  std::string line;
  while (std::getline(std::cin, line)) {
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || l[0] == '#') continue;
    if (!absl::ConsumePrefix(&l, name) || l.empty() || !absl::ascii_isspace(l[0])) {
      return UsageError(absl::StrCat("stdin: expected a line \"", name, " <hex>\", got \"",
                                     TerminalSafe(l.substr(0, 40)), "\""));
    }
    return DecodeHexFlag(name, absl::StripLeadingAsciiWhitespace(l));
  }
  return UsageError(absl::StrCat("stdin ended before the peer's ", name));
}

void PrintField(absl::string_view name, absl::string_view bytes) {
  std::cout << name << " " << absl::BytesToHexString(bytes) << std::endl;
}

// Stream is the KeyExchange call; Exchange turns an RPC failure into its exit path
// (UNAUTHENTICATED: a confirmation value that did not match, exit 1).
struct Stream {
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReaderWriter<v1::KeyExchangeRequest, v1::KeyExchangeResponse>> rw;

  absl::StatusOr<v1::KeyExchangeResponse> Exchange(const v1::KeyExchangeRequest& req) {
    v1::KeyExchangeResponse resp;
    if (rw->Write(req) && rw->Read(&resp)) return resp;
    rw->WritesDone();
    return RpcStatus(rw->Finish());
  }
};

// PeerKeyFromFlags sets `peer` from exactly one of --peer-key FILE, --peer-key-id ID
// (with --peer-key-version) and --peer-key-hex HEX.
absl::Status PeerKeyFromFlags(const Args& args, v1::KeyRef* peer) {
  const int peer_given = args.Has("peer-key") + args.Has("peer-key-id") + args.Has("peer-key-hex");
  if (peer_given != 1) {
    return UsageError("give exactly one of --peer-key FILE, --peer-key-id ID, --peer-key-hex HEX");
  }
  if (args.Has("peer-key-version") && !args.Has("peer-key-id")) {
    return UsageError("--peer-key-version goes with --peer-key-id (a version of a keyring key)");
  }
  if (std::optional<std::string> pid = args.Get("peer-key-id")) {
    peer->set_key_id(*pid);
    if (args.Has("peer-key-version")) {
      absl::StatusOr<uint64_t> version = UintFlag(args, "peer-key-version", 0, 1,
                                                  std::numeric_limits<uint32_t>::max());
      if (!version.ok()) return version.status();
      peer->set_key_version(static_cast<uint32_t>(*version));
    }
  } else if (std::optional<std::string> hex = args.Get("peer-key-hex")) {
    absl::StatusOr<std::string> point = DecodeHexFlag("peer-key-hex", *hex);
    if (!point.ok()) return point.status();
    peer->set_inline_key(*std::move(point));
  } else {
    absl::StatusOr<std::string> file = ReadFile(*args.Get("peer-key"), kKeyFileLimit);
    if (!file.ok()) return UsageError(absl::StrCat("--peer-key: ", file.status().message()));
    peer->set_inline_key(*std::move(file));
  }
  return absl::OkStatus();
}

// KexParams is the exchange's parameters from the flags (--role, --confirm, --length,
// the key, the identities and the peer's key).
absl::StatusOr<v1::KeyExchangeParams> KexParams(const Args& args) {
  std::optional<std::string> role_name = args.Get("role");
  if (!role_name) return UsageError("--role initiator|responder is required");
  const std::string role = absl::AsciiStrToLower(*role_name);
  if (role != "initiator" && role != "responder") {
    return UsageError(absl::StrCat("--role ", *role_name, ": expected initiator or responder"));
  }
  const bool initiator = role == "initiator";
  const bool confirm = args.Has("confirm");
  absl::StatusOr<uint64_t> length = UintFlag(args, "length", 16, 1, 65536);
  if (!length.ok()) return length.status();

  v1::KeyExchangeParams params;
  params.set_algorithm(v1::SM2);
  params.set_role(initiator ? v1::KEY_EXCHANGE_ROLE_INITIATOR : v1::KEY_EXCHANGE_ROLE_RESPONDER);
  params.set_confirmation(confirm);
  params.set_key_length(static_cast<uint32_t>(*length));
  absl::StatusOr<v1::KeyRef> key = KeyFlag(args, v1::SM2);
  if (!key.ok()) return key.status();
  *params.mutable_key() = *std::move(key);
  absl::StatusOr<std::optional<std::string>> id = BytesFlag(args, "id", "id-hex");
  if (!id.ok()) return id.status();
  if (id->has_value()) params.set_user_id(**id);
  absl::StatusOr<std::optional<std::string>> peer_id = BytesFlag(args, "peer-id", "peer-id-hex");
  if (!peer_id.ok()) return peer_id.status();
  if (peer_id->has_value()) params.set_peer_user_id(**peer_id);
  if (absl::Status st = PeerKeyFromFlags(args, params.mutable_peer_key()); !st.ok()) return st;
  return params;
}

// AsInitiator runs A's side: sends `first` (the parameters), prints R_A, reads R_B (and
// S_B), prints S_A with confirmation, and returns K.
absl::StatusOr<std::string> AsInitiator(Stream& call, const v1::KeyExchangeRequest& first,
                                        bool confirm) {
  absl::StatusOr<v1::KeyExchangeResponse> r1 = call.Exchange(first);
  if (!r1.ok()) return r1.status();
  PrintField("R_A", r1->ephemeral_point());
  v1::KeyExchangeRequest second;
  absl::StatusOr<std::string> r_b = ReadField("R_B");
  if (!r_b.ok()) return r_b.status();
  second.set_peer_ephemeral_point(*std::move(r_b));
  if (confirm) {
    absl::StatusOr<std::string> s_b = ReadField("S_B");
    if (!s_b.ok()) return s_b.status();
    second.set_peer_confirmation(*std::move(s_b));
  }
  absl::StatusOr<v1::KeyExchangeResponse> r2 = call.Exchange(second);
  if (!r2.ok()) return r2.status();
  if (confirm) PrintField("S_A", r2->confirmation());
  return std::move(*r2->mutable_shared_key());
}

// AsResponder runs B's side: reads R_A, sends it with the parameters `first`, prints R_B
// (and S_B), reads S_A with confirmation, and returns K.
absl::StatusOr<std::string> AsResponder(Stream& call, v1::KeyExchangeRequest& first,
                                        bool confirm) {
  absl::StatusOr<std::string> r_a = ReadField("R_A");
  if (!r_a.ok()) return r_a.status();
  first.set_peer_ephemeral_point(*std::move(r_a));
  absl::StatusOr<v1::KeyExchangeResponse> r1 = call.Exchange(first);
  if (!r1.ok()) return r1.status();
  PrintField("R_B", r1->ephemeral_point());
  if (!confirm) return std::move(*r1->mutable_shared_key());
  PrintField("S_B", r1->confirmation());
  v1::KeyExchangeRequest second;
  absl::StatusOr<std::string> s_a = ReadField("S_A");
  if (!s_a.ok()) return s_a.status();
  second.set_peer_confirmation(*std::move(s_a));
  absl::StatusOr<v1::KeyExchangeResponse> r2 = call.Exchange(second);
  if (!r2.ok()) return r2.status();
  return std::move(*r2->mutable_shared_key());
}

absl::StatusOr<int> RunKex(const Args& args) {
  absl::StatusOr<v1::KeyExchangeParams> params = KexParams(args);
  if (!params.ok()) return params.status();
  const bool initiator = params->role() == v1::KEY_EXCHANGE_ROLE_INITIATOR;
  const bool confirm = params->confirmation();

  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  Stream call;
  session->Prepare(&call.ctx, /*streaming=*/true);
  call.rw = session->stub().KeyExchange(&call.ctx);

  v1::KeyExchangeRequest first;
  *first.mutable_params() = *std::move(params);
  absl::StatusOr<std::string> shared_key =
      initiator ? AsInitiator(call, first, confirm) : AsResponder(call, first, confirm);
  if (!shared_key.ok()) return shared_key.status();
  call.rw->WritesDone();
  grpc::Status done = call.rw->Finish();
  absl::Status written = absl::OkStatus();
  if (done.ok()) {
    if (args.Has("out")) {
      absl::StatusOr<Encoding> enc = FormatFlag(args, Encoding::kRaw);
      written = enc.ok() ? WriteOutput(args, EncodeAll(*enc, *shared_key), /*private_file=*/true) : enc.status();
    } else {
      PrintField("K", *shared_key);
    }
  }
  SecureZero(shared_key->data(), shared_key->size());
  if (!done.ok()) return RpcStatus(done);
  if (!written.ok()) return written;
  return kExitOk;
}

const std::vector<FlagSpec> kKexFlags = {
    {"role", "ROLE", "initiator (A, sends R_A first) or responder (B)"},
    {"peer-key", "FILE", "the peer's SM2 public key: SubjectPublicKeyInfo PEM or DER, or a raw "
                         "65/33-byte point"},
    {"peer-key-id", "ID", "the peer's public key from smcryptd's keyring"},
    {"peer-key-version", "N", "with --peer-key-id: version N of that key (default: its primary)"},
    {"peer-key-hex", "HEX", "the peer's public key as a hex point (04||x||y)"},
    {"id", "TEXT", "own user ID (default 1234567812345678)"},
    {"id-hex", "HEX", "own user ID in hex"},
    {"peer-id", "TEXT", "the peer's user ID (default 1234567812345678)"},
    {"peer-id-hex", "HEX", "the peer's user ID in hex"},
    {"length", "N", "shared key length in bytes, 1-65536 (default 16)"},
    {"confirm", "", "exchange the confirmation values S_B and S_A (both sides must agree)"},
};

}  // namespace

std::vector<Command> KexCommands() {
  return {
      {"kex", "SM2 key exchange (GB/T 32918.3-2016 §6) for a key smcryptd holds",
       "smcrypt kex --role initiator|responder KEY (--peer-key FILE | --peer-key-id ID) "
       "[--id ID] [--peer-id ID] [--length N] [--confirm]",
       R"(Runs one key exchange with the KeyExchange RPC. The peer's messages are read from
stdin and this side's are written to stdout, one per line as "NAME HEX": an initiator
prints R_A, reads R_B (and S_B with --confirm), then prints S_A (with --confirm) and
K; a responder reads R_A, prints R_B (and S_B, then reads S_A with --confirm) and K.
With --out, K goes there (raw by default, or per --format) instead of stdout. A
confirmation value that does not match exits 1 and releases no key.

Example (two keys of one server, connected by two pipes; both sides write K to a file):
  mkfifo a2b b2a
  smcrypt kex --role initiator --key-id alice --peer-key-id bob-pub --confirm \
      --out k_a.bin >a2b <b2a &
  smcrypt kex --role responder --key-id bob --peer-key-id alice-pub --confirm \
      --out k_b.bin <a2b >b2a
  cmp k_a.bin k_b.bin)",
       kKexFlags, kConnectionFlags | kKeyFlags | kOutputFlags, &RunKex},
  };
}

}  // namespace smcrypt::cli
