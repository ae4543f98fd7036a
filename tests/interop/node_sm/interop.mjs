// interop.mjs PROTO_DIR — a Node.js gRPC client of a real smcryptd (SMCRYPT_TARGET), checked
// by libraries written by others: sm-crypto (SM2, SM3, SM4), sm-crypto-v2 (SM2 key exchange)
// and @hpke/core (HPKE P-256).
//
// @grpc/grpc-js and @grpc/proto-loader load PROTO_DIR/smcrypt/v1/crypto.proto directly (no
// generated code). Encodings (the compatibility table of docs/languages.md):
//   SM2 signature   smcrypt DER by default (SIGNATURE_ENCODING_RAW: r‖s, 64 bytes);
//                   sm-crypto hex r‖s, or DER with {der: true}. Z uses user ID
//                   "1234567812345678" on both sides unless set (user_id / {userId}).
//                   sm-crypto's {hash: true} is smcrypt's default (e = SM3(Z‖M));
//                   {hash: false} signs the given 32 bytes as e = smcrypt's prehashed.
//   SM2 ciphertext  smcrypt C1‖C3‖C2 with C1 = 04‖x‖y (65 bytes); sm-crypto cipherMode 1 is
//                   C1C3C2 without the 04 byte, cipherMode 0 C1C2C3 (smcrypt C1C2C3);
//                   smcrypt's DER SM2Cipher has no sm-crypto counterpart (converted here).
//   SM2 keys        sm-crypto: private key = 64 hex digits (d), public = "04"‖x‖y hex or 33-byte
//                   compressed hex; smcrypt takes the raw 32/65/33 bytes inline and returns
//                   PKCS#8 / SubjectPublicKeyInfo DER (d and the point are read out of them).
//   SM2 key exchange sm-crypto-v2 sm2.calculateSharedKey (no confirmation) as the peer of the
//                   KeyExchange stream in both roles, klen in bytes, IDs as UTF-8 strings; its
//                   argument convention is written above keyExchangeChecks.
// Random inputs come from a seeded generator (SMCRYPT_TEST_SEED repeats a run). Every check
// that passes means both sides computed the same thing; each direction also checks that a
// changed input is rejected.
import { createHash, randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";

const require = createRequire(import.meta.url);
const { sm2, sm3, sm4 } = require("sm-crypto");
const { sm2: sm2v2 } = require("sm-crypto-v2");
const protobuf = require("protobufjs");

// google.rpc.Status and google.rpc.ErrorInfo (googleapis google/rpc/status.proto,
// error_details.proto; Any's two fields declared alongside): smcryptd puts an ErrorInfo
// in the grpc-status-details-bin trailer of every error it makes (crypto.proto "Errors").
const rpcTypes = protobuf.Root.fromJSON({ nested: { google: { nested: { rpc: { nested: {
  Any: { fields: { type_url: { type: "string", id: 1 }, value: { type: "bytes", id: 2 } } },
  Status: { fields: { code: { type: "int32", id: 1 }, message: { type: "string", id: 2 },
                      details: { rule: "repeated", type: "Any", id: 3 } } },
  ErrorInfo: { fields: { reason: { type: "string", id: 1 }, domain: { type: "string", id: 2 },
                         metadata: { keyType: "string", type: "string", id: 3 } } },
} } } } } });
const RpcStatus = rpcTypes.lookupType("google.rpc.Status");
const RpcErrorInfo = rpcTypes.lookupType("google.rpc.ErrorInfo");
// errorInfo: the ErrorInfo of a failed call's status, or null.
function errorInfo(err) {
  const bin = err?.metadata?.get("grpc-status-details-bin")?.[0];
  if (!bin) return null;
  const any = RpcStatus.decode(bin).details.find(
    (d) => d.type_url === "type.googleapis.com/google.rpc.ErrorInfo");
  return any ? RpcErrorInfo.decode(any.value) : null;
}
const version = (name) => require(`${name}/package.json`).version;

const protoDir = process.argv[2];
const target = process.env.SMCRYPT_TARGET;
if (!protoDir || !target) {
  console.error("usage: SMCRYPT_TARGET=host:port node interop.mjs PROTO_DIR");
  process.exit(2);
}
const seed = process.env.SMCRYPT_TEST_SEED ?? randomBytes(4).readUInt32BE(0).toString();
console.log(`node ${process.version}, @grpc/grpc-js ${version("@grpc/grpc-js")}, ` +
            `sm-crypto ${version("sm-crypto")}, sm-crypto-v2 ${version("sm-crypto-v2")}, @hpke/core ${version("@hpke/core")}, ` +
            `smcryptd ${target}, seed ${seed} (SMCRYPT_TEST_SEED=${seed} repeats this run)`);

// ---- Seeded bytes: SHA-256 in counter mode over the seed -------------------------------------
let counter = 0;
function rand(n) {
  const out = [];
  let have = 0;
  while (have < n) {
    const block = createHash("sha256").update(`${seed}/${counter++}`).digest();
    out.push(block);
    have += block.length;
  }
  return Buffer.concat(out).subarray(0, n);
}
const randInt = (lo, hi) => lo + (rand(4).readUInt32BE(0) % (hi - lo + 1));  // [lo, hi]

// ---- Checks -------------------------------------------------------------------------------------
let checks = 0;
let failures = 0;
let tZeroSeen = 0;  // sm-crypto SM2 ciphertexts with an all-zero KDF output (see sm2EncryptionChecks)
function check(ok, what) {
  checks++;
  if (!ok) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
}
const hex = (b) => Buffer.from(b).toString("hex");
const unhex = (h) => Buffer.from(h, "hex");

// ---- gRPC client from the .proto ---------------------------------------------------------------
const loaderOptions = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
                        includeDirs: [protoDir, path.join(protoDir, "third_party")] };
const pkgDef = protoLoader.loadSync(["smcrypt/v1/crypto.proto", "grpc/health/v1/health.proto"],
                                    loaderOptions);
const loaded = grpc.loadPackageDefinition(pkgDef);
const client = new loaded.smcrypt.v1.CryptoService(target, grpc.credentials.createInsecure());
const health = new loaded.grpc.health.v1.Health(target, grpc.credentials.createInsecure());

function call(stub, method, request) {
  return new Promise((resolve, reject) => {
    stub[method](request, { deadline: Date.now() + 20000 }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}
const rpc = (method, request) => call(client, method, request);
async function rpcError(method, request) {
  try {
    await rpc(method, request);
  } catch (err) {
    return err;
  }
  return null;
}
// Bidirectional stream: writes every request, half-closes, collects every response.
function bidi(method, requests) {
  return new Promise((resolve, reject) => {
    const stream = client[method]({ deadline: Date.now() + 20000 });
    const out = [];
    stream.on("data", (m) => out.push(m));
    stream.on("error", reject);
    stream.on("end", () => resolve(out));
    for (const r of requests) stream.write(r);
    stream.end();
  });
}
const inline = (b) => ({ inline_key: Buffer.from(b) });

// ---- A small DER reader (SPKI, PKCS#8, SM2Cipher, ECDSA-Sig-Value) -------------------------------
function tlv(buf, off) {
  const tag = buf[off];
  let len = buf[off + 1];
  let start = off + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[off + 2 + i];
    start += n;
  }
  return { tag, start, end: start + len, body: buf.subarray(start, start + len) };
}
function children(buf) {
  const out = [];
  for (let off = 0; off < buf.length;) {
    const t = tlv(buf, off);
    out.push(t);
    off = t.end;
  }
  return out;
}
const int32 = (body) => {  // DER INTEGER body → 32 bytes big-endian
  const b = body[0] === 0 ? body.subarray(1) : body;
  return Buffer.concat([Buffer.alloc(32 - b.length), b]);
};
// SubjectPublicKeyInfo → the point (04‖x‖y): the BIT STRING after the algorithm.
function spkiPoint(der) {
  const [, bits] = children(tlv(der, 0).body);
  if (bits.tag !== 0x03 || bits.body[0] !== 0) throw new Error("SPKI: no BIT STRING");
  return bits.body.subarray(1);
}
// PKCS#8 PrivateKeyInfo → d: OCTET STRING { ECPrivateKey SEQUENCE { 1, OCTET STRING d, ... } }.
function pkcs8Scalar(der) {
  const [, , octets] = children(tlv(der, 0).body);
  const [, d] = children(tlv(octets.body, 0).body);
  if (d.tag !== 0x04 || d.body.length !== 32) throw new Error("PKCS#8: no 32-byte scalar");
  return Buffer.from(d.body);
}
// DER SM2Cipher (GM/T 0009 §7.2) SEQUENCE { x, y, C3 OCTET STRING, C2 OCTET STRING } → C1C3C2.
function sm2CipherDerToC1C3C2(der) {
  const [x, y, c3, c2] = children(tlv(der, 0).body);
  return Buffer.concat([Buffer.from([4]), int32(x.body), int32(y.body), c3.body, c2.body]);
}

// =================================================================================================
async function main() {
  await new Promise((resolve, reject) =>
    client.waitForReady(Date.now() + 20000, (err) => (err ? reject(err) : resolve())));

  const info = await rpc("GetServerInfo", {});
  check(info.self_tests_passed === true, "GetServerInfo: self-tests passed");
  console.log(`smcryptd ${info.version}; kernels ${info.kernels.map((k) => `${k.algorithm}=${k.kernel}`).join(" ")}`);
  const h = await call(health, "Check", { service: "" });
  check(h.status === "SERVING", `health: ${h.status}`);

  await sm3Checks();
  await sm4Checks();
  await sm2SignatureChecks();
  await sm2EncryptionChecks();
  await sm2TZeroCheck();
  await hpkeChecks();
  await keyExchangeChecks();

  client.close();
  health.close();
  if (tZeroSeen > 0) console.log(`note: ${tZeroSeen} sm-crypto SM2 ciphertext(s) with t = 0 drawn again`);
  console.log(`${checks - failures}/${checks} checks passed`);
  if (failures > 0 || checks === 0) process.exit(1);
}

// ---- SM3, HMAC-SM3 -------------------------------------------------------------------------------
async function sm3Checks() {
  for (const n of [0, 1, 55, 56, 63, 64, 65, 1000, 65537]) {
    const data = rand(n);
    const got = await rpc("Hash", { algorithm: "SM3", data });
    check(hex(got.digest) === sm3(data), `SM3 ${n} B: smcryptd ${hex(got.digest)}, sm-crypto ${sm3(data)}`);
  }
  for (const keyLen of [1, 16, 32, 64, 65, 100]) {
    const key = rand(keyLen);
    const data = rand(randInt(0, 500));
    const got = await rpc("Hmac", { algorithm: "HMAC_SM3", key: inline(key), data });
    check(hex(got.mac) === sm3(data, { key }), `HMAC-SM3 key ${keyLen} B`);
    const ok = await rpc("Hmac", { algorithm: "HMAC_SM3", key: inline(key), data,
                                   expected_mac: unhex(sm3(data, { key })) });
    check(ok.valid === true, `HMAC-SM3 key ${keyLen} B: smcryptd accepts sm-crypto's tag`);
  }
}

// ---- SM4-ECB / SM4-CBC (sm-crypto has no CTR, GCM or CCM) ------------------------------------------
async function sm4Checks() {
  for (const n of [0, 1, 15, 16, 17, 100, 4096]) {
    const key = rand(16);
    const iv = rand(16);
    const pt = rand(n);
    const cases = [["SM4_ECB", "PADDING_PKCS7", {}], ["SM4_CBC", "PADDING_PKCS7", { mode: "cbc", iv: [...iv] }]];
    if (n % 16 === 0) {
      cases.push(["SM4_ECB", "PADDING_NONE", { padding: "none" }]);
      cases.push(["SM4_CBC", "PADDING_NONE", { mode: "cbc", iv: [...iv], padding: "none" }]);
    }
    for (const [algorithm, padding, opts] of cases) {
      const what = `${algorithm} ${padding} ${n} B`;
      const nonce = algorithm === "SM4_CBC" ? { nonce: iv } : {};
      const theirs = Buffer.from(sm4.encrypt([...pt], [...key], { ...opts, output: "array" }));
      const ours = await rpc("Encrypt", { algorithm, key: inline(key), plaintext: pt, padding, ...nonce });
      check(ours.ciphertext.equals(theirs), `${what}: smcryptd ciphertext equals sm-crypto's`);
      const back = Buffer.from(sm4.decrypt([...ours.ciphertext], [...key], { ...opts, output: "array" }));
      check(back.equals(pt), `${what}: sm-crypto decrypts smcryptd's ciphertext`);
      const mine = await rpc("Decrypt", { algorithm, key: inline(key), ciphertext: theirs, padding,
                                          nonce: nonce.nonce ?? Buffer.alloc(0) });
      check(mine.plaintext.equals(pt), `${what}: smcryptd decrypts sm-crypto's ciphertext`);
    }
  }
}

// ---- SM2 signatures ------------------------------------------------------------------------------
async function sm2SignatureChecks() {
  // (1) sm-crypto's key pair, given to smcryptd raw (32-byte d, 65-byte point).
  const kp = sm2.generateKeyPairHex();
  const d = unhex(kp.privateKey.padStart(64, "0"));
  const pub = unhex(kp.publicKey);
  check(pub.length === 65 && pub[0] === 4, "sm-crypto public key is 04‖x‖y");
  const compressed = unhex(sm2.compressPublicKeyHex(kp.publicKey));

  for (let i = 0; i < 12; i++) {
    const msg = rand([0, 1, 32, 100, 1000, 5000][i % 6]);
    const uid = i % 3 === 2 ? rand(randInt(1, 40)).toString("base64") : undefined;  // utf8 for sm-crypto
    const options = uid === undefined ? {} : { user_id: Buffer.from(uid, "utf8") };
    const smOpts = uid === undefined ? { hash: true } : { hash: true, userId: uid };
    const what = `SM2 ${msg.length} B, user ID ${uid === undefined ? "default" : JSON.stringify(uid)}`;

    // smcryptd signs (DER by default), sm-crypto verifies.
    const derSig = (await rpc("Sign", { algorithm: "SM2", key: inline(d), data: msg, options })).signature;
    check(derSig[0] === 0x30, `${what}: DER signature`);
    check(sm2.doVerifySignature(msg, hex(derSig), kp.publicKey, { ...smOpts, der: true }),
          `${what}: sm-crypto verifies smcryptd's DER signature`);
    check(!sm2.doVerifySignature(Buffer.concat([msg, Buffer.from("x")]), hex(derSig), kp.publicKey,
                                 { ...smOpts, der: true }), `${what}: sm-crypto rejects it for another message`);
    const raw = (await rpc("Sign", { algorithm: "SM2", key: inline(d), data: msg,
                                     options: { ...options, encoding: "SIGNATURE_ENCODING_RAW" } })).signature;
    check(raw.length === 64, `${what}: raw signature is 64 bytes`);
    check(sm2.doVerifySignature(msg, hex(raw), kp.publicKey, smOpts),
          `${what}: sm-crypto verifies smcryptd's raw r‖s signature`);
    check(!sm2.doVerifySignature(msg, hex(raw), kp.publicKey, { hash: true, userId: "someone else" }),
          `${what}: sm-crypto rejects it under another user ID`);

    // sm-crypto signs (raw r‖s and DER), smcryptd verifies with the point, compressed point.
    const theirRaw = unhex(sm2.doSignature(msg, kp.privateKey, smOpts));
    const theirDer = unhex(sm2.doSignature(msg, kp.privateKey, { ...smOpts, der: true }));
    for (const [key, keyName] of [[pub, "65-byte point"], [compressed, "33-byte compressed point"]]) {
      const v1 = await rpc("Verify", { algorithm: "SM2", key: inline(key), data: msg, signature: theirRaw,
                                       options: { ...options, encoding: "SIGNATURE_ENCODING_RAW" } });
      check(v1.valid === true, `${what}: smcryptd verifies sm-crypto's raw signature (${keyName})`);
      const v2 = await rpc("Verify", { algorithm: "SM2", key: inline(key), data: msg, signature: theirDer, options });
      check(v2.valid === true, `${what}: smcryptd verifies sm-crypto's DER signature (${keyName})`);
    }
    const tampered = Buffer.from(theirRaw);
    tampered[randInt(0, 63)] ^= 1 << randInt(0, 7);
    const v3 = await rpc("Verify", { algorithm: "SM2", key: inline(pub), data: msg, signature: tampered,
                                     options: { ...options, encoding: "SIGNATURE_ENCODING_RAW" } });
    check(v3.valid === false, `${what}: smcryptd rejects a flipped bit in sm-crypto's signature`);
    const v4 = await rpc("Verify", { algorithm: "SM2", key: inline(pub), data: msg, signature: theirDer,
                                     options: { user_id: Buffer.from("someone else") } });
    check(v4.valid === false, `${what}: smcryptd rejects sm-crypto's signature under another user ID`);
  }

  // (2) Prehashed: sm-crypto's {hash: false} signs the 32 bytes it is given as e.
  const e = rand(32);
  const preSig = unhex(sm2.doSignature(e, kp.privateKey, { hash: false }));
  const pv = await rpc("Verify", { algorithm: "SM2", key: inline(pub), data: e, signature: preSig,
                                   options: { prehashed: true, encoding: "SIGNATURE_ENCODING_RAW" } });
  check(pv.valid === true, "SM2 prehashed: smcryptd verifies sm-crypto's {hash: false} signature of e");
  const preOurs = (await rpc("Sign", { algorithm: "SM2", key: inline(d), data: e,
                                       options: { prehashed: true, encoding: "SIGNATURE_ENCODING_RAW" } })).signature;
  check(sm2.doVerifySignature(e, hex(preOurs), kp.publicKey, { hash: false }),
        "SM2 prehashed: sm-crypto {hash: false} verifies smcryptd's signature of e");

  // (3) smcryptd's key pair (PKCS#8 / SPKI DER): d and the point read out, used by sm-crypto.
  const pair = await rpc("GenerateKeyPair", { algorithm: "SM2" });
  const d2 = pkcs8Scalar(pair.private_key_der);
  const pub2 = spkiPoint(pair.public_key_der);
  check(sm2.getPublicKeyFromPrivateKey(hex(d2)) === hex(pub2),
        "SM2 GenerateKeyPair: sm-crypto derives the SPKI point from the PKCS#8 scalar");
  const msg = rand(200);
  const sig = unhex(sm2.doSignature(msg, hex(d2), { hash: true, der: true }));
  const v = await rpc("Verify", { algorithm: "SM2", key: inline(pair.public_key_der), data: msg, signature: sig });
  check(v.valid === true, "SM2: smcryptd verifies sm-crypto's signature with the SPKI DER key");
  const vPem = await rpc("Verify", { algorithm: "SM2", key: inline(Buffer.from(pair.public_key_pem)), data: msg,
                                     signature: sig });
  check(vPem.valid === true, "SM2: smcryptd verifies sm-crypto's signature with the SPKI PEM key");

  // (4) The keyring's SM2 key (key_id "sm2"): GetPublicKey, then sm-crypto verifies.
  const ring = await rpc("GetPublicKey", { algorithm: "SM2", key: { key_id: "sm2" } });
  const unknown = await rpcError("Sign", { algorithm: "SM2", key: { key_id: "no-such-key" }, data: msg });
  const unknownInfo = errorInfo(unknown);
  check(unknown?.code === grpc.status.NOT_FOUND && unknownInfo?.reason === "KEY_NOT_FOUND" &&
          unknownInfo.metadata.key_id === "no-such-key",
        `an unknown key_id: NOT_FOUND with ErrorInfo KEY_NOT_FOUND {key_id} (got ${unknownInfo?.reason})`);
  const ringPub = hex(spkiPoint(ring.public_key_der));
  const rsig = (await rpc("Sign", { algorithm: "SM2", key: { key_id: "sm2" }, data: msg })).signature;
  check(sm2.doVerifySignature(msg, hex(rsig), ringPub, { hash: true, der: true }),
        "SM2 keyring key: sm-crypto verifies smcryptd's signature");
}

// ---- SM2 encryption ------------------------------------------------------------------------------
async function sm2EncryptionChecks() {
  const kp = sm2.generateKeyPairHex();
  const d = unhex(kp.privateKey.padStart(64, "0"));
  const pub = unhex(kp.publicKey);
  for (const n of [1, 15, 32, 33, 100, 1000]) {
    const pt = rand(n);
    const what = `SM2 encryption ${n} B`;
    // smcryptd encrypts; sm-crypto decrypts (without the 04 byte of C1).
    const c132 = (await rpc("PublicKeyEncrypt", { algorithm: "SM2", key: inline(pub), plaintext: pt })).ciphertext;
    check(c132.length === 97 + n && c132[0] === 4, `${what}: C1C3C2 is 97 + n bytes, C1 starts with 04`);
    const p1 = Buffer.from(sm2.doDecrypt(hex(c132.subarray(1)), kp.privateKey, 1, { output: "array" }));
    check(p1.equals(pt), `${what}: sm-crypto cipherMode 1 decrypts smcryptd's C1C3C2`);
    const c123 = (await rpc("PublicKeyEncrypt", { algorithm: "SM2", key: inline(pub), plaintext: pt,
                                                  sm2_format: "SM2_CIPHERTEXT_FORMAT_C1C2C3" })).ciphertext;
    const p0 = Buffer.from(sm2.doDecrypt(hex(c123.subarray(1)), kp.privateKey, 0, { output: "array" }));
    check(p0.equals(pt), `${what}: sm-crypto cipherMode 0 decrypts smcryptd's C1C2C3`);
    const cder = (await rpc("PublicKeyEncrypt", { algorithm: "SM2", key: inline(pub), plaintext: pt,
                                                  sm2_format: "SM2_CIPHERTEXT_FORMAT_DER" })).ciphertext;
    const pd = Buffer.from(sm2.doDecrypt(hex(sm2CipherDerToC1C3C2(cder).subarray(1)), kp.privateKey, 1,
                                         { output: "array" }));
    check(pd.equals(pt), `${what}: smcryptd's DER SM2Cipher, converted to C1C3C2, decrypts in sm-crypto`);
    const wrongMode = sm2.doDecrypt(hex(c132.subarray(1)), kp.privateKey, 0, { output: "array" });
    check(wrongMode.length === 0, `${what}: sm-crypto cipherMode 0 rejects C1C3C2`);

    // sm-crypto encrypts; smcryptd decrypts once the 04 byte is put back. sm-crypto does not
    // re-draw k when the KDF output t is all zero (GB/T 32918.4 §6.1 A5), so for a 1-byte
    // message 1 ciphertext in 256 has C2 = M; smcryptd rejects those (§7.1 B4) with
    // "decryption failed". sm2Encrypt draws again in that case, as a conforming encryptor does.
    const sm2Encrypt = async (mode) => {
      for (;;) {
        const ct = Buffer.concat([Buffer.from([4]), unhex(sm2.doEncrypt(pt, kp.publicKey, mode))]);
        const c2 = mode === 1 ? ct.subarray(97) : ct.subarray(65, 65 + n);
        if (!c2.equals(pt)) return ct;
        tZeroSeen++;
        const err = await rpcError("PublicKeyDecrypt", {
          algorithm: "SM2", key: inline(d), ciphertext: ct,
          sm2_format: mode === 1 ? "SM2_CIPHERTEXT_FORMAT_C1C3C2" : "SM2_CIPHERTEXT_FORMAT_C1C2C3" });
        check(err?.details === "decryption failed",
              `${what}: smcryptd rejects sm-crypto's ciphertext with t = 0 (got ${err?.details})`);
      }
    };
    const t1 = await sm2Encrypt(1);
    const b1 = await rpc("PublicKeyDecrypt", { algorithm: "SM2", key: inline(d), ciphertext: t1 });
    check(b1.plaintext.equals(pt), `${what}: smcryptd decrypts sm-crypto's cipherMode 1 (C1C3C2)`);
    const t0 = await sm2Encrypt(0);
    const b0 = await rpc("PublicKeyDecrypt", { algorithm: "SM2", key: inline(d), ciphertext: t0,
                                               sm2_format: "SM2_CIPHERTEXT_FORMAT_C1C2C3" });
    check(b0.plaintext.equals(pt), `${what}: smcryptd decrypts sm-crypto's cipherMode 0 (C1C2C3)`);
    // smcryptd also reads C1 without its 04 byte (x1 ‖ y1 on the curve): sm-crypto's output as is.
    const raw1 = await rpc("PublicKeyDecrypt", { algorithm: "SM2", key: inline(d), ciphertext: t1.subarray(1) });
    check(raw1.plaintext.equals(pt), `${what}: smcryptd decrypts sm-crypto's cipherMode 1 output without 04`);
    const raw0 = await rpc("PublicKeyDecrypt", { algorithm: "SM2", key: inline(d), ciphertext: t0.subarray(1),
                                                 sm2_format: "SM2_CIPHERTEXT_FORMAT_C1C2C3" });
    check(raw0.plaintext.equals(pt), `${what}: smcryptd decrypts sm-crypto's cipherMode 0 output without 04`);
    const flipped = Buffer.from(t1);
    flipped[65 + randInt(0, 31)] ^= 1;  // a bit of C3
    const badC3 = await rpcError("PublicKeyDecrypt", { algorithm: "SM2", key: inline(d), ciphertext: flipped });
    check(badC3?.code === grpc.status.INVALID_ARGUMENT && badC3.details === "decryption failed",
          `${what}: a flipped C3 bit fails with "decryption failed" (got ${badC3?.details})`);
    const c3Info = errorInfo(badC3);
    check(c3Info?.reason === "DECRYPTION_FAILED" && c3Info.domain === "smcrypt.v1",
          `${what}: its ErrorInfo reason is DECRYPTION_FAILED (got ${c3Info?.reason})`);
    const swapped = await rpcError("PublicKeyDecrypt", { algorithm: "SM2", key: inline(d), ciphertext: t1,
                                                         sm2_format: "SM2_CIPHERTEXT_FORMAT_C1C2C3" });
    check(swapped?.code === grpc.status.INVALID_ARGUMENT && swapped.details === "decryption failed",
          `${what}: C1C3C2 read as C1C2C3 fails with "decryption failed" (got ${swapped?.details})`);
  }
}

// A C1C2C3 ciphertext sm-crypto 0.5.8 produced for the 1-byte message 63 whose KDF output t is
// 00, so C2 = M (a conforming encryptor draws another k, GB/T 32918.4 §6.1 A5). sm-crypto
// decrypts it; smcryptd refuses it (§7.1 B4: t all zero is an error).
const T_ZERO = {
  d: "925594e3e1f31508d3809ae2bb09ed0fa64dbdff0db57efe5fc735b3b24cb727",
  ct: "04694be9b04db99e71985a3e5fee88a29428d26fc361b53731466cd911763024b6a012c263bc9abb238f402100ff" +
      "38c7640d9dd6f80e0224d6847ed35759abead763214e3ff4758d45bb582764a3e1ad5628bd090a2aacb6f6a0f1376d9" +
      "db8ca232b",
};
async function sm2TZeroCheck() {
  const own = Buffer.from(sm2.doDecrypt(T_ZERO.ct.slice(2), T_ZERO.d, 0, { output: "array" }));
  check(own.equals(unhex("63")), "SM2 t = 0: sm-crypto decrypts its own ciphertext to 63");
  const err = await rpcError("PublicKeyDecrypt", { algorithm: "SM2", key: inline(unhex(T_ZERO.d)),
                                                   ciphertext: unhex(T_ZERO.ct),
                                                   sm2_format: "SM2_CIPHERTEXT_FORMAT_C1C2C3" });
  check(err?.code === grpc.status.INVALID_ARGUMENT && err.details === "decryption failed",
        `SM2 t = 0: smcryptd rejects it with "decryption failed" (got ${err?.details})`);
}

// ---- HPKE-P256-SHA256-AES128GCM with @hpke/core --------------------------------------------------
async function hpkeChecks() {
  const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
  const header = unhex("01001000010001");
  const alg = "HPKE_P256_SHA256_AES128GCM";
  const ab = (b) => new Uint8Array(b).buffer.slice(0);  // a fresh ArrayBuffer for @hpke/core

  // (a) smcryptd seals to @hpke/core's key (raw 65-byte point inline); @hpke/core opens.
  const rkp = await suite.kem.generateKeyPair();
  const rpub = Buffer.from(await suite.kem.serializePublicKey(rkp.publicKey));
  for (const n of [0, 1, 1000, 100000]) {
    const pt = rand(n);
    const infoBytes = rand(randInt(0, 30));
    const wire = (await rpc("HybridEncrypt", { algorithm: alg, key: inline(rpub), plaintext: pt,
                                               info: infoBytes })).ciphertext;
    check(wire.subarray(0, 7).equals(header), `HPKE ${n} B: header ${hex(wire.subarray(0, 7))}`);
    let opened = null;
    try {
      opened = Buffer.from(await suite.open({ recipientKey: rkp, enc: ab(wire.subarray(7, 72)), info: ab(infoBytes) },
                                            ab(wire.subarray(72)), ab(header)));
    } catch (err) {
      opened = null;
    }
    check(opened !== null && opened.equals(pt), `HPKE ${n} B: @hpke/core opens smcryptd's HybridEncrypt`);
  }

  // (a') HybridEncryptBatch to the same key: @hpke/core opens every item, each with its own enc.
  {
    const items = [0, 1, 33, 1000, 5000].map((n) => ({ algorithm: alg, key: inline(rpub), plaintext: rand(n),
                                                       info: rand(randInt(0, 30)) }));
    const { results } = await rpc("HybridEncryptBatch", { items });
    check(results.length === items.length, `HybridEncryptBatch: ${results.length} results for ${items.length} items`);
    const encs = new Set();
    for (let i = 0; i < items.length; i++) {
      const wire = results[i].ciphertext;
      check((results[i].status?.code ?? 0) === 0 && wire.subarray(0, 7).equals(header),
            `HybridEncryptBatch item ${i}: OK with header (${results[i].status?.message ?? ""})`);
      encs.add(hex(wire.subarray(7, 72)));
      let opened = null;
      try {
        opened = Buffer.from(await suite.open({ recipientKey: rkp, enc: ab(wire.subarray(7, 72)),
                                                info: ab(items[i].info) }, ab(wire.subarray(72)), ab(header)));
      } catch (err) {
        opened = null;
      }
      check(opened !== null && opened.equals(items[i].plaintext),
            `HybridEncryptBatch item ${i}: @hpke/core opens it`);
    }
    check(encs.size === items.length, "HybridEncryptBatch: a fresh enc per item");
  }

  // (b) smcryptd's key pair (GenerateKeyPair); @hpke/core seals to its SPKI point; smcryptd opens.
  const pair = await rpc("GenerateKeyPair", { algorithm: alg });
  const pk = await suite.kem.deserializePublicKey(ab(spkiPoint(pair.public_key_der)));
  for (const n of [0, 1, 1000]) {
    const pt = rand(n);
    const infoBytes = rand(10);
    const sealed = await suite.seal({ recipientPublicKey: pk, info: ab(infoBytes) }, ab(pt), ab(header));
    const wire = Buffer.concat([header, Buffer.from(sealed.enc), Buffer.from(sealed.ct)]);
    const back = await rpc("HybridDecrypt", { algorithm: alg, key: inline(pair.private_key_der), ciphertext: wire,
                                              info: infoBytes });
    check(back.plaintext.equals(pt), `HPKE ${n} B: smcryptd opens @hpke/core's seal`);
    const bad = await rpcError("HybridDecrypt", { algorithm: alg, key: inline(pair.private_key_der),
                                                  ciphertext: wire, info: Buffer.concat([infoBytes, Buffer.from("x")]) });
    check(bad?.details === "decryption failed", `HPKE ${n} B: another info fails (got ${bad?.details})`);
  }

  // (c) Streams: smcryptd's HybridEncryptStream opened chunk by chunk on one @hpke/core context.
  const streamInfo = Buffer.from("stream info");
  const streamAad = rand(12);
  const chunks = [rand(1), rand(5000), rand(70000)];
  const responses = await bidi("HybridEncryptStream", [
    { params: { algorithm: alg, key: inline(rpub), info: streamInfo, aad: streamAad } },
    ...chunks.map((c) => ({ plaintext: c })),
  ]);
  const wire = Buffer.concat(responses.map((r) => r.ciphertext));
  check(wire.subarray(0, 7).equals(header), "HPKE stream: header");
  const ctx = await suite.createRecipientContext({ recipientKey: rkp, enc: ab(wire.subarray(7, 72)), info: ab(streamInfo) });
  const got = [];
  let off = 72;
  let lastFlag = -1;
  try {
    while (off < wire.length) {
      const flag = wire[off];
      const len = wire.readUInt32BE(off + 1);
      const aad = Buffer.concat([header, Buffer.from([flag]), streamAad]);
      got.push(Buffer.from(await ctx.open(ab(wire.subarray(off + 5, off + 5 + len)), ab(aad))));
      lastFlag = flag;
      off += 5 + len;
    }
  } catch (err) {
    got.push(null);
  }
  check(got.length === chunks.length + 1 && chunks.every((c, i) => got[i]?.equals(c)) &&
        got[chunks.length]?.length === 0 && lastFlag === 1,
        "HPKE stream: @hpke/core opens every chunk in order, then the empty final chunk (flag 01)");

  // (d) @hpke/core seals a stream on one sender context; smcryptd's HybridDecryptStream opens it.
  const sender = await suite.createSenderContext({ recipientPublicKey: pk, info: ab(streamInfo) });
  const parts = [header, Buffer.from(sender.enc)];
  for (let i = 0; i <= chunks.length; i++) {
    const flag = i === chunks.length ? 1 : 0;
    const pt = i === chunks.length ? Buffer.alloc(0) : chunks[i];
    const ct = Buffer.from(await sender.seal(ab(pt), ab(Buffer.concat([header, Buffer.from([flag]), streamAad]))));
    const len = Buffer.alloc(4);
    len.writeUInt32BE(ct.length);
    parts.push(Buffer.from([flag]), len, ct);
  }
  const theirs = Buffer.concat(parts);
  const pieces = [];
  for (let i = 0; i < theirs.length; i += 7777) pieces.push({ ciphertext: theirs.subarray(i, i + 7777) });
  const out = await bidi("HybridDecryptStream", [
    { params: { algorithm: alg, key: inline(pair.private_key_der), info: streamInfo, aad: streamAad } }, ...pieces]);
  check(Buffer.concat(out.map((r) => r.plaintext)).equals(Buffer.concat(chunks)) && out.at(-1)?.last === true,
        "HPKE stream: smcryptd's HybridDecryptStream opens @hpke/core's chunks");
}

// ---- SM2 key exchange (KeyExchange stream) against sm-crypto-v2 -----------------------------------
// sm-crypto-v2's sm2.calculateSharedKey(ownKeyPair, ownEphemeralKeyPair, peerPublicKey,
// peerEphemeralPublicKey, klen, isRecipient = false, ownId = "1234567812345678",
// peerId = "1234567812345678") (1.15.1, dist/index.mjs "src/sm2/kx.ts"), read against GB/T
// 32918.3-2016 §6:
//   - Despite their names (keypairA, idA, ... idB), the arguments are always "own" then "peer":
//     a responder passes its own key pair, its ephemeral pair, A's public key, R_A, then
//     isRecipient = true, ID_B, ID_A. isRecipient = false is the initiator A.
//   - It computes Z_own and Z_peer and swaps them when isRecipient, so the KDF input is
//     x_V‖y_V‖Z_A‖Z_B as in the standard in both roles; x̄ = 2^127 + (x mod 2^127) and
//     t = (d + x̄·r) mod n as in the standard. Checked below: the same call with isRecipient
//     flipped, or with the two IDs swapped, gives another K.
//   - klen is in bytes (the standard's klen is bits): only whole bytes are possible.
//   - IDs are JavaScript strings hashed as their UTF-8 bytes (ENTL = 8 × that length); an ID
//     that is not valid UTF-8 cannot be given. smcryptd's user_id is bytes: send UTF-8.
//   - No confirmation values (S_A, S_B; §6.1 A9/B9/A10/B10): only confirmation = false is
//     compatible, and that is what is tested.
//   - generateKeyPairHex(str) ("custom random") makes d = (BigInt(str) mod 1) + 1 = 1 for any
//     str, so the scalars here are drawn from the seeded stream and given to
//     getPublicKeyFromPrivateKey instead.
const SM2_N = BigInt("0xfffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54123");
function smv2KeyPair() {  // a seeded SM2 key pair in sm-crypto-v2's hex form, d in [1, n-1]
  const d = (BigInt(`0x${hex(rand(40))}`) % (SM2_N - 1n)) + 1n;
  const privateKey = d.toString(16).padStart(64, "0");
  return { privateKey, publicKey: sm2v2.getPublicKeyFromPrivateKey(privateKey) };
}

// One KeyExchange stream read one message at a time (the caller relays each to its peer).
function kexStream() {
  const stream = client.KeyExchange({ deadline: Date.now() + 20000 });
  const events = [];
  const waiting = [];
  const push = (ev) => (waiting.length ? waiting.shift()(ev) : events.push(ev));
  stream.on("data", (m) => push({ m }));
  stream.on("error", (err) => push({ err }));
  stream.on("end", () => push({ end: true }));
  const take = () => (events.length ? Promise.resolve(events.shift()) : new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("KeyExchange: nothing from smcryptd within 25 s")), 25000);
    waiting.push((ev) => { clearTimeout(timer); resolve(ev); });
  }));
  return {
    send: (r) => stream.write(r),
    // next(): the next response; throws when the stream failed or ended instead.
    async next() {
      const ev = await take();
      if (ev.m) return ev.m;
      throw ev.err ?? new Error("KeyExchange: the stream ended before the next response");
    },
    // finish(): half-closes; resolves to null when the stream ends OK, else what it got.
    async finish() {
      stream.end();
      const ev = await take();
      return ev.end ? null : (ev.err ?? ev.m);
    },
  };
}

async function keyExchangeChecks() {
  const i8 = (s) => Buffer.from(s, "utf8");
  // Both roles × klen 16 and 32 with custom UTF-8 IDs (ASCII and not), then each role once
  // with both IDs absent (smcryptd's default 1234567812345678 = sm-crypto-v2's default).
  const cases = [];
  for (const serverInitiator of [true, false]) {
    for (const klen of [16, 32]) {
      cases.push({ serverInitiator, klen,
                   serverId: `smcryptd-${rand(randInt(1, 24)).toString("base64")}`,
                   peerId: `对端·${rand(randInt(1, 24)).toString("base64")}` });
    }
    cases.push({ serverInitiator, klen: 16, serverId: undefined, peerId: undefined });
  }
  for (const c of cases) {
    const what = `KeyExchange smcryptd ${c.serverInitiator ? "initiator, sm-crypto-v2 responder"
      : "responder, sm-crypto-v2 initiator"}, klen ${c.klen}, ` +
      (c.serverId === undefined ? "default IDs" : `IDs ${JSON.stringify(c.serverId)} / ${JSON.stringify(c.peerId)}`);
    const server = smv2KeyPair();  // smcryptd's long-term key: the raw 32-byte d inline
    const peer = smv2KeyPair();    // sm-crypto-v2's long-term key: the raw 65-byte point inline
    const eph = smv2KeyPair();     // sm-crypto-v2's ephemeral key
    const params = {
      algorithm: "SM2", key: inline(unhex(server.privateKey)), peer_key: inline(unhex(peer.publicKey)),
      role: c.serverInitiator ? "KEY_EXCHANGE_ROLE_INITIATOR" : "KEY_EXCHANGE_ROLE_RESPONDER",
      key_length: c.klen, confirmation: false,
      ...(c.serverId === undefined ? {} : { user_id: i8(c.serverId), peer_user_id: i8(c.peerId) }),
    };
    // sm-crypto-v2's side: own key pair, own ephemeral pair, smcryptd's public key and R, klen
    // (bytes), isRecipient, own ID, peer ID.
    const theirs = (serverR, isRecipient, ownId = c.peerId, peerId = c.serverId) =>
      Buffer.from(sm2v2.calculateSharedKey(peer, eph, server.publicKey, hex(serverR), c.klen, isRecipient,
                                           ownId, peerId));
    const s = kexStream();
    let serverR;
    let k;
    if (c.serverInitiator) {
      s.send({ params });
      const first = await s.next();
      serverR = first.ephemeral_point;
      check(serverR.length === 65 && serverR[0] === 4 && first.shared_key.length === 0,
            `${what}: the first response is R_A (65 bytes, 04‖x‖y) only`);
      s.send({ peer_ephemeral_point: unhex(eph.publicKey) });
      const last = await s.next();
      k = last.shared_key;
      check(last.confirmation.length === 0, `${what}: no S_A without confirmation`);
    } else {
      s.send({ params, peer_ephemeral_point: unhex(eph.publicKey) });
      const first = await s.next();
      serverR = first.ephemeral_point;
      k = first.shared_key;
      check(serverR.length === 65 && serverR[0] === 4 && first.confirmation.length === 0,
            `${what}: the response is R_B (65 bytes, 04‖x‖y) and K, no S_B`);
    }
    const end = await s.finish();
    check(end === null, `${what}: the stream ends OK after K (got ${end?.code ?? ""} ${end?.details ?? JSON.stringify(end)})`);
    const isRecipient = c.serverInitiator;  // sm-crypto-v2 is the recipient when smcryptd initiates
    const mine = theirs(serverR, isRecipient);
    check(k.length === c.klen && k.equals(mine),
          `${what}: smcryptd's K equals sm-crypto-v2's (${hex(k)} vs ${hex(mine)})`);
    // The convention, pinned: the other role's Z order, or the IDs the other way round, is another K.
    check(!k.equals(theirs(serverR, !isRecipient)),
          `${what}: sm-crypto-v2 with isRecipient = ${!isRecipient} gives another K (Z_A‖Z_B order)`);
    if (c.serverId !== undefined) {
      check(!k.equals(theirs(serverR, isRecipient, c.serverId, c.peerId)),
            `${what}: sm-crypto-v2 with the two IDs swapped gives another K (own ID first)`);
    }
  }
}

main().catch((err) => {
  console.error(`FAIL: ${err.stack ?? err}`);
  process.exit(1);
});
