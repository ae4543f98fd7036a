#include "server/engine/dynamic_batcher.h"

namespace smcrypt::server {

const char* BatchedMethod(BatchedOperation op) {
  switch (op) {
    case BatchedOperation::kHash: return "Hash";
    case BatchedOperation::kSign: return "Sign";
    case BatchedOperation::kVerify: return "Verify";
    case BatchedOperation::kPublicKeyEncrypt: return "PublicKeyEncrypt";
    case BatchedOperation::kHybridEncrypt: return "HybridEncrypt";
  }
  return "";
}

const char* BatchedAlgorithm(BatchedOperation op) {
  switch (op) {
    case BatchedOperation::kHash: return "SM3";
    case BatchedOperation::kSign:
    case BatchedOperation::kVerify:
    case BatchedOperation::kPublicKeyEncrypt: return "SM2";
    case BatchedOperation::kHybridEncrypt: return "HPKE-SM2-SM3-SM4GCM";
  }
  return "";
}

}  // namespace smcrypt::server
