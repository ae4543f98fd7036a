// hpke_interop_tool — smcrypt's side of the HPKE interoperability test (label interop).
//
//   hpke_interop_tool keygen              prints "<sk hex> <pk hex>": a fresh
//                                         DHKEM(P-256) pair (32-byte scalar, 65-byte point)
//   hpke_interop_tool seal PK_HEX INFO_HEX  stdin: plaintext; stdout: smcrypt's wire format
//                                         (version ‖ ids ‖ enc ‖ ct ‖ tag, smcrypt/hpke.h)
//   hpke_interop_tool open SK_HEX INFO_HEX  stdin: wire format; stdout: plaintext
//
// Suite HPKE-P256-SHA256-AES128GCM through the core library (NewHpkeEncrypt /
// NewHpkeDecrypt). Exit 0 on success, 1 with the status on stderr otherwise.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "smcrypt/hpke.h"

namespace {

std::string ReadStdin() {
  std::cin >> std::noskipws;
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "hpke_interop_tool: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using smcrypt::HpkeSuite;
  constexpr HpkeSuite kSuite = HpkeSuite::kP256Sha256Aes128Gcm;
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "keygen" && argc == 2) {
    absl::StatusOr<smcrypt::HpkeKeyPair> kp = smcrypt::HpkeGenerateKeyPair(kSuite);
    if (!kp.ok()) return Fail(kp.status().ToString());
    std::printf("%s %s\n",
                absl::BytesToHexString(smcrypt::SecretDataAsStringView(kp->private_key)).c_str(),
                absl::BytesToHexString(kp->public_key).c_str());
    return 0;
  }
  if ((cmd == "seal" || cmd == "open") && argc == 4) {
    const std::string key = absl::HexStringToBytes(argv[2]);
    const std::string info = absl::HexStringToBytes(argv[3]);
    const std::string in = ReadStdin();
    absl::StatusOr<std::string> out;
    if (cmd == "seal") {
      auto enc = smcrypt::NewHpkeEncrypt(kSuite, key);
      if (!enc.ok()) return Fail(enc.status().ToString());
      out = (*enc)->Encrypt(in, info);
    } else {
      auto dec = smcrypt::NewHpkeDecrypt(kSuite, key);
      if (!dec.ok()) return Fail(dec.status().ToString());
      out = (*dec)->Decrypt(in, info);
    }
    if (!out.ok()) return Fail(out.status().ToString());
    std::fwrite(out->data(), 1, out->size(), stdout);
    return 0;
  }
  return Fail("usage: hpke_interop_tool keygen | seal PK_HEX INFO_HEX | open SK_HEX INFO_HEX");
}
