// key_handlers.cc — ListKeys (crypto.proto, "Key management"): the engine's key pages
// (server/engine/key_listing.h) as ListKeysResponse, on the call guard.
#include <algorithm>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/engine/key_listing.h"
#include "server/service/call_guard.h"
#include "server/service/crypto_service_impl.h"
#include "server/service/method_spec.h"

namespace smcrypt::server {
namespace {

// ToProtoAlgorithm: proto values follow AllAlgorithms()'s order from 1 (ToAlgorithm).
v1::Algorithm ToProtoAlgorithm(Algorithm alg) {
  absl::Span<const Algorithm> all = AllAlgorithms();
  const auto it = std::find(all.begin(), all.end(), alg);
  return static_cast<v1::Algorithm>(it - all.begin() + 1);
}

// UnixMicros: 0 for a time never set (the keyring of a server without --keys_dir).
int64_t UnixMicros(absl::Time t) {
  return t == absl::InfinitePast() ? 0 : absl::ToUnixMicros(t);
}

void ToProto(const KeyPage& page, v1::ListKeysResponse* out) {
  for (const KeyListing& k : page.keys) {
    v1::KeyInfo* info = out->add_keys();
    info->set_key_id(k.key_id);
    info->set_key_family(std::string(KeyFamilyName(k.family)));
    for (Algorithm alg : k.algorithms) info->add_algorithms(ToProtoAlgorithm(alg));
    for (const KeyVersionListing& v : k.versions) {
      v1::KeyVersionInfo* vi = info->add_versions();
      vi->set_version(v.version);
      vi->set_load_time_unix_micros(UnixMicros(v.load_time));
      vi->set_public_key_sha256(v.public_key_sha256);
      vi->set_retired(v.retired);
      vi->set_has_private_key(v.has_private_key);
    }
    info->set_primary_version(k.primary_version);
    info->set_min_version(k.min_version);
  }
  out->set_next_page_token(page.next_page_token);
  out->set_keyring_load_time_unix_micros(UnixMicros(page.keyring_load_time));
}

}  // namespace

grpc::ServerUnaryReactor* CryptoServiceImpl::ListKeys(grpc::CallbackServerContext* ctx,
                                                      const v1::ListKeysRequest* request,
                                                      v1::ListKeysResponse* response) {
  return Guarded(
      this, rpc::kListKeys, ctx, request, response, kNothingToParse,
      [this, request, response](std::monostate) -> absl::Status {
        // One keyring for the whole page, as every call takes it.
        absl::StatusOr<KeyPage> page =
            ListKeyPage(*engine_->key_store(), request->page_size(), request->page_token());
        if (!page.ok()) return page.status();
        ToProto(*page, response);
        return absl::OkStatus();
      });
}

}  // namespace smcrypt::server
