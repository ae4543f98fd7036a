// commands.h — the subcommands of the smcrypt CLI and the helpers they share.
//
// Exit codes (every subcommand): 0 success; 1 a verification or authentication check that
// ran and failed ("signature invalid", "MAC invalid", and a decryption whose tag, SM2 C3
// or padding check failed: reason DECRYPTION_FAILED; a key exchange whose confirmation
// value did not match); 2 a usage or input error (under
// --local, every error of the in-process service too); 3 an RPC error (the server is
// unreachable, or it refused the call: the gRPC code name and its message are printed).
#ifndef SMCRYPT_CLIENTS_SMCRYPT_COMMANDS_H_
#define SMCRYPT_CLIENTS_SMCRYPT_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clients/smcrypt/algorithm_names.h"
#include "clients/smcrypt/codec.h"
#include "clients/smcrypt/flags.h"
#include "smcrypt/v1/crypto.pb.h"

namespace smcrypt::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRpc = 3;

// Flag groups a command accepts besides its own flags.
enum FlagGroup : unsigned {
  // --local --target --tls --ca --cert --cert-key --server-name --timeout --no-retries
  kConnectionFlags = 1 << 0,
  kKeyFlags = 1 << 1,         // --key-id --key --key-hex --pass --pass-file
  kInputFlags = 1 << 2,       // --in
  kOutputFlags = 1 << 3,      // --out --format --outform --inform
};

// Command is one subcommand: its help text and its entry point. `run` returns the exit
// code on success paths (0, or 1 for a failed verification) and an error status
// otherwise (RPC errors are marked, see session.h).
struct Command {
  absl::string_view name;
  absl::string_view summary;
  absl::string_view synopsis;
  absl::string_view details;
  std::vector<FlagSpec> flags;
  unsigned groups;
  absl::StatusOr<int> (*run)(const Args& args);
};

// The command tables, one function per source file.
std::vector<Command> HashCommands();    // hash, hmac
std::vector<Command> SignCommands();    // sign, verify
std::vector<Command> CipherCommands();  // encrypt, decrypt
std::vector<Command> PkCommands();      // pkencrypt, pkdecrypt, seal, open
std::vector<Command> KeyCommands();     // keygen, pubkey, random, info
std::vector<Command> KexCommands();     // kex
std::vector<Command> KeyringCommands(); // keys
std::vector<Command> EnvelopeCommands();  // rewrap, datakey

// GroupFlags returns the FlagSpecs of `groups`.
std::vector<FlagSpec> GroupFlags(unsigned groups);

// ---- Helpers shared by the commands -------------------------------------------------

// AlgorithmFlag reads --alg for `family`; `fallback` when absent.
absl::StatusOr<smcrypt::v1::Algorithm> AlgorithmFlag(const Args& args, AlgorithmFamily family,
                                                     smcrypt::v1::Algorithm fallback);
// EncodingFlag is the value of --format, or of its openssl-style aliases --outform and
// --inform (der and binary read as raw); at most one of the three may be given.
absl::StatusOr<std::optional<std::string>> EncodingFlag(const Args& args);
// CheckFormAliases: --inform is a usage error for `command` unless it reads encoded
// input (verify's --sig, decrypt, pkdecrypt, open), --outform unless it writes an
// encoded result; so neither is silently ignored (--format covers both directions).
absl::Status CheckFormAliases(absl::string_view command, const Args& args);
// FormatFlag reads --format (or --outform / --inform); `fallback` when absent.
absl::StatusOr<Encoding> FormatFlag(const Args& args, Encoding fallback);
// KeyFlag reads exactly one of --key-id, --key FILE, --key-hex. A --key file holding
// an "SM4 KEY" / "AES KEY" / "HMAC KEY" PEM block is sent as its raw key bytes; other
// files (PEM or DER keys) are sent as they are.
// `alg` is the request's algorithm: a keyring-style symmetric PEM file (SM4 KEY, AES KEY,
// HMAC KEY) must match its family, so an SM4 key is never sent as an AES or signing key.
absl::StatusOr<smcrypt::v1::KeyRef> KeyFlag(const Args& args, smcrypt::v1::Algorithm alg);
// InputPaths returns the inputs: --in, else the positional arguments, else "-" (stdin).
// With `allow_many` false, more than one is a usage error.
absl::StatusOr<std::vector<std::string>> InputPaths(const Args& args, bool allow_many);
// ReadInput reads the single input (see InputPaths) completely.
absl::StatusOr<std::string> ReadInput(const Args& args);
// BytesFlag reads an optional byte string given either as text (--`text_flag`) or as
// hex (--`hex_flag`); both at once is a usage error.
absl::StatusOr<std::optional<std::string>> BytesFlag(const Args& args,
                                                     absl::string_view text_flag,
                                                     absl::string_view hex_flag);
// UintFlag reads an unsigned decimal flag in [min, max]; `fallback` when absent.
absl::StatusOr<uint64_t> UintFlag(const Args& args, absl::string_view name, uint64_t fallback,
                                  uint64_t min, uint64_t max);
// WriteOutput writes `bytes` to --out (stdout when absent) and closes it.
// With `private_file`, a file output gets mode 0600 (secret keys: kex's K).
absl::Status WriteOutput(const Args& args, absl::string_view bytes, bool private_file = false);
// ReadEncodedFile reads `path` and decodes it with `encoding`; errors name `what`.
absl::StatusOr<std::string> ReadEncodedFile(const std::string& path, Encoding encoding,
                                            absl::string_view what);
// UsageError is a usage error (exit 2).
absl::Status UsageError(absl::string_view message);
// NoteKeyVersion tells stderr which version of a keyring key a response says was used
// ("smcrypt encrypt: key version 2"), so that the caller can name it to decrypt or
// verify later; for a decryption or a check, the version that authenticated. key_version
// 0 (the key has no versions and none was named) prints nothing.
void NoteKeyVersion(absl::string_view command, uint32_t key_version);
// ExitCodeFor maps an error to its exit code: 3 for RPC errors, 2 otherwise.
int ExitCodeFor(const absl::Status& status);
// DescribeError renders an error for the terminal: DescribeRawError passed through
// TerminalSafe, since a message can echo what a server or an input holds (a key_id
// with escape sequences, say).
std::string DescribeError(const absl::Status& status);
// DescribeRawError renders an error for the user: "CODE_NAME: message" for RPC errors
// (plus a hint for the common ones), the message alone for local errors.
std::string DescribeRawError(const absl::Status& status);
// TerminalSafe escapes what a terminal would act on rather than show: ASCII controls
// (\n, \r, \t, else \x1b-style hex) and DEL, bytes that are not well-formed UTF-8, C1
// controls and bidirectional and other invisible format controls (their UTF-8 bytes in
// \x hex). Printable ASCII and other valid UTF-8 text are kept as they are.
std::string TerminalSafe(absl::string_view text);
// HumanBytes: a byte count in the largest binary unit it reaches, exact where it is a
// whole number of that unit ("1 GiB", "512 bytes"), else to one decimal ("1.5 MiB").
std::string HumanBytes(uint64_t bytes);
// InfoText is `smcrypt info`'s text: version, CPU, kernels, limits, sizing (byte values
// also in human form, HumanBytes), keyring, algorithms and self-tests.
std::string InfoText(const smcrypt::v1::GetServerInfoResponse& info);

}  // namespace smcrypt::cli

#endif  // SMCRYPT_CLIENTS_SMCRYPT_COMMANDS_H_
