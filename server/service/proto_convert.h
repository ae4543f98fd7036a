// proto_convert.h — smcrypt.v1 request fields to CryptoEngine inputs, and back.
//
// The conversions every handler of the service shares: algorithms, key
// references, signature and cipher options, per-item batch statuses, the access-policy
// view of a key, and the wiping of inline keys a request carries. Nothing here calls the
// engine or gRPC; each function is pure apart from WipeKeyRef/WipeInlineKeys.
//
// Lifetimes: every string_view in a result (keys, data, nonces, AAD, info) points into
// the request it came from, which must outlive the result.
#ifndef SMCRYPT_SERVER_PROTO_CONVERT_H_
#define SMCRYPT_SERVER_PROTO_CONVERT_H_

#include <optional>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/engine/access_policy.h"
#include "server/engine/crypto_engine.h"
#include "smcrypt/v1/crypto.pb.h"

namespace smcrypt::server {

namespace v1 = ::smcrypt::v1;

// ToAlgorithm maps the wire enum to the engine's Algorithm (proto values 1..N follow
// AllAlgorithms()' order; server_proto_algorithm_test pins it). INVALID_ARGUMENT
// "algorithm is required" for ALGORITHM_UNSPECIFIED, "unknown algorithm value N" for a
// value this build does not know.
absl::StatusOr<Algorithm> ToAlgorithm(v1::Algorithm alg);

// ToKey is the engine's view of a KeyRef: a key_id with its key_version, inline key
// bytes (a view into `key`), or no key when neither is set.
KeyInput ToKey(const v1::KeyRef& key);

// ToSignatureOptions converts SignatureOptions; `*user_id_set` says whether the request
// set user_id (SM2 then uses it instead of the default ID). INVALID_ARGUMENT for an
// unknown encoding value. UNSPECIFIED encoding means DER.
absl::StatusOr<SignatureOptions> ToSignatureOptions(const v1::SignatureOptions& in,
                                                    bool* user_id_set);

// ToPadding: UNSPECIFIED → nullopt (the engine's default, PKCS#7); INVALID_ARGUMENT for
// an unknown value.
absl::StatusOr<std::optional<Padding>> ToPadding(v1::Padding p);

// ToSm2Format converts the SM2 ciphertext layout (UNSPECIFIED → C1C3C2). A format other
// than UNSPECIFIED with a non-SM2 `alg` is INVALID_ARGUMENT, checked before the value.
absl::StatusOr<Sm2CiphertextFormat> ToSm2Format(Algorithm alg, v1::Sm2CiphertextFormat f);

// SymmetricFrom fills SymmetricParams from the common fields of a symmetric request or
// stream params (algorithm, key, aad, padding), with the given nonce (nullopt: drawn by
// the engine) and tag length. Errors: ToAlgorithm's, then ToPadding's.
template <typename Req>
absl::StatusOr<SymmetricParams> SymmetricFrom(const Req& req,
                                              std::optional<absl::string_view> nonce,
                                              uint32_t tag_length) {
  SymmetricParams p;
  absl::StatusOr<Algorithm> alg = ToAlgorithm(req.algorithm());
  if (!alg.ok()) return alg.status();
  p.algorithm = *alg;
  p.key = ToKey(req.key());
  p.nonce = nonce;
  p.aad = req.aad();
  p.tag_length = tag_length;
  absl::StatusOr<std::optional<Padding>> padding = ToPadding(req.padding());
  if (!padding.ok()) return padding.status();
  p.padding = *padding;
  return p;
}

// HybridFrom converts the params of a hybrid (HPKE) stream. Errors: ToAlgorithm's.
absl::StatusOr<HybridStreamParams> HybridFrom(const v1::HybridStreamParams& in);

// KeyExchangeFrom converts the params of a KeyExchange stream: role required, user IDs
// absent → "1234567812345678", key_length 0 → 16. Errors: ToAlgorithm's;
// INVALID_ARGUMENT for an unset or unknown role. (Sizes and IDs are checked by
// Sm2KeyExchange::New.)
absl::StatusOr<KeyExchangeInput> KeyExchangeFrom(const v1::KeyExchangeParams& in);

// SignItemFrom / VerifyItemFrom convert one Sign / Verify request (a unary call, a
// queued call or a batch item) for the engine. Errors: ToAlgorithm's, then
// ToSignatureOptions'.
absl::StatusOr<SignItem> SignItemFrom(const v1::SignRequest& req);
absl::StatusOr<VerifyItem> VerifyItemFrom(const v1::VerifyRequest& req);

// HashItemFrom, PublicKeyEncryptItemFrom and HybridEncryptItemFrom convert one Hash,
// PublicKeyEncrypt or HybridEncrypt request (a call, a queued call or a batch item) for
// the engine. Errors: ToAlgorithm's, then (PublicKeyEncrypt) ToSm2Format's.
absl::StatusOr<HashItem> HashItemFrom(const v1::HashRequest& req);
absl::StatusOr<PublicKeyEncryptItem> PublicKeyEncryptItemFrom(
    const v1::PublicKeyEncryptRequest& req);
absl::StatusOr<HybridEncryptItem> HybridEncryptItemFrom(const v1::HybridEncryptRequest& req);

// SetItemStatus writes a batch item's status: the canonical code and the message cut to
// kMaxStatusMessageSize bytes (status_util.h), as ToGrpcStatus does for a call.
void SetItemStatus(const absl::Status& s, v1::Status* out);

// ToAccessKey is the access policy's view of a key: its key_id, "inline", or none
// (`key` null or unset). The key_id view points into `*key`.
AccessKey ToAccessKey(const v1::KeyRef* key);

// AlgorithmLabel is the engine name of `alg` for policy and audit lines ("SM2",
// "SM4-GCM"), or empty when the value is unset or unknown.
absl::string_view AlgorithmLabel(v1::Algorithm alg);

// WipeKeyRef zeroes the inline key bytes of `key` (nothing for a key_id). The message
// is gRPC's own non-const request, handed to the handler as const; nothing may read the
// bytes afterwards.
void WipeKeyRef(const v1::KeyRef& key);

// WipeInlineKeys zeroes the inline key bytes a request carries (KeyRef.inline_key, in
// the request, its params or its batch items) once the call has used them, so they do
// not linger in freed heap memory. (The bytes also passed through gRPC's receive
// buffers, which gRPC frees without wiping.)
template <typename Req>
void WipeInlineKeys(const Req& req) {
  if constexpr (requires { req.key(); }) {
    if constexpr (std::is_same_v<std::decay_t<decltype(req.key())>, v1::KeyRef>) {
      WipeKeyRef(req.key());
    }
  }
  if constexpr (requires { req.params().key(); }) {
    if (req.has_params()) WipeKeyRef(req.params().key());
  }
  if constexpr (requires { req.items(0).key(); }) {
    for (const auto& item : req.items()) WipeKeyRef(item.key());
  }
}

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_PROTO_CONVERT_H_
