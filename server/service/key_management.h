// key_management.h — what the key management handlers (key_management_handlers.cc:
// Rewrap, RewrapBatch, GenerateDataKey, GenerateDataKeyWithoutPlaintext) share with
// their tests: the request conversions and the wiping of a data key once it is sent.
#ifndef SMCRYPT_SERVER_SERVICE_KEY_MANAGEMENT_H_
#define SMCRYPT_SERVER_SERVICE_KEY_MANAGEMENT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/engine/crypto_engine.h"
#include "smcrypt/v1/crypto.pb.h"

namespace smcrypt::server {

// RewrapInputFrom converts a Rewrap request (or RewrapBatch item); the views point into
// `req`. Errors: ToAlgorithm's, ToPadding's, ToSm2Format's (INVALID_ARGUMENT).
absl::StatusOr<RewrapInput> RewrapInputFrom(const ::smcrypt::v1::RewrapRequest& req);

// DataKeyInputFrom converts a GenerateDataKey request; the views point into `req`.
// Errors: INVALID_ARGUMENT "key_spec is required" (UNSPECIFIED) or "unknown key_spec
// value N", then ToAlgorithm's and ToSm2Format's.
absl::StatusOr<DataKeyInput> DataKeyInputFrom(const ::smcrypt::v1::GenerateDataKeyRequest& req);
absl::StatusOr<DataKeyInput> DataKeyInputFrom(
    const ::smcrypt::v1::GenerateDataKeyWithoutPlaintextRequest& req);

// WipeDataKey overwrites the bytes of `response`'s plaintext_key with zeros in place
// (the string keeps its length and buffer, so nothing is freed unwiped). The service
// calls it in the call's OnDone, once gRPC has sent the response and before it frees
// it; gRPC's own send buffers are freed without wiping.
void WipeDataKey(::smcrypt::v1::GenerateDataKeyResponse* response);

// DataKeysWiped counts the non-empty plaintext keys WipeDataKey has wiped in this
// process (tests check that every GenerateDataKey response was wiped).
uint64_t DataKeysWiped();

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_SERVICE_KEY_MANAGEMENT_H_
