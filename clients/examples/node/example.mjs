// smcrypt from Node.js: SM3, SM2 sign/verify and SM4-GCM through smcryptd.
//
// @grpc/proto-loader reads proto/smcrypt/v1/crypto.proto at run time (no generated code).
//   cd clients/examples/node && npm ci
//   node example.mjs [HOST:PORT]            # default $SMCRYPT_TARGET or localhost:50051
// HOST:PORT may be any gRPC target: dns:///smcryptd-headless.smcrypt.svc:50051 (every replica
// behind the headless Service) or ipv4:127.0.0.1:50051,127.0.0.1:50052 (a static list). The
// channel uses round_robin and retries UNAVAILABLE (serviceConfig).
// bytes fields are Node Buffers; enums are given and returned by name ("SM3", "SM4_GCM").
import path from "node:path";
import { fileURLToPath } from "node:url";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";

const here = path.dirname(fileURLToPath(import.meta.url));
const protoDir = process.env.SMCRYPT_PROTO_DIR ?? path.join(here, "..", "..", "..", "proto");
const target = process.argv[2] ?? process.env.SMCRYPT_TARGET ?? "localhost:50051";

const definition = protoLoader.loadSync("smcrypt/v1/crypto.proto", {
  includeDirs: [protoDir], keepCase: true, enums: String, longs: String, defaults: true, oneofs: true,
});
const { CryptoService } = grpc.loadPackageDefinition(definition).smcrypt.v1;
// round_robin over every address the target resolves to (one connection per replica, calls
// in turn over the ready ones), and up to 4 retries of a CryptoService or health call that fails
// with UNAVAILABLE (a replica stopping or unreachable) or CANCELLED (what gRPC C++ servers answer
// to calls they had received but not started when they stop), after 0.05 s, 0.1 s, 0.2 s and
// 0.4 s at most (random jitter, capped at 1 s): the policy of smcrypt's own clients
// (kServiceConfigJson in clients/smcrypt/session.h).
const serviceConfig = {
  loadBalancingConfig: [{ round_robin: {} }],
  methodConfig: [{
    name: [{ service: "smcrypt.v1.CryptoService" }, { service: "grpc.health.v1.Health" }],
    retryPolicy: {
      maxAttempts: 5,
      initialBackoff: "0.05s",
      maxBackoff: "1s",
      backoffMultiplier: 2,
      retryableStatusCodes: ["UNAVAILABLE", "CANCELLED"],
    },
  }],
};
const client = new CryptoService(target, grpc.credentials.createInsecure(), {
  "grpc.service_config": JSON.stringify(serviceConfig),
  "grpc.enable_retries": 1,
});

// call("Hash", {...}) → a Promise of the response (rejects with a grpc error: .code, .details).
const call = (method, request) =>
  new Promise((resolve, reject) =>
    client[method](request, { deadline: Date.now() + 10000 }, (err, res) => (err ? reject(err) : resolve(res))));

// SM3 (GB/T 32905).
const { digest } = await call("Hash", { algorithm: "SM3", data: Buffer.from("abc") });
console.log("SM3(abc)       ", digest.toString("hex"));

// SM2: key pair (PKCS#8 / SubjectPublicKeyInfo DER), sign (DER, user ID 1234567812345678), verify.
const pair = await call("GenerateKeyPair", { algorithm: "SM2" });
const message = Buffer.from("transfer 100 CNY to account 42");
const { signature } = await call("Sign", { algorithm: "SM2", key: { inline_key: pair.private_key_der }, data: message });
const { valid } = await call("Verify", {
  algorithm: "SM2", key: { inline_key: pair.public_key_der }, data: message, signature,
});
console.log("SM2 signature  ", signature.toString("hex"), "valid:", valid);

// SM4-GCM (RFC 8998) with a nonce drawn by the server.
const { data: key } = await call("GenerateRandom", { length: 16 });
const sealed = await call("Encrypt", {
  algorithm: "SM4_GCM", key: { inline_key: key }, plaintext: message, aad: Buffer.from("v1"),
});
const { plaintext } = await call("Decrypt", {
  algorithm: "SM4_GCM", key: { inline_key: key }, nonce: sealed.nonce, ciphertext: sealed.ciphertext,
  tag: sealed.tag, aad: Buffer.from("v1"),
});
console.log("SM4-GCM        ", "nonce", sealed.nonce.toString("hex"), "round trip:", plaintext.equals(message));

// Errors: a wrong tag is INVALID_ARGUMENT "decryption failed".
let tampered = "accepted";
try {
  await call("Decrypt", {
    algorithm: "SM4_GCM", key: { inline_key: key }, nonce: sealed.nonce, ciphertext: sealed.ciphertext,
    tag: Buffer.alloc(16), aad: Buffer.from("v1"),
  });
} catch (err) {
  tampered = `${grpc.status[err.code]}: ${err.details}`;
}
console.log("tampered tag   ", tampered);
client.close();
process.exit(valid && plaintext.equals(message) && tampered.startsWith("INVALID_ARGUMENT") ? 0 : 1);
