#!/usr/bin/python3
"""smcrypt from Python: SM3, SM2 sign/verify and SM4-GCM through smcryptd.

Needs Debian's python3-grpcio and python3-protobuf (run with /usr/bin/python3: a pyenv or
venv python3 on PATH does not see them). Generate the stubs once, from the repository root:

    mkdir -p clients/examples/python/gen
    protoc -I proto --python_out=clients/examples/python/gen \
        --grpc_python_out=clients/examples/python/gen \
        --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin smcrypt/v1/crypto.proto

then, with smcryptd listening on localhost:50051 (or pass HOST:PORT):

    PYTHONPATH=clients/examples/python/gen /usr/bin/python3 \
        clients/examples/python/smcrypt_example.py [HOST:PORT]

HOST:PORT may be any gRPC target: dns:///smcryptd-headless.smcrypt.svc:50051 (every replica
behind the headless Service) or ipv4:127.0.0.1:50051,127.0.0.1:50052 (a static list). The
channel uses round_robin and retries UNAVAILABLE (SERVICE_CONFIG).
"""
import json
import os
import sys

import grpc

from smcrypt.v1 import crypto_pb2 as pb
from smcrypt.v1 import crypto_pb2_grpc as pb_grpc


# round_robin over every address the target resolves to (one connection per replica, calls
# in turn over the ready ones), and up to 4 retries of a CryptoService or health call that fails
# with UNAVAILABLE (a replica stopping or unreachable) or CANCELLED (what gRPC C++ servers answer
# to calls they had received but not started when they stop), after 0.05 s, 0.1 s, 0.2 s and
# 0.4 s at most (random jitter, capped at 1 s): the policy of smcrypt's own clients
# (kServiceConfigJson in clients/smcrypt/session.h).
SERVICE_CONFIG = {
    "loadBalancingConfig": [{"round_robin": {}}],
    "methodConfig": [{
        "name": [{"service": "smcrypt.v1.CryptoService"}, {"service": "grpc.health.v1.Health"}],
        "retryPolicy": {
            "maxAttempts": 5,
            "initialBackoff": "0.05s",
            "maxBackoff": "1s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"],
        },
    }],
}


def main():
    target = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SMCRYPT_TARGET", "localhost:50051")
    options = [("grpc.service_config", json.dumps(SERVICE_CONFIG)), ("grpc.enable_retries", 1)]
    with grpc.insecure_channel(target, options=options) as channel:
        stub = pb_grpc.CryptoServiceStub(channel)

        # SM3 (GB/T 32905): bytes in, 32-byte digest out.
        digest = stub.Hash(pb.HashRequest(algorithm=pb.SM3, data=b"abc")).digest
        print("SM3(abc)       ", digest.hex())

        # SM2: a fresh key pair (PKCS#8 / SubjectPublicKeyInfo DER), then sign and verify with
        # the default user ID 1234567812345678. Signatures are DER unless encoding=RAW (r||s).
        pair = stub.GenerateKeyPair(pb.GenerateKeyPairRequest(algorithm=pb.SM2))
        message = b"transfer 100 CNY to account 42"
        signature = stub.Sign(pb.SignRequest(
            algorithm=pb.SM2, key=pb.KeyRef(inline_key=pair.private_key_der), data=message)).signature
        valid = stub.Verify(pb.VerifyRequest(
            algorithm=pb.SM2, key=pb.KeyRef(inline_key=pair.public_key_der), data=message,
            signature=signature)).valid
        forged = stub.Verify(pb.VerifyRequest(
            algorithm=pb.SM2, key=pb.KeyRef(inline_key=pair.public_key_der),
            data=message + b"0", signature=signature)).valid
        print("SM2 signature  ", signature.hex(), "valid:", valid, "| other message:", forged)

        # SM4-GCM (RFC 8998): the server draws the 12-byte nonce and returns it with the tag.
        key = stub.GenerateRandom(pb.GenerateRandomRequest(length=16)).data
        sealed = stub.Encrypt(pb.EncryptRequest(algorithm=pb.SM4_GCM, key=pb.KeyRef(inline_key=key),
                                                plaintext=message, aad=b"v1"))
        opened = stub.Decrypt(pb.DecryptRequest(algorithm=pb.SM4_GCM, key=pb.KeyRef(inline_key=key),
                                                nonce=sealed.nonce, ciphertext=sealed.ciphertext,
                                                tag=sealed.tag, aad=b"v1")).plaintext
        print("SM4-GCM        ", "nonce", sealed.nonce.hex(), "tag", sealed.tag.hex(),
              "round trip:", opened == message)

        # Errors are gRPC status codes: a wrong tag is INVALID_ARGUMENT "decryption failed".
        try:
            stub.Decrypt(pb.DecryptRequest(algorithm=pb.SM4_GCM, key=pb.KeyRef(inline_key=key),
                                           nonce=sealed.nonce, ciphertext=sealed.ciphertext,
                                           tag=bytes(16), aad=b"v1"))
            tampered = "accepted"
        except grpc.RpcError as err:
            tampered = f"{err.code().name}: {err.details()}"
        print("tampered tag   ", tampered)

        ok = valid and not forged and opened == message and tampered.startswith("INVALID_ARGUMENT")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
