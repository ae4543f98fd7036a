#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/io.h"
#include "clients/smcrypt/key_files.h"
#include "clients/smcrypt/session.h"

namespace smcrypt::cli {

std::vector<FlagSpec> GroupFlags(unsigned groups) {
  std::vector<FlagSpec> flags;
  if (groups & kKeyFlags) {
    flags.insert(flags.end(), {
        {"key-id", "ID", "key <ID>.pem of the server's keyring (--keys_dir)"},
        {"key-version", "N", "with --key-id: version N of the key (<ID>.v<N>.pem); default "
                             "its primary"},
        {"key", "FILE", "key material sent with the request: PEM or DER private/public key, "
                        "or an SM4/AES/HMAC KEY PEM block (as written by keygen)"},
        {"key-hex", "HEX", "raw key bytes in hex (symmetric keys, SM2/EC scalars or points)"},
        {"pass", "PASSWORD", "password of an encrypted --key file (ENCRYPTED PRIVATE KEY, "
                             "PKCS#8 PBES2); visible to other users in ps: prefer --pass-file"},
        {"pass-file", "FILE", "read that password from the first line of FILE (- is stdin)"},
    });
  }
  if (groups & kInputFlags) {
    flags.push_back({"in", "FILE", "input file (same as the positional FILE; - is stdin)"});
  }
  if (groups & kOutputFlags) {
    flags.insert(flags.end(), {
        {"out", "FILE", "write the result to FILE instead of stdout"},
        {"format", "FMT", "hex | base64 | raw: how binary values (digests, signatures, "
                          "ciphertexts) are written and read (default hex)"},
        {"outform", "FORM", "openssl's spelling of --format, for what the command writes: hex, "
                            "base64, der or binary (= raw)"},
        {"inform", "FORM", "the same, for the encoded input of verify --sig, decrypt, "
                           "pkdecrypt and open (elsewhere either flag is a usage error)"},
    });
  }
  if (groups & kConnectionFlags) {
    flags.insert(flags.end(), {
        {"local", "", "run in process with libsmcrypt, no server and no socket (also "
                      "$SMCRYPT_LOCAL=1); keys come from files, so --key-id is a usage error"},
        {"target", "HOST:PORT", "smcryptd address (default $SMCRYPT_TARGET, else localhost:50051)"},
        {"tls", "", "connect with TLS (implied by --ca, --cert, --cert-key, --server-name)"},
        {"ca", "FILE", "PEM CA certificates to trust (default: the system's trust store)"},
        {"cert", "FILE", "PEM client certificate chain for mTLS"},
        {"cert-key", "FILE", "PEM private key of the client certificate"},
        {"server-name", "NAME", "expected server name in its certificate (TLS SNI/override)"},
        {"timeout", "DURATION", "RPC deadline: seconds or 500ms, 10s, 2m (default 30s for "
                                "single calls, none for streams)"},
        {"no-retries", "", "send each RPC once (default: an RPC that ends UNAVAILABLE or "
                           "CANCELLED is retried, up to 5 attempts, on another replica when "
                           "the target has several)"},
    });
  }
  return flags;
}

absl::Status UsageError(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

void NoteKeyVersion(absl::string_view command, uint32_t key_version) {
  if (key_version == 0) return;
  std::fprintf(stderr, "smcrypt %.*s: key version %u\n", static_cast<int>(command.size()),
               command.data(), key_version);
}

int ExitCodeFor(const absl::Status& status) {
  if (ErrorReason(status) == kReasonDecryptionFailed) return kExitInvalid;
  // kex: the peer's confirmation value did not match (KeyExchange's UNAUTHENTICATED).
  if (status.code() == absl::StatusCode::kUnauthenticated &&
      absl::StrContains(status.message(), "key confirmation failed")) {
    return kExitInvalid;
  }
  if (IsInProcessError(status)) return kExitUsage;
  return IsRpcError(status) ? kExitRpc : kExitUsage;
}

namespace {

// Utf8Length is the length of the well-formed UTF-8 sequence at the start of `s` (no
// overlong forms, surrogates or code points past U+10FFFF), 0 when there is none; its
// code point goes to *cp.
size_t Utf8Length(absl::string_view s, uint32_t* cp) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  size_t n;
  uint32_t v, min;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2, v = c & 0x1f, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, v = c & 0x0f, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (b(i) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

// Invisible code points that change how a terminal shows text: C1 controls (ESC's 8-bit
// forms), bidirectional overrides and isolates, the line and paragraph separators.
bool IsFormatControl(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029 || cp == 0x200e ||
         cp == 0x200f || cp == 0x061c || cp == 0xfeff;
}

}  // namespace

std::string TerminalSafe(absl::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto hex = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  };
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = c >= 0x80 ? Utf8Length(text.substr(i), &cp) : 0;
    if (n > 0 && !IsFormatControl(cp)) {
      out.append(text.data() + i, n);
      i += n;
      continue;
    }
    switch (c) {
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) hex(static_cast<unsigned char>(text[i + k]));
    i += std::max<size_t>(n, 1);
  }
  return out;
}

std::string HumanBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes == 1) return "1 byte";
  int unit = 0;
  while (unit < 6 && bytes >> (10 * (unit + 1)) > 0) ++unit;
  if (unit == 0) return absl::StrCat(bytes, " bytes");
  const uint64_t whole = bytes >> (10 * unit);
  if ((bytes & ((uint64_t{1} << (10 * unit)) - 1)) == 0) {
    return absl::StrCat(whole, " ", kUnits[unit]);
  }
  return absl::StrFormat("%.1f %s", static_cast<double>(bytes) / (uint64_t{1} << (10 * unit)),
                         kUnits[unit]);
}

std::string DescribeError(const absl::Status& status) {
  return TerminalSafe(DescribeRawError(status));
}

std::string DescribeRawError(const absl::Status& status) {
  if (!IsRpcError(status)) return std::string(status.message());
  std::string out = absl::StrCat(CodeName(status.code()), ": ", status.message());
  if (IsInProcessError(status)) return out;
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      // Only a transport failure: an UNAVAILABLE the server sent itself carries a reason
      // (AUDIT_UNAVAILABLE, ...) and reached the server.
      if (ErrorReason(status).empty()) {
        absl::StrAppend(&out, " (is smcryptd running at --target? TLS flags must match the "
                              "server)");
      }
      break;
    case absl::StatusCode::kResourceExhausted:
      absl::StrAppend(&out, " (large inputs: use --stream where the command offers it)");
      break;
    default:
      break;
  }
  return out;
}

absl::StatusOr<smcrypt::v1::Algorithm> AlgorithmFlag(const Args& args, AlgorithmFamily family,
                                                     smcrypt::v1::Algorithm fallback) {
  std::optional<std::string> name = args.Get("alg");
  if (!name.has_value()) return fallback;
  return ParseAlgorithm(*name, family);
}

absl::StatusOr<std::optional<std::string>> EncodingFlag(const Args& args) {
  int given = args.Has("format") + args.Has("outform") + args.Has("inform");
  if (given > 1) return UsageError("give only one of --format, --outform and --inform");
  std::optional<std::string> value = args.Get("format");
  for (const char* alias : {"outform", "inform"}) {
    if (std::optional<std::string> v = args.Get(alias)) {
      // openssl's names: DER (binary) is the raw bytes.
      std::string lower = absl::AsciiStrToLower(*v);
      value = lower == "der" || lower == "binary" ? std::string("raw") : *v;
    }
  }
  return value;
}

absl::Status CheckFormAliases(absl::string_view command, const Args& args) {
  // The commands whose input is encoded text (--inform), and those that write an encoded
  // result (--outform); keygen and pubkey read --outform as pem or der themselves.
  static constexpr absl::string_view kReadsEncoded[] = {"verify", "decrypt", "pkdecrypt",
                                                        "open"};
  static constexpr absl::string_view kWritesEncoded[] = {
      "hash", "hmac", "sign", "encrypt", "pkencrypt", "seal", "random", "keygen", "pubkey"};
  const auto in = [&](const auto& list) {
    return std::find(std::begin(list), std::end(list), command) != std::end(list);
  };
  if (std::optional<std::string> v = args.Get("inform"); v.has_value() && !in(kReadsEncoded)) {
    return UsageError(absl::StrCat(
        "--inform ", *v, ": smcrypt ", command, " reads no encoded input (only verify --sig, "
        "decrypt, pkdecrypt and open do); ", in(kWritesEncoded) ? "--outform" : "--format",
        " sets the encoding of what it writes"));
  }
  if (std::optional<std::string> v = args.Get("outform"); v.has_value() && !in(kWritesEncoded)) {
    return UsageError(absl::StrCat("--outform ", *v, ": smcrypt ", command,
                                   " writes no encoded output; --inform sets the encoding "
                                   "of what it reads"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Encoding> FormatFlag(const Args& args, Encoding fallback) {
  absl::StatusOr<std::optional<std::string>> name = EncodingFlag(args);
  if (!name.ok()) return name.status();
  if (!name->has_value()) return fallback;
  return ParseEncoding(**name);
}

absl::StatusOr<smcrypt::v1::KeyRef> KeyFlag(const Args& args, smcrypt::v1::Algorithm alg) {
  int given = args.Has("key-id") + args.Has("key") + args.Has("key-hex");
  if (given == 0) {
    return UsageError("a key is required: --key-id ID, --key FILE or --key-hex HEX");
  }
  if (given > 1) return UsageError("give only one of --key-id, --key and --key-hex");
  if (args.Has("key-version") && !args.Has("key-id")) {
    return UsageError("--key-version goes with --key-id (a version of a keyring key)");
  }
  if ((args.Has("pass") || args.Has("pass-file")) && !args.Has("key")) {
    return UsageError("--pass and --pass-file go with an encrypted --key FILE");
  }
  smcrypt::v1::KeyRef ref;
  if (std::optional<std::string> id = args.Get("key-id")) {
    if (IsLocal(args)) {
      return UsageError(absl::StrCat("--key-id ", *id, " names a key of smcryptd's keyring; "
                                     "--local has none: give the key as --key FILE"));
    }
    ref.set_key_id(*id);
    if (args.Has("key-version")) {
      absl::StatusOr<uint64_t> version =
          UintFlag(args, "key-version", 0, 1, std::numeric_limits<uint32_t>::max());
      if (!version.ok()) return version.status();
      ref.set_key_version(static_cast<uint32_t>(*version));
    }
  } else if (std::optional<std::string> hex = args.Get("key-hex")) {
    absl::StatusOr<std::string> key = DecodeHexFlag("key-hex", *hex);
    if (!key.ok()) return key.status();
    ref.set_inline_key(*std::move(key));
  } else {
    std::string path = *args.Get("key");
    absl::StatusOr<std::string> file = ReadFile(path, kKeyFileLimit);
    if (!file.ok()) return UsageError(absl::StrCat("--key: ", file.status().message()));
    std::string type;
    absl::StatusOr<std::optional<std::string>> raw = PemSymmetricKey(*file, &type);
    if (!raw.ok()) return UsageError(absl::StrCat("--key ", path, ": ", raw.status().message()));
    if (raw->has_value()) {
      const std::string name = AlgorithmName(alg);
      const char* wanted = absl::StartsWith(name, "SM4-")    ? "SM4 KEY"
                           : absl::StartsWith(name, "AES-")  ? "AES KEY"
                           : absl::StartsWith(name, "HMAC-") ? "HMAC KEY"
                                                             : nullptr;
      if (wanted == nullptr || type != wanted) {
        return UsageError(absl::StrCat(
            "--key ", path, " holds an ", type, "; ", name, " needs ",
            wanted != nullptr ? absl::StrCat("an ", wanted) : std::string("a PEM key pair file "
                                                                          "(PRIVATE KEY or PUBLIC KEY)")));
      }
    }
    if (raw->has_value()) {
      ref.set_inline_key(**raw);
      return ref;
    }
    absl::StatusOr<std::optional<std::string>> decrypted = DecryptKeyFile(args, path, *file);
    if (!decrypted.ok()) return decrypted.status();
    ref.set_inline_key(decrypted->has_value() ? **decrypted : *file);
  }
  return ref;
}

absl::StatusOr<std::vector<std::string>> InputPaths(const Args& args, bool allow_many) {
  std::vector<std::string> paths = args.positional();
  if (std::optional<std::string> in = args.Get("in")) {
    if (!paths.empty()) return UsageError("give the input either as --in FILE or as FILE, not both");
    paths.push_back(*in);
  }
  if (paths.empty()) paths.push_back("-");
  if (!allow_many && paths.size() > 1) {
    return UsageError(absl::StrCat("expected one input, got ", paths.size()));
  }
  return paths;
}

absl::StatusOr<std::string> ReadInput(const Args& args) {
  absl::StatusOr<std::vector<std::string>> paths = InputPaths(args, /*allow_many=*/false);
  if (!paths.ok()) return paths.status();
  return ReadFile(paths->front(), kWholeInputLimit);
}

absl::StatusOr<std::optional<std::string>> BytesFlag(const Args& args,
                                                     absl::string_view text_flag,
                                                     absl::string_view hex_flag) {
  std::optional<std::string> text = args.Get(text_flag);
  std::optional<std::string> hex = args.Get(hex_flag);
  if (text.has_value() && hex.has_value()) {
    return UsageError(absl::StrCat("give only one of --", text_flag, " and --", hex_flag));
  }
  if (text.has_value()) return text;
  if (hex.has_value()) {
    absl::StatusOr<std::string> bytes = DecodeHexFlag(hex_flag, *hex);
    if (!bytes.ok()) return bytes.status();
    return std::optional<std::string>(*std::move(bytes));
  }
  return std::optional<std::string>();
}

absl::StatusOr<uint64_t> UintFlag(const Args& args, absl::string_view name, uint64_t fallback,
                                  uint64_t min, uint64_t max) {
  std::optional<std::string> text = args.Get(name);
  if (!text.has_value()) return fallback;
  uint64_t value;
  if (!absl::SimpleAtoi(*text, &value) || value < min || value > max) {
    return UsageError(absl::StrCat("--", name, " ", *text, ": expected an integer in [", min,
                                   ", ", max, "]"));
  }
  return value;
}

absl::Status WriteOutput(const Args& args, absl::string_view bytes, bool private_file) {
  Output out(args.Get("out").value_or(""), private_file);
  if (absl::Status s = out.Write(bytes); !s.ok()) return s;
  return out.Close();
}

absl::StatusOr<std::string> ReadEncodedFile(const std::string& path, Encoding encoding,
                                            absl::string_view what) {
  absl::StatusOr<std::string> text = ReadFile(path, kWholeInputLimit);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::string> bytes = DecodeAll(encoding, *text);
  if (!bytes.ok()) {
    return UsageError(absl::StrCat(what, " ", path, ": ", bytes.status().message(),
                                   " (see --format)"));
  }
  return bytes;
}

}  // namespace smcrypt::cli
