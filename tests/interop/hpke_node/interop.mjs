// interop.mjs TOOL — HPKE-P256-SHA256-AES128GCM between smcrypt and @hpke/core.
//
// (a) @hpke/core makes a recipient key pair; smcrypt seals to its public key (TOOL seal)
//     in smcrypt's wire format: header (7 bytes: 01 0010 0001 0001) ‖ enc (65) ‖ ct ‖ tag.
//     @hpke/core opens ct ‖ tag with that enc, the same info, and aad = the 7-byte header
//     (smcrypt's one-shot format authenticates its header as the AEAD aad).
// (b) smcrypt makes a key pair (TOOL keygen); @hpke/core seals with aad = the header;
//     header ‖ enc ‖ ct goes to TOOL open, which must return the plaintext.
// Each direction also checks that a flipped bit is rejected, so a test that passes means
// both libraries computed the same HPKE.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";

const tool = process.argv[2];
if (!tool) {
  console.error("usage: node interop.mjs HPKE_INTEROP_TOOL");
  process.exit(2);
}
const version = createRequire(import.meta.url)("@hpke/core/package.json").version;
console.log(`node ${process.version}, @hpke/core ${version}, smcrypt tool ${tool}`);

const suite = new CipherSuite({
  kem: new DhkemP256HkdfSha256(),
  kdf: new HkdfSha256(),
  aead: new Aes128Gcm(),
});
const header = Buffer.from("01001000010001", "hex");  // version 1, KEM 0x0010, KDF 0x0001, AEAD 0x0001
const hex = (b) => Buffer.from(b).toString("hex");

function run(args, input) {
  return execFileSync(tool, args, { input, maxBuffer: 1 << 26 });
}

function fails(fn) {
  try {
    fn();
  } catch {
    return true;
  }
  return false;
}

async function rejects(promise) {
  try {
    await promise;
  } catch {
    return true;
  }
  return false;
}

let failures = 0;
let checks = 0;
function check(ok, what) {
  checks++;
  if (!ok) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
}

const cases = [
  { size: 0, info: Buffer.alloc(0) },
  { size: 1, info: Buffer.from("smcrypt interop") },
  { size: 512, info: Buffer.from("info") },
  { size: 100000, info: randomBytes(40) },
];

for (const { size, info } of cases) {
  const pt = randomBytes(size);

  // (a) smcrypt seals, @hpke/core opens.
  const rkp = await suite.kem.generateKeyPair();
  const pk = Buffer.from(await suite.kem.serializePublicKey(rkp.publicKey));
  const wire = run(["seal", hex(pk), hex(info)], pt);
  check(wire.length === 7 + 65 + size + 16, `(a) ${size} B: wire length ${wire.length}`);
  check(wire.subarray(0, 7).equals(header), `(a) ${size} B: header ${hex(wire.subarray(0, 7))}`);
  const enc = wire.subarray(7, 72);
  const ct = wire.subarray(72);
  let opened = null;
  try {
    opened = Buffer.from(
      await suite.open({ recipientKey: rkp.privateKey, enc, info }, ct, header),
    );
  } catch (e) {
    console.error(`(a) ${size} B: @hpke/core open failed: ${e}`);
  }
  check(opened !== null && opened.equals(pt), `(a) ${size} B: @hpke/core opened smcrypt's message`);
  const bad = Buffer.from(ct);
  bad[bad.length - 1] ^= 1;
  check(
    await rejects(suite.open({ recipientKey: rkp.privateKey, enc, info }, bad, header)),
    `(a) ${size} B: @hpke/core rejects a flipped tag bit`,
  );

  // (b) @hpke/core seals, smcrypt opens.
  const [skHex, pkHex] = run(["keygen"]).toString().trim().split(" ");
  const recipientPublicKey = await suite.kem.deserializePublicKey(Buffer.from(pkHex, "hex"));
  const sealed = await suite.seal({ recipientPublicKey, info }, pt, header);
  const msg = Buffer.concat([header, Buffer.from(sealed.enc), Buffer.from(sealed.ct)]);
  let back = null;
  try {
    back = run(["open", skHex, hex(info)], msg);
  } catch (e) {
    console.error(`(b) ${size} B: smcrypt open failed: ${e.stderr ?? e}`);
  }
  check(back !== null && back.equals(pt), `(b) ${size} B: smcrypt opened @hpke/core's message`);
  const tampered = Buffer.from(msg);
  tampered[72] ^= 0x80;
  check(
    fails(() => run(["open", skHex, hex(info)], tampered)),
    `(b) ${size} B: smcrypt rejects a flipped ciphertext bit`,
  );
  console.log(`ok ${size} B (info ${info.length} B): smcrypt -> @hpke/core, @hpke/core -> smcrypt`);
}

if (failures > 0) {
  console.error(`${failures} of ${checks} checks failed`);
  process.exit(1);
}
console.log(`PASS: ${checks} checks, HPKE-P256-SHA256-AES128GCM interoperates with @hpke/core ${version}`);
