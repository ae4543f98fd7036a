// streaming.h — encryption of data of any size, chunk by chunk: the segmented AEAD stream
// (STREAM), the chunked block-mode streams (ECB, CBC, CTR, CFB, OFB) and the HPKE
// stream framing.
// These are the wire formats of EncryptStream / DecryptStream and HybridEncryptStream /
// HybridDecryptStream (proto/smcrypt/v1/crypto.proto): a change to any of them is a
// change of the wire contract.
//
// Segmented AEAD stream (GCM, CCM): the nonce-based STREAM construction of Hoang,
// Reyhanitabar, Rogaway and Vizár, "Online Authenticated-Encryption and its
// Nonce-Reuse Misuse-Resistance" (CRYPTO 2015), under a key of its own per stream, as
// Tink's streaming AEAD does. A stream has a 12-byte nonce N (unique per key K); its
// key is
//
//   K_N = HKDF(salt = N, IKM = K,
//              info = "smcrypt aead stream" ‖ 0x00 ‖ algorithm name ‖ 0x00 ‖ H(aad),
//              L = |K|)          (RFC 5869; H and HKDF's hash: SM3 for SM4, SHA-256 for AES)
//
// with the caller's aad hashed once into it, as Tink binds its associated data into the
// stream key; segments 0, 1, …, last (at most 2^32 − 1 of them) are sealed under K_N
// with an empty aad and
//
//   N_i = 0^7 ‖ BE32(i) ‖ last_i             last_i = 0x01 on the final segment, else 0x00
//
// and travel as (ciphertext_i, tag_i). Every non-empty plaintext
// chunk is one segment; the final segment is the last chunk (empty when the stream is).
// A reordered, dropped or repeated segment, a stream cut after any segment, a non-final
// segment presented as final (and the reverse), or any change to N or the aad (which
// changes K_N) fails its tag. Streams whose nonces differ in any way use unrelated keys.
//
// HPKE stream (RFC 9180 base mode, smcrypt/hpke.h): one context for the whole stream,
//
//   header (7: version 0x01, kem_id, kdf_id, aead_id) ‖ enc (65) ‖ chunk_0 ‖ … ‖ chunk_last
//   chunk_i = flag (1: 0x00, or 0x01 on the final chunk)
//             ‖ length (4, big-endian: |ct_i| + 16)
//             ‖ ct_i ‖ tag_i = Seal(aad = header ‖ flag ‖ caller aad, pt_i)
//
// chunk i is sealed at sequence number i, so its nonce is base_nonce XOR I2OSP(i, 12)
// (RFC 9180 §5.2); reordering, dropping or repeating a chunk, cutting the stream before
// the final chunk and flipping a flag all fail.
//
// Errors (house style): InvalidArgument with expected and actual values for sizes and
// framing; InvalidArgument "decryption failed" for every authentication failure, never
// saying which check failed; the Aead's, Cipher's or HpkeContext's errors otherwise.
// Plaintext is released only after its segment's or chunk's tag verified. Tags are
// checked in constant time by the underlying Aead; framing bytes (lengths, flags,
// header) are public. Buffered plaintext is wiped when consumed and on destruction.
//
// Thread safety: one stream object is used by one thread at a time.
#ifndef SMCRYPT_STREAMING_H_
#define SMCRYPT_STREAMING_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/hpke.h"
#include "smcrypt/primitives/aead.h"
#include "smcrypt/primitives/cipher.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

// StreamChunk is one output of a symmetric stream: `data`, and for an AEAD segment its
// `tag` (empty for block modes).
struct StreamChunk {
  std::string data;
  std::string tag;
};

// StreamEncryptor encrypts a stream chunk by chunk.
class StreamEncryptor {
 public:
  virtual ~StreamEncryptor() = default;
  // nonce is the stream's nonce or IV (12 bytes for AEAD, the cipher's iv_size() else).
  virtual absl::string_view nonce() const = 0;
  // Update consumes `plaintext` and returns output when some is ready (AEAD: the
  // previous non-empty chunk, sealed as a non-final segment; block modes: every whole
  // block buffered so far).
  virtual absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view plaintext) = 0;
  // Finish returns the last output (AEAD: the final segment; block modes: the rest,
  // padded). No call after it.
  virtual absl::StatusOr<StreamChunk> Finish() = 0;
};

// StreamDecryptor is the inverse of StreamEncryptor.
class StreamDecryptor {
 public:
  virtual ~StreamDecryptor() = default;
  // Update consumes one segment (AEAD: its ciphertext and tag) or a ciphertext chunk of
  // any size (block modes: `tag` must be empty) and returns plaintext when some is
  // ready (AEAD: the previous segment, opened as non-final).
  virtual absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view ciphertext,
                                                            absl::string_view tag) = 0;
  // Finish opens the final segment (AEAD) or the final block (padded ECB/CBC).
  virtual absl::StatusOr<StreamChunk> Finish() = 0;
};

// ---- Segmented AEAD stream (STREAM) ------------------------------------------------

inline constexpr size_t kAeadStreamNonceSize = 12;
// kAeadStreamMaxSegments: segment indices are 32 bits; index 2^32 − 1 is never used.
inline constexpr uint32_t kAeadStreamMaxSegments = UINT32_MAX;

// CheckAeadStreamNonce: OK for a kAeadStreamNonceSize-byte nonce, else InvalidArgument
// "GCM/CCM stream nonce must be 12 bytes, got N".
absl::Status CheckAeadStreamNonce(absl::string_view nonce);

// kAeadStreamKeyInfo is the HKDF info prefix of K_N (followed by 0x00 and the name).
inline constexpr char kAeadStreamKeyInfo[] = "smcrypt aead stream";

// AeadStreamKey returns K_N (|K| bytes) for `key` K of GCM/CCM algorithm `alg`, the
// stream nonce N and `aad`. Errors: CheckAeadStreamNonce's; InvalidArgument for an
// algorithm that is not GCM or CCM and NewAead's errors for the key. Constant time in K.
absl::StatusOr<SecretData> AeadStreamKey(Algorithm alg, absl::string_view key,
                                         absl::string_view nonce, absl::string_view aad);

// AeadStreamSegmentNonce returns N_i = 0^7 ‖ BE32(index) ‖ last, 12 bytes.
std::string AeadStreamSegmentNonce(uint32_t index, bool last);

// NewAeadStreamEncryptor seals segments of a stream under `key` with nonce N = `nonce`
// and `aad` (bound through K_N), tags of `tag_size` bytes (0: 16). Errors:
// NewAead's for the key and tag size, CheckAeadStreamNonce's; at the 2^32 − 1-th
// segment InvalidArgument "stream has more than 2^32 - 1 segments".
absl::StatusOr<std::unique_ptr<StreamEncryptor>> NewAeadStreamEncryptor(
    Algorithm alg, absl::string_view key, size_t tag_size, absl::string_view nonce,
    absl::string_view aad);

// NewAeadStreamDecryptor opens what NewAeadStreamEncryptor sealed with the same key,
// nonce and aad; the tag size is the first segment's. Errors: AeadStreamKey's. Update
// errors: InvalidArgument "every GCM/CCM stream segment needs its tag" for a segment
// without one, InvalidArgument for a tag size other than the first segment's (or one
// NewAead refuses), InvalidArgument "decryption failed" when the previous segment
// fails as non-final. Finish: InvalidArgument when no segment came, "decryption failed"
// when the last one fails as final (a truncated stream).
absl::StatusOr<std::unique_ptr<StreamDecryptor>> NewAeadStreamDecryptor(
    Algorithm alg, absl::string_view key, absl::string_view nonce, absl::string_view aad);

// ---- Block-mode streams (ECB, CBC, CTR, CFB, OFB) ----------------------------------
//
// The concatenated output is the one-shot Cipher's ciphertext (or plaintext) of the
// whole stream, whatever the chunk boundaries: whole blocks are processed as they
// arrive, CBC and CFB chain through the last ciphertext block, CTR advances its
// counter, OFB carries its last keystream block (P ⊕ C of the last block), and padded
// ECB/CBC hold back the final block for PKCS#7. CTR, CFB and OFB take data of any
// length: the bytes after the last whole block are processed by Finish (a final
// partial segment). XTS has no stream: one call is one data unit.

inline constexpr size_t kStreamBlockSize = 16;

// CtrAddBlocks adds `num_blocks` to `counter`, read as one big-endian integer of its
// whole length, modulo 2^(8·length) (SM4-CTR and AES-CTR as OpenSSL runs them: the whole
// 16-byte block is the counter). Branches only on the public block count.
void CtrAddBlocks(std::string& counter, uint64_t num_blocks);

// NewBlockStreamEncryptor / NewBlockStreamDecryptor: `mode` kEcb, kCbc, kCtr, kCfb or
// kOfb; `bulk` the mode's Cipher with Padding::kNone (NewSm4Cfb / NewSm4Ofb for CFB and
// OFB, which have no padding); `last` the same with Padding::kPkcs7, used for the
// final block when `padded` (ECB/CBC only; ignored and may be null otherwise); `iv` of
// bulk->iv_size() bytes (empty for ECB). Errors: InvalidArgument "nonce must be N bytes
// for <alg>, got M" (alg named by `alg_name`), InvalidArgument for another mode. Finish
// errors: InvalidArgument for unpadded data that is not a multiple of 16 bytes, or a
// padded ciphertext that is not a non-zero multiple of 16; "decryption failed" for bad
// padding.
absl::StatusOr<std::unique_ptr<StreamEncryptor>> NewBlockStreamEncryptor(
    CipherMode mode, std::unique_ptr<Cipher> bulk, std::unique_ptr<Cipher> last,
    absl::string_view iv, bool padded, absl::string_view alg_name);
absl::StatusOr<std::unique_ptr<StreamDecryptor>> NewBlockStreamDecryptor(
    CipherMode mode, std::unique_ptr<Cipher> bulk, std::unique_ptr<Cipher> last,
    absl::string_view iv, bool padded, absl::string_view alg_name);

// ---- HPKE stream -------------------------------------------------------------------

inline constexpr size_t kHpkeStreamPrefixSize = kHpkeWireHeaderSize + kHpkeEncSize;  // 72
inline constexpr size_t kHpkeStreamMaxChunkSize = size_t{1} << 20;   // plaintext bytes
inline constexpr uint64_t kHpkeStreamMaxChunks = uint64_t{1} << 32;  // final chunk included
inline constexpr size_t kHpkeStreamChunkHeaderSize = 5;              // flag ‖ length
inline constexpr uint8_t kHpkeStreamFlagMore = 0x00;
inline constexpr uint8_t kHpkeStreamFlagFinal = 0x01;

// HpkeStreamChunkAad returns header ‖ flag ‖ aad, the AEAD aad of a chunk.
std::string HpkeStreamChunkAad(absl::string_view header, uint8_t flag, absl::string_view aad);

// CheckHpkeStreamHeader checks a 7-byte stream header against `suite`. Errors:
// InvalidArgument "hybrid stream: format version: expected 0x01, got 0x.." or
// "hybrid stream: kem_id: expected 0xff10 (HPKE-SM2-SM3-SM4GCM), got 0x...." (kdf_id,
// aead_id likewise); InvalidArgument for a header that is not 7 bytes.
absl::Status CheckHpkeStreamHeader(HpkeSuite suite, absl::string_view header);

// HpkeStreamEncryptor seals a stream to a recipient's public key.
class HpkeStreamEncryptor final {
 public:
  // New parses `recipient_public_key` exactly as NewHpkeEncrypt does (same encodings,
  // same errors: HpkeParsePublicKey), runs SetupBaseS with `info` and binds `aad` to
  // every chunk.
  static absl::StatusOr<std::unique_ptr<HpkeStreamEncryptor>> New(
      HpkeSuite suite, absl::string_view recipient_public_key, absl::string_view info,
      absl::string_view aad);

  // prefix is header ‖ enc (kHpkeStreamPrefixSize bytes), the first bytes of the stream.
  absl::string_view prefix() const { return prefix_; }
  // Update seals `plaintext` (at most kHpkeStreamMaxChunkSize bytes, else
  // InvalidArgument) as one non-final chunk and returns it; an empty `plaintext` gives
  // no chunk (empty output). InvalidArgument once kHpkeStreamMaxChunks − 1 chunks were
  // sealed (room is kept for the final chunk).
  absl::StatusOr<std::string> Update(absl::string_view plaintext);
  // Finish returns the final chunk (flag 0x01, empty plaintext). No call after it.
  absl::StatusOr<std::string> Finish();

 private:
  HpkeStreamEncryptor(std::string prefix, std::unique_ptr<HpkeContext> ctx, std::string aad);
  absl::StatusOr<std::string> Seal(uint8_t flag, absl::string_view plaintext);

  const std::string prefix_;  // header ‖ enc
  std::unique_ptr<HpkeContext> ctx_;
  const std::string aad_;
};

// HpkeStreamDecryptor opens a stream given in pieces of any size (chunk boundaries need
// not match the pieces).
class HpkeStreamDecryptor final {
 public:
  // New parses `recipient_private_key` exactly as NewHpkeDecrypt does
  // (HpkeParsePrivateKey; same errors); the scalar is kept in wiped storage.
  static absl::StatusOr<std::unique_ptr<HpkeStreamDecryptor>> New(
      HpkeSuite suite, absl::string_view recipient_private_key, absl::string_view info,
      absl::string_view aad);

  // Update consumes the next bytes and returns the plaintext of every chunk they complete
  // (possibly empty). Errors: InvalidArgument naming the field for a bad header (as
  // CheckHpkeStreamHeader) or chunk framing (flag, length outside 16 to 2^20 + 16), or
  // bytes after the final chunk; InvalidArgument "decryption failed" for any
  // authentication failure (enc, ciphertext, tag, aad, info, order). After an error the
  // object must not be used further.
  absl::StatusOr<std::string> Update(absl::string_view data);
  // Finish: OK only when the final chunk was opened; InvalidArgument otherwise (a
  // truncated stream).
  absl::Status Finish();
  // opened_ciphertext_size is the total of ct_i ‖ tag_i bytes of the chunks opened so far.
  uint64_t opened_ciphertext_size() const { return opened_; }
  // buffered_size: the bytes given to Update that have not completed a chunk yet.
  size_t buffered_size() const { return buffer_.size(); }

 private:
  HpkeStreamDecryptor(HpkeSuite suite, SecretData sk, std::string info, std::string aad);

  const HpkeSuite suite_;
  const std::string header_;
  const SecretData sk_;
  const std::string info_;
  const std::string aad_;
  std::unique_ptr<HpkeContext> ctx_;
  std::string buffer_;  // ciphertext not yet opened
  uint64_t opened_ = 0;
  bool done_ = false;
};

}  // namespace smcrypt

#endif  // SMCRYPT_STREAMING_H_
