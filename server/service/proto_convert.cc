#include "server/service/proto_convert.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "server/service/status_util.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::server {

absl::StatusOr<Algorithm> ToAlgorithm(v1::Algorithm alg) {
  if (alg == v1::ALGORITHM_UNSPECIFIED) {
    return absl::InvalidArgumentError("algorithm is required");
  }
  // Proto values 1..26 follow Algorithm's declaration order (crypto.proto, algorithm.h).
  absl::Span<const Algorithm> all = AllAlgorithms();
  const int v = static_cast<int>(alg);
  if (v < 1 || v > static_cast<int>(all.size())) {
    return absl::InvalidArgumentError(absl::StrCat("unknown algorithm value ", v));
  }
  return all[v - 1];
}

KeyInput ToKey(const v1::KeyRef& key) {
  switch (key.ref_case()) {
    case v1::KeyRef::kKeyId:
      return KeyInput::Id(key.key_id(), key.key_version());
    case v1::KeyRef::kInlineKey:
      return KeyInput::Inline(key.inline_key());
    default:
      return KeyInput{};
  }
}

absl::StatusOr<SignatureOptions> ToSignatureOptions(const v1::SignatureOptions& in,
                                                    bool* user_id_set) {
  SignatureOptions out;
  *user_id_set = in.has_user_id();
  if (in.has_user_id()) out.user_id = in.user_id();
  switch (in.encoding()) {
    case v1::SIGNATURE_ENCODING_UNSPECIFIED:
    case v1::SIGNATURE_ENCODING_DER:
      out.encoding = SignatureEncoding::kDer;
      break;
    case v1::SIGNATURE_ENCODING_RAW:
      out.encoding = SignatureEncoding::kRaw;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown options.encoding value ", static_cast<int>(in.encoding())));
  }
  out.prehashed = in.prehashed();
  return out;
}

absl::StatusOr<std::optional<Padding>> ToPadding(v1::Padding p) {
  switch (p) {
    case v1::PADDING_UNSPECIFIED: return std::optional<Padding>();
    case v1::PADDING_PKCS7: return std::optional<Padding>(Padding::kPkcs7);
    case v1::PADDING_NONE: return std::optional<Padding>(Padding::kNone);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown padding value ", static_cast<int>(p)));
  }
}

absl::StatusOr<Sm2CiphertextFormat> ToSm2Format(Algorithm alg, v1::Sm2CiphertextFormat f) {
  if (alg != Algorithm::kSm2 && f != v1::SM2_CIPHERTEXT_FORMAT_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("sm2_format is for SM2 only, not ", AlgorithmName(alg)));
  }
  switch (f) {
    case v1::SM2_CIPHERTEXT_FORMAT_UNSPECIFIED:
    case v1::SM2_CIPHERTEXT_FORMAT_C1C3C2:
      return Sm2CiphertextFormat::kC1C3C2;
    case v1::SM2_CIPHERTEXT_FORMAT_C1C2C3:
      return Sm2CiphertextFormat::kC1C2C3;
    case v1::SM2_CIPHERTEXT_FORMAT_DER:
      return Sm2CiphertextFormat::kDer;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown sm2_format value ", static_cast<int>(f)));
  }
}

absl::StatusOr<HybridStreamParams> HybridFrom(const v1::HybridStreamParams& in) {
  HybridStreamParams p;
  absl::StatusOr<Algorithm> alg = ToAlgorithm(in.algorithm());
  if (!alg.ok()) return alg.status();
  p.algorithm = *alg;
  p.key = ToKey(in.key());
  p.info = in.info();
  p.aad = in.aad();
  return p;
}

absl::StatusOr<KeyExchangeInput> KeyExchangeFrom(const v1::KeyExchangeParams& in) {
  KeyExchangeInput p;
  absl::StatusOr<Algorithm> alg = ToAlgorithm(in.algorithm());
  if (!alg.ok()) return alg.status();
  p.algorithm = *alg;
  p.key = ToKey(in.key());
  // `key` is checked as every request's key is (PinKeyVersion); `peer_key` here.
  if (in.peer_key().key_version() != 0 && in.peer_key().ref_case() != v1::KeyRef::kKeyId) {
    return absl::InvalidArgumentError(absl::StrCat(
        "peer_key.key_version (", in.peer_key().key_version(),
        ") names a version of a keyring key; it must be 0 (unset) unless peer_key.key_id is "
        "set"));
  }
  p.peer_key = ToKey(in.peer_key());
  switch (in.role()) {
    case v1::KEY_EXCHANGE_ROLE_INITIATOR:
      p.params.role = Sm2KeyExchangeRole::kInitiator;
      break;
    case v1::KEY_EXCHANGE_ROLE_RESPONDER:
      p.params.role = Sm2KeyExchangeRole::kResponder;
      break;
    case v1::KEY_EXCHANGE_ROLE_UNSPECIFIED:
      return absl::InvalidArgumentError(
          "role is required: KEY_EXCHANGE_ROLE_INITIATOR or KEY_EXCHANGE_ROLE_RESPONDER");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown role value ", static_cast<int>(in.role())));
  }
  p.params.own_id =
      in.has_user_id() ? in.user_id() : std::string(kSm2DefaultUserId);
  p.params.peer_id =
      in.has_peer_user_id() ? in.peer_user_id() : std::string(kSm2DefaultUserId);
  p.params.key_size = in.key_length() == 0 ? 16 : in.key_length();
  p.params.confirmation = in.confirmation();
  return p;
}

absl::StatusOr<SignItem> SignItemFrom(const v1::SignRequest& req) {
  absl::StatusOr<Algorithm> alg = ToAlgorithm(req.algorithm());
  if (!alg.ok()) return alg.status();
  SignItem item{*alg, ToKey(req.key()), req.data(), {}, false};
  absl::StatusOr<SignatureOptions> options = ToSignatureOptions(req.options(), &item.user_id_set);
  if (!options.ok()) return options.status();
  item.options = *options;
  return item;
}

absl::StatusOr<VerifyItem> VerifyItemFrom(const v1::VerifyRequest& req) {
  absl::StatusOr<Algorithm> alg = ToAlgorithm(req.algorithm());
  if (!alg.ok()) return alg.status();
  VerifyItem item{*alg, ToKey(req.key()), req.data(), req.signature(), {}, false};
  absl::StatusOr<SignatureOptions> options = ToSignatureOptions(req.options(), &item.user_id_set);
  if (!options.ok()) return options.status();
  item.options = *options;
  return item;
}

absl::StatusOr<HashItem> HashItemFrom(const v1::HashRequest& req) {
  absl::StatusOr<Algorithm> alg = ToAlgorithm(req.algorithm());
  if (!alg.ok()) return alg.status();
  return HashItem{*alg, req.data()};
}

absl::StatusOr<PublicKeyEncryptItem> PublicKeyEncryptItemFrom(
    const v1::PublicKeyEncryptRequest& req) {
  absl::StatusOr<Algorithm> alg = ToAlgorithm(req.algorithm());
  if (!alg.ok()) return alg.status();
  absl::StatusOr<Sm2CiphertextFormat> format = ToSm2Format(*alg, req.sm2_format());
  if (!format.ok()) return format.status();
  return PublicKeyEncryptItem{*alg, ToKey(req.key()), req.plaintext(), *format};
}

absl::StatusOr<HybridEncryptItem> HybridEncryptItemFrom(const v1::HybridEncryptRequest& req) {
  absl::StatusOr<Algorithm> alg = ToAlgorithm(req.algorithm());
  if (!alg.ok()) return alg.status();
  return HybridEncryptItem{*alg, ToKey(req.key()), req.plaintext(), req.info()};
}

void SetItemStatus(const absl::Status& s, v1::Status* out) {
  out->set_code(static_cast<int>(s.code()));
  out->set_message(std::string(TruncateMessage(s.message(), kMaxStatusMessageSize)));
  if (s.ok()) return;
  google::protobuf::Any* any = out->add_details();
  any->set_type_url(std::string(::smcrypt::rpc::kErrorInfoTypeUrl));
  any->set_value(::smcrypt::rpc::SerializeErrorInfo(ErrorInfoOf(s)));
}

AccessKey ToAccessKey(const v1::KeyRef* key) {
  if (key == nullptr) return AccessKey::None();
  switch (key->ref_case()) {
    case v1::KeyRef::kKeyId: return AccessKey::Id(key->key_id());
    case v1::KeyRef::kInlineKey: return AccessKey::Inline();
    default: return AccessKey::None();
  }
}

absl::string_view AlgorithmLabel(v1::Algorithm alg) {
  absl::StatusOr<Algorithm> a = ToAlgorithm(alg);
  return a.ok() ? AlgorithmName(*a) : absl::string_view();
}

void WipeKeyRef(const v1::KeyRef& key) {
  if (key.ref_case() != v1::KeyRef::kInlineKey) return;
  std::string* bytes = const_cast<v1::KeyRef&>(key).mutable_inline_key();
  SecureZero(bytes->data(), bytes->size());
}

}  // namespace smcrypt::server
