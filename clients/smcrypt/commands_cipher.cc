// encrypt and decrypt: Encrypt, Decrypt, EncryptBatch, EncryptStream, DecryptStream.
//
// Byte layout written by `encrypt` and read by `decrypt` (then encoded per --format):
//   nonce || ciphertext || tag
// The nonce is the one the server drew (16 bytes for CBC and CTR, 12 for GCM and CCM,
// none for ECB); it is left out when the caller chose it with --nonce (decrypt then needs
// the same --nonce). The tag is present for GCM and CCM only. With --stream, CBC/ECB/CTR
// give the same bytes as the one-shot form; GCM/CCM give nonce || segment_0 || segment_1
// ..., each segment being up to --chunk-size bytes of ciphertext followed by its tag
// (EncryptStreamRequest in crypto.proto), so decrypt --stream needs the same
// --chunk-size and --tag-length.
#include <cstdio>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "clients/smcrypt/bidi_stream.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/io.h"
#include "clients/smcrypt/session.h"

namespace smcrypt::cli {
namespace {

namespace v1 = ::smcrypt::v1;

constexpr uint64_t kDefaultChunkSize = 64 * 1024;
constexpr uint64_t kMaxChunkSize = 3 * 1024 * 1024;  // under the 4 MiB message limit
constexpr size_t kDefaultTagLength = 16;
constexpr size_t kBatchBytes = 2 << 20;

// CipherParams: the flags shared by encrypt and decrypt.
struct CipherParams {
  v1::Algorithm alg;
  Encoding format;
  v1::KeyRef key;
  std::optional<std::string> nonce;
  std::string aad;
  uint32_t tag_length = 0;  // 0: the default (16)
  v1::Padding padding = v1::PADDING_UNSPECIFIED;
  bool stream = false;
  size_t chunk_size = kDefaultChunkSize;
};

absl::StatusOr<CipherParams> ParamsFromFlags(const Args& args) {
  CipherParams p;
  absl::StatusOr<v1::Algorithm> alg = AlgorithmFlag(args, AlgorithmFamily::kSymmetric,
                                                    v1::SM4_GCM);
  if (!alg.ok()) return alg.status();
  p.alg = *alg;
  std::string name = AlgorithmName(p.alg);
  absl::StatusOr<Encoding> format = FormatFlag(args, Encoding::kHex);
  if (!format.ok()) return format.status();
  p.format = *format;
  absl::StatusOr<v1::KeyRef> key = KeyFlag(args, *alg);
  if (!key.ok()) return key.status();
  p.key = *std::move(key);
  if (args.Has("nonce") && args.Has("iv")) return UsageError("--iv is --nonce: give one of them");
  if (std::optional<std::string> hex = args.Has("iv") ? args.Get("iv") : args.Get("nonce")) {
    absl::StatusOr<std::string> nonce = DecodeHexFlag("nonce", *hex);
    if (!nonce.ok()) return nonce.status();
    p.nonce = *std::move(nonce);
  }
  absl::StatusOr<std::optional<std::string>> aad = BytesFlag(args, "aad", "aad-hex");
  if (!aad.ok()) return aad.status();
  if (aad->has_value()) {
    if (!IsAead(p.alg)) return UsageError(absl::StrCat("--aad applies to GCM and CCM, not ", name));
    p.aad = **aad;
  }
  if (args.Has("tag-length")) {
    if (!IsAead(p.alg)) {
      return UsageError(absl::StrCat("--tag-length applies to GCM and CCM, not ", name));
    }
    absl::StatusOr<uint64_t> t = UintFlag(args, "tag-length", 16, 4, 16);
    if (!t.ok()) return t.status();
    p.tag_length = static_cast<uint32_t>(*t);
  }
  if (std::optional<std::string> pad = args.Get("padding")) {
    if (!UsesPadding(p.alg)) {
      return UsageError(absl::StrCat("--padding applies to ECB and CBC, not ", name));
    }
    std::string lower = absl::AsciiStrToLower(*pad);
    if (lower == "pkcs7") {
      p.padding = v1::PADDING_PKCS7;
    } else if (lower == "none") {
      p.padding = v1::PADDING_NONE;
    } else {
      return UsageError(absl::StrCat("--padding ", *pad, ": expected pkcs7 or none"));
    }
  }
  p.stream = args.Has("stream");
  if (args.Has("chunk-size") && !p.stream) return UsageError("--chunk-size goes with --stream");
  absl::StatusOr<uint64_t> chunk =
      UintFlag(args, "chunk-size", kDefaultChunkSize, 1, kMaxChunkSize);
  if (!chunk.ok()) return chunk.status();
  p.chunk_size = *chunk;
  if (!IsAead(p.alg) && p.stream && p.chunk_size % 16 != 0) {
    return UsageError("--chunk-size must be a multiple of 16 for ECB, CBC and CTR");
  }
  return p;
}

size_t TagLength(const CipherParams& p) {
  if (!IsAead(p.alg)) return 0;
  return p.tag_length == 0 ? kDefaultTagLength : p.tag_length;
}

// ---- encrypt ----------------------------------------------------------------------

v1::EncryptRequest NewEncryptRequest(const CipherParams& p, std::string plaintext) {
  v1::EncryptRequest req;
  req.set_algorithm(p.alg);
  *req.mutable_key() = p.key;
  if (p.nonce.has_value()) req.set_nonce(*p.nonce);
  req.set_aad(p.aad);
  req.set_tag_length(p.tag_length);
  req.set_padding(p.padding);
  req.set_plaintext(std::move(plaintext));
  return req;
}

std::string EncryptedBytes(const CipherParams& p, absl::string_view nonce,
                           absl::string_view ciphertext, absl::string_view tag) {
  return absl::StrCat(p.nonce.has_value() ? "" : nonce, ciphertext, tag);
}

absl::Status EncryptStreamed(const Session& session, const CipherParams& p, Input& in,
                             Output& out) {
  v1::EncryptStreamParams params;
  params.set_algorithm(p.alg);
  *params.mutable_key() = p.key;
  if (p.nonce.has_value()) params.set_nonce(*p.nonce);
  params.set_aad(p.aad);
  params.set_tag_length(p.tag_length);
  params.set_padding(p.padding);

  grpc::ClientContext ctx;
  session.Prepare(&ctx, /*streaming=*/true);
  auto stream = session.stub().EncryptStream(&ctx);
  Encoder encoder(p.format);
  bool first = true;
  absl::Status s = PumpBidiStream<v1::EncryptStreamRequest, v1::EncryptStreamResponse>(
      ctx, *stream,
      [&]() -> absl::StatusOr<std::optional<v1::EncryptStreamRequest>> {
        absl::StatusOr<std::string> chunk = in.Read(p.chunk_size);
        if (!chunk.ok()) return chunk.status();
        if (chunk->empty() && !first) return std::nullopt;
        v1::EncryptStreamRequest req;
        if (first) *req.mutable_params() = params;  // the first chunk is segment 0
        first = false;
        req.set_plaintext(*std::move(chunk));
        return req;
      },
      [&](const v1::EncryptStreamResponse& resp) {
        NoteKeyVersion("encrypt", resp.key_version());  // set in the first response only
        return out.Write(encoder.Update(
            EncryptedBytes(p, resp.nonce(), resp.ciphertext(), resp.tag())));
      });
  if (!s.ok()) return s;
  return out.Write(encoder.Finish());
}

absl::StatusOr<int> EncryptMany(const Args& args, const Session& session, const CipherParams& p,
                                const std::vector<std::string>& paths) {
  if (p.nonce.has_value()) {
    return UsageError("--nonce with several files would reuse one nonce under one key; "
                      "let the server draw a nonce per file");
  }
  if (args.Has("out")) return UsageError("--out takes one input; several files go to FILE" ".enc");
  std::string suffix = args.Get("suffix").value_or(".enc");
  if (suffix.empty()) return UsageError("--suffix must not be empty");
  std::vector<absl::Status> status(paths.size());
  std::vector<std::string> result(paths.size());
  v1::EncryptBatchRequest batch;
  std::vector<size_t> index;
  size_t bytes = 0;
  uint32_t noted_version = 0;  // a reload between two batches can change the primary version
  auto flush = [&] {
    if (batch.items_size() == 0) return;
    v1::EncryptBatchResponse resp;
    grpc::ClientContext ctx;
    session.Prepare(&ctx);
    grpc::Status s = session.stub().EncryptBatch(&ctx, batch, &resp);
    for (size_t i = 0; i < index.size(); ++i) {
      size_t k = index[i];
      if (!s.ok()) {
        status[k] = RpcStatus(s);
      } else if (static_cast<int>(i) < resp.results_size()) {
        const v1::EncryptBatchResult& r = resp.results(i);
        status[k] = ItemStatus(r.status());
        if (r.key_version() != noted_version && r.key_version() != 0) {
          noted_version = r.key_version();
          NoteKeyVersion("encrypt", noted_version);
        }
        result[k] = EncryptedBytes(p, r.nonce(), r.ciphertext(), r.tag());
      } else {
        status[k] = RpcStatus(grpc::Status(grpc::StatusCode::INTERNAL,
                                           "EncryptBatch returned fewer results than items"));
      }
    }
    batch.clear_items();
    index.clear();
    bytes = 0;
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i] == "-") {
      status[i] = UsageError("stdin cannot be one of several inputs");
      continue;
    }
    absl::StatusOr<std::string> data = ReadFile(paths[i], kWholeInputLimit);
    if (!data.ok()) {
      status[i] = data.status();
      continue;
    }
    if (bytes + data->size() > kBatchBytes) flush();
    bytes += data->size();
    *batch.add_items() = NewEncryptRequest(p, *std::move(data));
    index.push_back(i);
  }
  flush();
  int rc = kExitOk;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (status[i].ok()) {
      Output out(paths[i] + suffix);
      status[i] = out.Write(EncodeAll(p.format, result[i]));
      if (status[i].ok()) status[i] = out.Close();
      if (status[i].ok()) {
        std::printf("%s -> %s\n", paths[i].c_str(), out.path().c_str());
        continue;
      }
      out.Discard();
    }
    std::fprintf(stderr, "smcrypt encrypt: %s: %s\n", TerminalSafe(paths[i]).c_str(),
                 DescribeError(status[i]).c_str());
    rc = std::max(rc, ExitCodeFor(status[i]));
  }
  return rc;
}

absl::StatusOr<int> RunEncrypt(const Args& args) {
  absl::StatusOr<CipherParams> p = ParamsFromFlags(args);
  if (!p.ok()) return p.status();
  if (args.Has("nonce-length")) return UsageError("--nonce-length is a decrypt flag");
  absl::StatusOr<std::vector<std::string>> paths = InputPaths(args, /*allow_many=*/true);
  if (!paths.ok()) return paths.status();
  if (paths->size() > 1 && p->stream) return UsageError("--stream takes one input");
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  if (paths->size() > 1) return EncryptMany(args, *session, *p, *paths);

  absl::StatusOr<Input> in = Input::Open(paths->front());
  if (!in.ok()) return in.status();
  Output out(args.Get("out").value_or(""));
  if (p->stream) {
    absl::Status s = EncryptStreamed(*session, *p, *in, out);
    if (s.ok()) s = out.Close();
    if (!s.ok()) {
      out.Discard();
      return s;
    }
    return kExitOk;
  }
  absl::StatusOr<std::string> data = in->ReadAll(kWholeInputLimit);
  if (!data.ok()) return data.status();
  v1::EncryptRequest req = NewEncryptRequest(*p, *std::move(data));
  v1::EncryptResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().Encrypt(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  NoteKeyVersion("encrypt", resp.key_version());
  std::string bytes = EncryptedBytes(*p, resp.nonce(), resp.ciphertext(), resp.tag());
  if (absl::Status w = WriteOutput(args, EncodeAll(p->format, bytes)); !w.ok()) return w;
  return kExitOk;
}

// ---- decrypt ----------------------------------------------------------------------

// DecodedInput reads an input through a Decoder in exact-size pieces.
class DecodedInput {
 public:
  DecodedInput(Input in, Encoding encoding) : in_(std::move(in)), decoder_(encoding) {}

  // Read returns `len` bytes, fewer only at the end of the input.
  absl::StatusOr<std::string> Read(size_t len) {
    while (buf_.size() < len && !eof_) {
      absl::StatusOr<std::string> chunk = in_.Read(64 * 1024);
      if (!chunk.ok()) return chunk.status();
      absl::Status s;
      if (chunk->empty()) {
        eof_ = true;
        s = decoder_.Finish(&buf_);
      } else {
        s = decoder_.Update(*chunk, &buf_);
      }
      if (!s.ok()) {
        return UsageError(absl::StrCat(in_.name(), ": ", s.message(), " (see --format)"));
      }
    }
    size_t n = std::min(len, buf_.size());
    std::string out = buf_.substr(0, n);
    buf_.erase(0, n);
    return out;
  }

 private:
  Input in_;
  Decoder decoder_;
  std::string buf_;
  bool eof_ = false;
};

absl::Status DecryptStreamed(const Session& session, const CipherParams& p, std::string nonce,
                             DecodedInput& in, Output& out) {
  v1::DecryptStreamRequest first;
  v1::DecryptStreamParams* params = first.mutable_params();
  params->set_algorithm(p.alg);
  *params->mutable_key() = p.key;
  params->set_nonce(std::move(nonce));
  params->set_aad(p.aad);
  params->set_padding(p.padding);

  grpc::ClientContext ctx;
  session.Prepare(&ctx, /*streaming=*/true);
  auto stream = session.stub().DecryptStream(&ctx);
  const size_t tag_len = TagLength(p);
  bool sent_params = false;
  return PumpBidiStream<v1::DecryptStreamRequest, v1::DecryptStreamResponse>(
      ctx, *stream,
      [&]() -> absl::StatusOr<std::optional<v1::DecryptStreamRequest>> {
        if (!sent_params) {
          sent_params = true;
          return first;
        }
        absl::StatusOr<std::string> piece = in.Read(p.chunk_size + tag_len);
        if (!piece.ok()) return piece.status();
        if (piece->empty()) return std::nullopt;
        v1::DecryptStreamRequest req;
        if (tag_len > 0) {
          if (piece->size() < tag_len) {
            return UsageError(absl::StrCat("truncated stream: the last segment has ",
                                           piece->size(), " bytes, less than the ", tag_len,
                                           "-byte tag"));
          }
          req.set_tag(piece->substr(piece->size() - tag_len));
          piece->resize(piece->size() - tag_len);
        }
        req.set_ciphertext(*std::move(piece));
        return req;
      },
      [&](const v1::DecryptStreamResponse& resp) {
        NoteKeyVersion("decrypt", resp.key_version());  // set in the first response only
        return out.Write(resp.plaintext());
      });
}

absl::StatusOr<int> RunDecrypt(const Args& args) {
  absl::StatusOr<CipherParams> p = ParamsFromFlags(args);
  if (!p.ok()) return p.status();
  if (args.Has("nonce-length") && p->nonce.has_value()) {
    return UsageError("--nonce-length describes a nonce inside the input; not with --nonce");
  }
  absl::StatusOr<uint64_t> nonce_len =
      UintFlag(args, "nonce-length", DefaultNonceSize(p->alg), 0, 1024);
  if (!nonce_len.ok()) return nonce_len.status();
  absl::StatusOr<std::vector<std::string>> paths = InputPaths(args, /*allow_many=*/false);
  if (!paths.ok()) return paths.status();
  absl::StatusOr<Input> raw_in = Input::Open(paths->front());
  if (!raw_in.ok()) return raw_in.status();
  DecodedInput in(*std::move(raw_in), p->format);

  std::string nonce;
  if (p->nonce.has_value()) {
    nonce = *p->nonce;
  } else {
    absl::StatusOr<std::string> n = in.Read(*nonce_len);
    if (!n.ok()) return n.status();
    if (n->size() < *nonce_len) {
      return UsageError(absl::StrCat("input too short: ", n->size(), " bytes, expected a ",
                                     *nonce_len, "-byte nonce first"));
    }
    nonce = *std::move(n);
  }
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  Output out(args.Get("out").value_or(""));

  if (p->stream) {
    absl::Status s = DecryptStreamed(*session, *p, std::move(nonce), in, out);
    if (s.ok()) s = out.Close();
    if (!s.ok()) {
      out.Discard();
      return s;
    }
    return kExitOk;
  }
  absl::StatusOr<std::string> body = in.Read(SIZE_MAX);
  if (!body.ok()) return body.status();
  const size_t tag_len = TagLength(*p);
  if (body->size() < tag_len) {
    return UsageError(absl::StrCat("input too short: ", body->size(),
                                   " bytes after the nonce, expected at least the ", tag_len,
                                   "-byte tag"));
  }
  v1::DecryptRequest req;
  req.set_algorithm(p->alg);
  *req.mutable_key() = p->key;
  req.set_nonce(std::move(nonce));
  req.set_tag(body->substr(body->size() - tag_len));
  body->resize(body->size() - tag_len);
  req.set_ciphertext(*std::move(body));
  req.set_aad(p->aad);
  req.set_padding(p->padding);
  v1::DecryptResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().Decrypt(&ctx, req, &resp);
  if (!s.ok()) {
    absl::Status st = RpcStatus(s);
    if (tag_len > 0 && ErrorReason(st) == kReasonDecryptionFailed) {
      // The server says no more than "decryption failed"; the usual causes are the
      // caller's, and one of them is this command's to name.
      return RpcStatus(grpc::Status(
          s.error_code(),
          absl::StrCat(s.error_message(),
                       " (wrong key, --aad or --nonce, or altered data; a file written by "
                       "encrypt --stream needs decrypt --stream and the same --chunk-size)"),
          s.error_details()));
    }
    return st;
  }
  NoteKeyVersion("decrypt", resp.key_version());
  if (absl::Status w = out.Write(resp.plaintext()); !w.ok()) return w;
  if (absl::Status w = out.Close(); !w.ok()) return w;
  return kExitOk;
}

const std::vector<FlagSpec> kCipherFlags = {
    {"alg", "ALG", "SM4-GCM (default), SM4-CCM, SM4-CBC, SM4-CTR, SM4-CFB, SM4-OFB, "
                   "SM4-XTS, SM4-XTS-GB (32-byte key; no --stream; the output is as long as "
                   "the input only with --iv, else the drawn IV is written first), SM4-ECB, "
                   "AES-128-*, AES-256-* (ECB, CBC, CTR, GCM)"},
    {"nonce", "HEX", "IV/nonce; default: the server (or, with --local, this process) draws "
                     "one and it travels in the output"},
    {"iv", "HEX", "the same as --nonce (openssl's and gmssl's name)"},
    {"aad", "TEXT", "associated data (GCM, CCM)"},
    {"aad-hex", "HEX", "associated data in hex (GCM, CCM)"},
    {"tag-length", "N", "tag bytes: GCM 12-16, CCM 4-16 even (default 16)"},
    {"padding", "PAD", "pkcs7 (default) or none (ECB, CBC)"},
    {"stream", "", "EncryptStream/DecryptStream: data of any size in chunks"},
    {"chunk-size", "N", "--stream chunk (GCM/CCM segment) size in bytes (default 65536)"},
};

}  // namespace

std::vector<Command> CipherCommands() {
  std::vector<FlagSpec> encrypt_flags = kCipherFlags;
  encrypt_flags.push_back({"suffix", "SUFFIX", "with several FILEs: output names FILE+SUFFIX "
                                               "(default .enc)"});
  std::vector<FlagSpec> decrypt_flags = kCipherFlags;
  decrypt_flags.push_back({"nonce-length", "N", "bytes of nonce at the start of the input "
                                                "(default 12 GCM/CCM, 16 CBC/CTR, 0 ECB)"});
  return {
      {"encrypt", "symmetric encryption (SM4, AES: GCM, CCM, CBC, CTR, ECB; SM4: CFB, OFB, XTS)",
       "smcrypt encrypt [--alg ALG] KEY [--aad TEXT] [--stream] [FILE...]",
       R"(Encrypts FILE (or stdin) and writes nonce || ciphertext || tag, encoded per
--format (default hex; use --format raw for compact files). The server draws the nonce
unless --nonce is given; a chosen nonce is not written (decrypt needs the same --nonce).
Never reuse a nonce under one key. --alg defaults to SM4-GCM.
With --stream, data of any size goes through EncryptStream in --chunk-size pieces; for
GCM/CCM the output is segmented (each segment carries its own tag), so decrypt it with
--stream and the same --chunk-size. With several FILEs (EncryptBatch) each result is
written to FILE.enc.

Examples:
  smcrypt keygen --alg sm4-gcm --out sm4.key
  smcrypt encrypt --key sm4.key --aad hdr --out msg.enc msg.txt
  smcrypt encrypt --alg sm4-cbc --key-hex 0123456789abcdeffedcba9876543210 msg.txt
  smcrypt encrypt --key sm4.key --stream --format raw --out big.enc big.bin)",
       encrypt_flags, kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunEncrypt},
      {"decrypt", "symmetric decryption (inverse of encrypt)",
       "smcrypt decrypt [--alg ALG] KEY [--aad TEXT] [--stream] [FILE]",
       R"(Reads nonce || ciphertext || tag as encrypt wrote it (decoded per --format,
default hex) and writes the plaintext as raw bytes. Give the same --alg, --aad,
--tag-length, --padding (and --nonce, --chunk-size) as when encrypting. Any
authentication or padding failure is the single "decryption failed" error, reason
DECRYPTION_FAILED, and exits 1 (as a signature that does not verify). With --stream, a failure part-way deletes the --out file.

Examples:
  smcrypt decrypt --key sm4.key --aad hdr --out msg.txt msg.enc
  smcrypt decrypt --alg sm4-cbc --key-hex 0123456789abcdeffedcba9876543210 msg.hex
  smcrypt decrypt --key sm4.key --stream --format raw --out big.bin big.enc)",
       decrypt_flags, kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunDecrypt},
  };
}

}  // namespace smcrypt::cli
