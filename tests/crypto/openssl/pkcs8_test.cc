// Tests for smcrypt/pkcs8.h: EncryptedPrivateKeyInfo with PBES2, read and written.
//
// Oracles: the openssl command (keys encrypted by `openssl genpkey` and `openssl pkcs8
// -topk8`, decrypted by `openssl pkcs8 -topk8 -nocrypt`); OpenSSL's C API
// (PEM_write_bio_PKCS8PrivateKey, d2i_PKCS8PrivateKey_bio, OSSL_DECODER; for the SM3/SM4
// scheme, which its decoder does not know, its ASN.1 parser, PKCS5_PBKDF2_HMAC and EVP
// SM4-CBC); Python's hashlib.pbkdf2_hmac('sm3', ...) at test time when python3 has SM3;
// and a key written by GmSSL 3 itself (tests/testdata/pkcs8_gmssl_sm2keygen.*).
#include "smcrypt/pkcs8.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "crypto/common/der.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
#include "tests/crypto/openssl/openssl_test_util.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::ReadTestData;
using ::smcrypt::testing::RefPkcs8;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kWrong[] = "wrong password or corrupt key";

// ---- helpers -------------------------------------------------------------------------

std::string View(const SecretData& s) { return std::string(SecretDataAsStringView(s)); }

// Shell runs `command` under /bin/sh and returns its standard output; `*status` gets the
// exit status (−1 when it could not be run).
std::string Shell(const std::string& command, int* status) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, absl::string_view data) {
  std::ofstream f(path, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// TempDir is a fresh directory for one test's files, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "smcrypt_pkcs8_XXXXXX";
    char* dir = mkdtemp(tmpl.data());
    EXPECT_NE(dir, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    int status;
    Shell("rm -rf '" + path_ + "'", &status);
  }
  std::string File(absl::string_view name) const { return absl::StrCat(path_, "/", name); }

 private:
  std::string path_;
};

SslUniquePtr<EVP_PKEY> NewKey(const char* type) {
  SslUniquePtr<EVP_PKEY> key(EVP_PKEY_Q_keygen(nullptr, nullptr, type));
  EXPECT_NE(key, nullptr) << type;
  return key;
}

std::string Pkcs8Of(const char* type) {
  SslUniquePtr<EVP_PKEY> key = NewKey(type);
  return RefPkcs8(key.get());
}

// OpenSslDecodeBio decrypts EncryptedPrivateKeyInfo DER with d2i_PKCS8PrivateKey_bio
// and returns the key's PrivateKeyInfo DER, or "" when OpenSSL refuses.
std::string OpenSslDecodeBio(absl::string_view der, const std::string& password) {
  SslUniquePtr<BIO> bio(BIO_new_mem_buf(der.data(), static_cast<int>(der.size())));
  SslUniquePtr<EVP_PKEY> key(d2i_PKCS8PrivateKey_bio(
      bio.get(), nullptr, nullptr, const_cast<char*>(password.c_str())));
  if (key == nullptr) {
    ERR_clear_error();
    return "";
  }
  return RefPkcs8(key.get());
}

// OpenSslDecoder decrypts with OSSL_DECODER (input "DER" or "PEM", structure
// EncryptedPrivateKeyInfo resolved by the decoder chain).
std::string OpenSslDecoder(absl::string_view in, const char* input_type,
                           const std::string& password) {
  EVP_PKEY* raw = nullptr;
  OSSL_DECODER_CTX* dctx = OSSL_DECODER_CTX_new_for_pkey(
      &raw, input_type, nullptr, nullptr, EVP_PKEY_KEYPAIR, nullptr, nullptr);
  EXPECT_NE(dctx, nullptr);
  if (dctx == nullptr) return "";
  OSSL_DECODER_CTX_set_passphrase(dctx, reinterpret_cast<const unsigned char*>(password.data()),
                                  password.size());
  const unsigned char* p = reinterpret_cast<const unsigned char*>(in.data());
  size_t len = in.size();
  const int ok = OSSL_DECODER_from_data(dctx, &p, &len);
  OSSL_DECODER_CTX_free(dctx);
  SslUniquePtr<EVP_PKEY> key(raw);
  if (ok != 1 || key == nullptr) {
    ERR_clear_error();
    return "";
  }
  return RefPkcs8(key.get());
}

// Pbes2Fields are the parts of an EncryptedPrivateKeyInfo, for building bad ones.
struct Pbes2Fields {
  std::string pbes2_oid = "\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0d";
  std::string kdf_oid = "\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0c";
  std::string salt = std::string(16, '\x5a');
  std::string iterations = std::string("\x08\x00", 2);  // INTEGER contents
  std::optional<uint64_t> key_length;
  bool prf_present = true;
  std::string prf_oid = "\x2a\x86\x48\x86\xf7\x0d\x02\x09";  // hmacWithSHA256
  bool prf_null = true;
  std::string cipher_oid = "\x60\x86\x48\x01\x65\x03\x04\x01\x2a";  // aes256-CBC
  std::string iv = std::string(16, '\x11');
  std::string data = std::string(32, '\x22');
  std::string trailing;  // bytes appended after the outer SEQUENCE
};

std::string Build(const Pbes2Fields& f) {
  der::Writer w;
  w.BeginSequence();
  w.BeginSequence();
  w.AddOid(f.pbes2_oid);
  w.BeginSequence();
  w.BeginSequence();
  w.AddOid(f.kdf_oid);
  w.BeginSequence();
  w.AddOctetString(f.salt);
  w.AddTlv(der::kInteger, f.iterations);
  if (f.key_length) w.AddSmallUnsigned(*f.key_length);
  if (f.prf_present) {
    w.BeginSequence();
    w.AddOid(f.prf_oid);
    if (f.prf_null) w.AddNull();
    w.End();
  }
  w.End();
  w.End();
  w.BeginSequence();
  w.AddOid(f.cipher_oid);
  w.AddOctetString(f.iv);
  w.End();
  w.End();
  w.End();
  w.AddOctetString(f.data);
  w.End();
  return std::move(w).Finish() + f.trailing;
}

// Sm3Sm4Reference decrypts what EncryptPrivateKeyInfo wrote with kPbkdf2HmacSm3Sm4Cbc
// using OpenSSL only: its ASN.1 parser (X509_SIG, PBE2PARAM, PBKDF2PARAM),
// PKCS5_PBKDF2_HMAC with EVP_sm3 and EVP_sm4_cbc. Checks the form GmSSL 3 writes and
// reads: keyLength 16, prf hmacWithSM3 with no parameters. `*salt_out` and `*iv_out`
// get the salt and IV.
std::string Sm3Sm4Reference(absl::string_view der, const std::string& password,
                            uint32_t expected_iterations, std::string* salt_out,
                            std::string* key_out) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<X509_SIG, decltype(&X509_SIG_free)> sig(
      d2i_X509_SIG(nullptr, &p, static_cast<long>(der.size())), X509_SIG_free);
  if (sig == nullptr) {
    ADD_FAILURE() << "d2i_X509_SIG";
    return "";
  }
  const X509_ALGOR* alg = nullptr;
  const ASN1_OCTET_STRING* data = nullptr;
  X509_SIG_get0(sig.get(), &alg, &data);
  const ASN1_OBJECT* alg_oid = nullptr;
  int ptype = 0;
  const void* pval = nullptr;
  X509_ALGOR_get0(&alg_oid, &ptype, &pval, alg);
  EXPECT_EQ(OBJ_obj2nid(alg_oid), NID_pbes2);
  PBE2PARAM* pbe2 = static_cast<PBE2PARAM*>(ASN1_TYPE_unpack_sequence(
      ASN1_ITEM_rptr(PBE2PARAM), static_cast<const ASN1_TYPE*>(alg->parameter)));
  if (pbe2 == nullptr) {
    ADD_FAILURE() << "PBE2PARAM";
    return "";
  }
  EXPECT_EQ(OBJ_obj2nid(pbe2->keyfunc->algorithm), NID_id_pbkdf2);
  EXPECT_EQ(OBJ_obj2nid(pbe2->encryption->algorithm), NID_sm4_cbc);
  PBKDF2PARAM* kdf = static_cast<PBKDF2PARAM*>(
      ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBKDF2PARAM), pbe2->keyfunc->parameter));
  EXPECT_NE(kdf, nullptr);
  std::string result;
  if (kdf != nullptr) {
    char oid_text[64];
    OBJ_obj2txt(oid_text, sizeof(oid_text), kdf->prf->algorithm, 1);
    EXPECT_STREQ(oid_text, "1.2.156.10197.1.401.2");
    EXPECT_EQ(kdf->prf->parameter, nullptr) << "GmSSL 3 reads only a prf without parameters";
    EXPECT_NE(kdf->keylength, nullptr);
    if (kdf->keylength != nullptr) {
      EXPECT_EQ(ASN1_INTEGER_get(kdf->keylength), 16);
    }
    EXPECT_EQ(ASN1_INTEGER_get(kdf->iter), static_cast<long>(expected_iterations));
    const ASN1_OCTET_STRING* salt = kdf->salt->value.octet_string;
    const ASN1_OCTET_STRING* iv = pbe2->encryption->parameter->value.octet_string;
    EXPECT_EQ(ASN1_STRING_length(salt), 16);
    EXPECT_EQ(ASN1_STRING_length(iv), 16);
    *salt_out = std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(salt)),
                            ASN1_STRING_length(salt));
    unsigned char key[16];
    EXPECT_EQ(PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                                ASN1_STRING_get0_data(salt), ASN1_STRING_length(salt),
                                static_cast<int>(ASN1_INTEGER_get(kdf->iter)), EVP_sm3(), 16,
                                key),
              1);
    *key_out = std::string(reinterpret_cast<char*>(key), 16);
    SslUniquePtr<EVP_CIPHER_CTX> ctx(EVP_CIPHER_CTX_new());
    std::string out(ASN1_STRING_length(data) + 16, '\0');
    int n = 0, tail = 0;
    if (EVP_DecryptInit_ex(ctx.get(), EVP_sm4_cbc(), nullptr, key, ASN1_STRING_get0_data(iv)) ==
            1 &&
        EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &n,
                          ASN1_STRING_get0_data(data), ASN1_STRING_length(data)) == 1 &&
        EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + n,
                            &tail) == 1) {
      out.resize(n + tail);
      result = out;
    } else {
      ADD_FAILURE() << "EVP SM4-CBC decryption failed";
    }
    PBKDF2PARAM_free(kdf);
  }
  PBE2PARAM_free(pbe2);
  return result;
}

// PythonPbkdf2Sm3 returns hashlib.pbkdf2_hmac('sm3', password, salt, iterations, 16) from
// python3, or nullopt when python3 is absent or its hashlib (OpenSSL) has no SM3.
std::optional<std::string> PythonPbkdf2Sm3(const std::string& password, absl::string_view salt,
                                           uint32_t iterations) {
  int status = 0;
  Shell("command -v python3 >/dev/null 2>&1 && python3 -c \"import hashlib; hashlib.new('sm3')\" "
      ">/dev/null 2>&1",
      &status);
  if (status != 0) return std::nullopt;
  const std::string out = Shell(
      absl::StrCat("python3 -c \"import hashlib,sys; print(hashlib.pbkdf2_hmac('sm3', "
                   "bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), int(sys.argv[3]), "
                   "16).hex())\" ",
                   BytesToHex(password), " ", BytesToHex(salt), " ", iterations),
      &status);
  EXPECT_EQ(status, 0) << "python3 hashlib.pbkdf2_hmac('sm3') failed";
  return std::string(absl::StripAsciiWhitespace(out));
}

std::map<std::string, std::string> ReadKeyValues(absl::string_view name) {
  std::map<std::string, std::string> kv;
  for (absl::string_view line : absl::StrSplit(ReadTestData(name), '\n')) {
    if (line.empty() || line[0] == '#') continue;
    std::pair<std::string, std::string> p = absl::StrSplit(line, absl::MaxSplits(" = ", 1));
    kv[p.first] = p.second;
  }
  return kv;
}

// RequireOpensslCli fails the test when the openssl command is missing.
void RequireOpensslCli() {
  int status = 0;
  Shell("openssl version >/dev/null 2>&1", &status);
  ASSERT_EQ(status, 0) << "the openssl command is needed (Debian package openssl)";
}

// ---- keys written by OpenSSL ------------------------------------------------------------

TEST(Pkcs8Test, ReadsOpensslGenpkeyAes256) {
  RequireOpensslCli();
  TempDir dir;
  const std::string pw = "correct horse";
  int status = 0;
  Shell("openssl genpkey -algorithm SM2 -aes256 -pass 'pass:" + pw + "' -out " +
          dir.File("enc.pem") + " 2>/dev/null",
      &status);
  ASSERT_EQ(status, 0);
  // What OpenSSL's own decoder makes of it: the reference plaintext.
  Shell("openssl pkcs8 -topk8 -nocrypt -in " + dir.File("enc.pem") + " -passin 'pass:" + pw +
          "' -outform DER -out " + dir.File("plain.der"),
      &status);
  ASSERT_EQ(status, 0);
  const std::string pem = ReadFile(dir.File("enc.pem"));
  const std::string plain = ReadFile(dir.File("plain.der"));
  ASSERT_TRUE(IsEncryptedPrivateKeyInfo(pem));
  absl::StatusOr<Pbes2Params> params = GetPbes2Params(pem);
  ASSERT_THAT(params.status(), IsOk());
  EXPECT_EQ(params->scheme, Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc);
  EXPECT_EQ(params->prf, "hmacWithSHA256");
  EXPECT_EQ(params->cipher, "AES-256-CBC");
  EXPECT_EQ(params->iterations, kPbes2DefaultIterationsSha256Aes256);  // OpenSSL's default
  absl::StatusOr<SecretData> got = DecryptPrivateKeyInfo(pem, pw);
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(View(*got), plain);
  EXPECT_THAT(DecryptPrivateKeyInfo(pem, "correct horsf").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(kWrong)));
}

// `openssl pkcs8 -topk8 -v2 <cipher> -v2prf <prf>` over a key made with the C API, every
// PRF and cipher that is read, PEM and DER.
TEST(Pkcs8Test, ReadsOpensslPkcs8TopkVariants) {
  RequireOpensslCli();
  struct Case {
    const char* key_type;
    const char* cipher;
    const char* prf;
    const char* expected_cipher;
    const char* iter;  // "" for the default
  };
  const Case cases[] = {
      {"SM2", "aes-128-cbc", "hmacWithSHA512", "AES-128-CBC", ""},
      {"SM2", "aes-192-cbc", "hmacWithSHA1", "AES-192-CBC", ""},
      {"EC", "aes-256-cbc", "hmacWithSHA224", "AES-256-CBC", "-iter 1"},
      {"SM2", "aes-256-cbc", "hmacWithSHA384", "AES-256-CBC", "-iter 3000"},
      {"SM2", "sm4-cbc", "hmacWithSHA256", "SM4-CBC", ""},
      {"RSA", "aes-256-cbc", "hmacWithSHA256", "AES-256-CBC", ""},
  };
  const std::string pw = "pässwörd 1";  // UTF-8 bytes, passed as they are
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.key_type, " ", c.cipher, " ", c.prf, " ", c.iter));
    TempDir dir;
    SslUniquePtr<EVP_PKEY> key =
        std::string(c.key_type) == "EC"
            ? SslUniquePtr<EVP_PKEY>(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"))
        : std::string(c.key_type) == "RSA"
            ? SslUniquePtr<EVP_PKEY>(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048}))
            : NewKey(c.key_type);
    ASSERT_NE(key, nullptr);
    const std::string plain = RefPkcs8(key.get());
    WriteFile(dir.File("plain.der"), plain);
    for (const char* form : {"PEM", "DER"}) {
      SCOPED_TRACE(form);
      int status = 0;
      Shell(absl::StrCat("openssl pkcs8 -topk8 -inform DER -in ", dir.File("plain.der"), " -v2 ",
                       c.cipher, " -v2prf ", c.prf, " ", c.iter, " -passout 'pass:", pw,
                       "' -outform ", form, " -out ", dir.File("enc")),
          &status);
      ASSERT_EQ(status, 0);
      const std::string enc = ReadFile(dir.File("enc"));
      EXPECT_TRUE(IsEncryptedPrivateKeyInfo(enc));
      absl::StatusOr<Pbes2Params> params = GetPbes2Params(enc);
      ASSERT_THAT(params.status(), IsOk());
      EXPECT_EQ(params->prf, c.prf);
      EXPECT_EQ(params->cipher, c.expected_cipher);
      absl::StatusOr<SecretData> got = DecryptPrivateKeyInfo(enc, pw);
      ASSERT_THAT(got.status(), IsOk());
      EXPECT_EQ(View(*got), plain);
    }
  }
}

TEST(Pkcs8Test, ReadsOpensslCApiPkcs8PrivateKey) {
  SslUniquePtr<EVP_PKEY> key = NewKey("SM2");
  const std::string plain = RefPkcs8(key.get());
  std::string pw = "c api";
  for (const EVP_CIPHER* cipher : {EVP_aes_256_cbc(), EVP_aes_128_cbc(), EVP_sm4_cbc()}) {
    SCOPED_TRACE(EVP_CIPHER_get0_name(cipher));
    SslUniquePtr<BIO> bio(BIO_new(BIO_s_mem()));
    ASSERT_EQ(PEM_write_bio_PKCS8PrivateKey(bio.get(), key.get(), cipher, pw.data(),
                                            static_cast<int>(pw.size()), nullptr, nullptr),
              1);
    char* data = nullptr;
    const long len = BIO_get_mem_data(bio.get(), &data);
    const std::string pem(data, static_cast<size_t>(len));
    absl::StatusOr<SecretData> got = DecryptPrivateKeyInfo(pem, pw);
    ASSERT_THAT(got.status(), IsOk());
    EXPECT_EQ(View(*got), plain);
  }
}

// ---- what smcrypt writes ------------------------------------------------------------------

TEST(Pkcs8Test, Sha256Aes256RoundTripIsReadByOpensslDecoder) {
  for (const char* type : {"SM2", "EC", "ED25519"}) {
    SCOPED_TRACE(type);
    const std::string plain = std::string(type) == "EC"
                                  ? RefPkcs8(SslUniquePtr<EVP_PKEY>(EVP_PKEY_Q_keygen(
                                                 nullptr, nullptr, "EC", "P-256"))
                                                 .get())
                                  : Pkcs8Of(type);
    const std::string pw = "smcrypt writes";
    absl::StatusOr<std::string> der =
        EncryptPrivateKeyInfo(plain, pw, Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc);
    ASSERT_THAT(der.status(), IsOk());
    absl::StatusOr<Pbes2Params> params = GetPbes2Params(*der);
    ASSERT_THAT(params.status(), IsOk());
    EXPECT_EQ(params->iterations, 2048u);
    EXPECT_EQ(params->salt_size, 16u);
    EXPECT_EQ(params->key_size, 32u);
    absl::StatusOr<SecretData> back = DecryptPrivateKeyInfo(*der, pw);
    ASSERT_THAT(back.status(), IsOk());
    EXPECT_EQ(View(*back), plain);
    EXPECT_EQ(OpenSslDecodeBio(*der, pw), plain);
    const std::string pem = PemEncode("ENCRYPTED PRIVATE KEY", *der);
    EXPECT_EQ(OpenSslDecoder(*der, "DER", pw), plain);
    EXPECT_EQ(OpenSslDecoder(pem, "PEM", pw), plain);
    EXPECT_EQ(OpenSslDecoder(pem, "PEM", "other"), "");  // the oracle can fail
    absl::StatusOr<SecretData> from_pem = DecryptPrivateKeyInfo(pem, pw);
    ASSERT_THAT(from_pem.status(), IsOk());
    EXPECT_EQ(View(*from_pem), plain);
  }
}

TEST(Pkcs8Test, Sha256Aes256IsReadByOpensslCli) {
  RequireOpensslCli();
  TempDir dir;
  const std::string plain = Pkcs8Of("SM2");
  absl::StatusOr<std::string> der =
      EncryptPrivateKeyInfo(plain, "cli pw", Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc, 4096);
  ASSERT_THAT(der.status(), IsOk());
  WriteFile(dir.File("enc.pem"), PemEncode("ENCRYPTED PRIVATE KEY", *der));
  int status = 0;
  Shell("openssl pkcs8 -topk8 -nocrypt -in " + dir.File("enc.pem") +
            " -passin 'pass:cli pw' -outform DER -out " + dir.File("plain.der"),
      &status);
  ASSERT_EQ(status, 0);
  EXPECT_EQ(ReadFile(dir.File("plain.der")), plain);
}

TEST(Pkcs8Test, Sm3Sm4RoundTripMatchesOpensslAndPython) {
  const std::string plain = Pkcs8Of("SM2");
  const std::string pw = "sm passw0rd";
  for (uint32_t iterations : {0u, 1u, 1000u}) {
    SCOPED_TRACE(iterations);
    absl::StatusOr<std::string> der =
        EncryptPrivateKeyInfo(plain, pw, Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc, iterations);
    ASSERT_THAT(der.status(), IsOk());
    const uint32_t expected = iterations == 0 ? kPbes2DefaultIterationsSm3Sm4 : iterations;
    absl::StatusOr<Pbes2Params> params = GetPbes2Params(*der);
    ASSERT_THAT(params.status(), IsOk());
    EXPECT_EQ(params->scheme, Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc);
    EXPECT_EQ(params->iterations, expected);
    EXPECT_EQ(params->key_size, 16u);
    absl::StatusOr<SecretData> back = DecryptPrivateKeyInfo(*der, pw);
    ASSERT_THAT(back.status(), IsOk());
    EXPECT_EQ(View(*back), plain);
    std::string salt, key;
    EXPECT_EQ(Sm3Sm4Reference(*der, pw, expected, &salt, &key), plain);
    std::optional<std::string> py = PythonPbkdf2Sm3(pw, salt, expected);
    if (py.has_value()) {
      EXPECT_EQ(*py, BytesToHex(key));
    } else {
      std::printf("python3 with hashlib SM3 not available: PBKDF2-HMAC-SM3 checked against "
                  "OpenSSL only\n");
    }
    // OpenSSL 3.0's decoder does not know hmacWithSM3.
    EXPECT_EQ(OpenSslDecodeBio(*der, pw), "");
  }
}

TEST(Pkcs8Test, FreshSaltAndIvPerCall) {
  const std::string plain = Pkcs8Of("SM2");
  for (Pbes2Scheme scheme :
       {Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc, Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc}) {
    absl::StatusOr<std::string> a = EncryptPrivateKeyInfo(plain, "pw", scheme, 1);
    absl::StatusOr<std::string> b = EncryptPrivateKeyInfo(plain, "pw", scheme, 1);
    ASSERT_THAT(a.status(), IsOk());
    ASSERT_THAT(b.status(), IsOk());
    EXPECT_NE(*a, *b);
    EXPECT_EQ(a->size(), b->size());
  }
}

// ---- a key written by GmSSL 3 --------------------------------------------------------------

TEST(Pkcs8Test, ReadsGmsslSm2keygenOutput) {
  const std::string pem = ReadTestData("pkcs8_gmssl_sm2keygen.pem");
  std::map<std::string, std::string> kv = ReadKeyValues("pkcs8_gmssl_sm2keygen.txt");
  const std::string expected = HexToBytes(kv["private_key_info"]);
  uint32_t iterations = 0;
  ASSERT_TRUE(absl::SimpleAtoi(kv["iterations"], &iterations));
  ASSERT_TRUE(IsEncryptedPrivateKeyInfo(pem));
  absl::StatusOr<Pbes2Params> params = GetPbes2Params(pem);
  ASSERT_THAT(params.status(), IsOk());
  EXPECT_EQ(params->scheme, Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc);
  EXPECT_EQ(params->prf, kv["prf"]);
  EXPECT_EQ(params->iterations, iterations);
  EXPECT_EQ(iterations, kPbes2DefaultIterationsSm3Sm4);  // GmSSL 3's default
  absl::StatusOr<SecretData> got = DecryptPrivateKeyInfo(pem, kv["password"]);
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(View(*got), expected);
  // The checked-in key and plaintext, against OpenSSL's PBKDF2 and SM4 and, when
  // python3 has SM3, Python's hashlib.
  const std::string salt = HexToBytes(kv["salt"]);
  unsigned char key[16];
  ASSERT_EQ(PKCS5_PBKDF2_HMAC(kv["password"].data(), static_cast<int>(kv["password"].size()),
                              reinterpret_cast<const unsigned char*>(salt.data()),
                              static_cast<int>(salt.size()), static_cast<int>(iterations),
                              EVP_sm3(), 16, key),
            1);
  EXPECT_EQ(BytesToHex(std::string(reinterpret_cast<char*>(key), 16)), kv["key"]);
  std::optional<std::string> py = PythonPbkdf2Sm3(kv["password"], salt, iterations);
  if (py.has_value()) {
    EXPECT_EQ(*py, kv["key"]);
  } else {
    std::printf("python3 with hashlib SM3 not available: compared to the checked-in key\n");
  }
  // The decrypted key is an SM2 key OpenSSL accepts.
  const unsigned char* p = reinterpret_cast<const unsigned char*>(expected.data());
  SslUniquePtr<EVP_PKEY> pkey(
      d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(expected.size())));
  ASSERT_NE(pkey, nullptr);
  EXPECT_TRUE(EVP_PKEY_is_a(pkey.get(), "SM2") || EVP_PKEY_is_a(pkey.get(), "EC"));
  EXPECT_THAT(DecryptPrivateKeyInfo(pem, "12345").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(kWrong)));
}

// ---- bad input ------------------------------------------------------------------------

TEST(Pkcs8Test, IsEncryptedPrivateKeyInfoRejectsOtherForms) {
  const std::string plain = Pkcs8Of("SM2");
  EXPECT_FALSE(IsEncryptedPrivateKeyInfo(plain));
  EXPECT_FALSE(IsEncryptedPrivateKeyInfo(PemEncode("PRIVATE KEY", plain)));
  EXPECT_FALSE(IsEncryptedPrivateKeyInfo(std::string(32, '\x30')));
  EXPECT_FALSE(IsEncryptedPrivateKeyInfo(""));
  absl::StatusOr<std::string> der =
      EncryptPrivateKeyInfo(plain, "pw", Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc, 1);
  ASSERT_THAT(der.status(), IsOk());
  EXPECT_TRUE(IsEncryptedPrivateKeyInfo(*der));
  EXPECT_FALSE(IsEncryptedPrivateKeyInfo(*der + "x"));
  EXPECT_FALSE(IsEncryptedPrivateKeyInfo(der->substr(0, der->size() - 1)));
  // A PBES1 structure is still an EncryptedPrivateKeyInfo; decrypting it names the OID.
  Pbes2Fields f;
  f.pbes2_oid = "\x2a\x86\x48\x86\xf7\x0d\x01\x05\x03";  // pbeWithMD5AndDES-CBC
  EXPECT_TRUE(IsEncryptedPrivateKeyInfo(Build(f)));
}

TEST(Pkcs8Test, WrongPasswordAndCorruptCiphertextGiveOneError) {
  const std::string plain = Pkcs8Of("SM2");
  for (Pbes2Scheme scheme :
       {Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc, Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc}) {
    absl::StatusOr<std::string> der = EncryptPrivateKeyInfo(plain, "right", scheme, 10);
    ASSERT_THAT(der.status(), IsOk());
    const auto wrong = StatusIs(absl::StatusCode::kInvalidArgument,
                                "EncryptedPrivateKeyInfo: wrong password or corrupt key");
    EXPECT_THAT(DecryptPrivateKeyInfo(*der, "wrong").status(), wrong);
    EXPECT_THAT(DecryptPrivateKeyInfo(*der, "").status(), wrong);
    // The pad byte forced above 16: the second-to-last ciphertext block's last byte.
    std::string bad = *der;
    bad[bad.size() - 17] ^= 0x80;
    EXPECT_THAT(DecryptPrivateKeyInfo(bad, "right").status(), wrong);
    // The first block garbled: the padding holds, the PrivateKeyInfo framing does not.
    // (encryptedData is the last (|plain| / 16 + 1) · 16 bytes of the DER; its first
    // block decrypts to the SEQUENCE header, which comes out as 16 random bytes.)
    const size_t encrypted_size = (plain.size() / 16 + 1) * 16;
    bad = *der;
    bad[bad.size() - encrypted_size] ^= 0x01;
    EXPECT_THAT(DecryptPrivateKeyInfo(bad, "right").status(), wrong);
    // The IV changed: the first plaintext block changes, the same way.
    bad = *der;
    bad[bad.size() - encrypted_size - 2 - 16] ^= 0x01;
    EXPECT_THAT(DecryptPrivateKeyInfo(bad, "right").status(), wrong);
  }
}

// Many passwords: each wrong one is refused with the one message (about 1 in 256 pass
// the padding; the framing check catches those).
TEST(Pkcs8Test, ManyWrongPasswordsAreAllRefused) {
  const std::string plain = Pkcs8Of("SM2");
  absl::StatusOr<std::string> der =
      EncryptPrivateKeyInfo(plain, "right", Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc, 1);
  ASSERT_THAT(der.status(), IsOk());
  for (int i = 0; i < 2000; ++i) {
    EXPECT_THAT(DecryptPrivateKeyInfo(*der, absl::StrCat("wrong", i)).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(kWrong)))
        << i;
  }
}

TEST(Pkcs8Test, TruncatedAtEveryLength) {
  const std::string plain = Pkcs8Of("SM2");
  absl::StatusOr<std::string> der =
      EncryptPrivateKeyInfo(plain, "pw", Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc, 1);
  ASSERT_THAT(der.status(), IsOk());
  for (size_t n = 0; n < der->size(); ++n) {
    EXPECT_THAT(DecryptPrivateKeyInfo(der->substr(0, n), "pw").status(),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << n;
    EXPECT_THAT(GetPbes2Params(der->substr(0, n)).status(),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << n;
  }
  const std::string pem = PemEncode("ENCRYPTED PRIVATE KEY", *der);
  for (size_t n = 0; n < pem.size(); n += 7) {
    EXPECT_THAT(DecryptPrivateKeyInfo(pem.substr(0, n), "pw").status(),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << n;
  }
}

TEST(Pkcs8Test, MalformedParametersNameTheDefect) {
  struct Case {
    const char* name;
    Pbes2Fields fields;
    const char* message;
  };
  std::vector<Case> cases;
  auto add = [&](const char* name, auto edit, const char* message) {
    Pbes2Fields f;
    edit(f);
    cases.push_back({name, f, message});
  };
  add("PBES1", [](Pbes2Fields& f) { f.pbes2_oid = "\x2a\x86\x48\x86\xf7\x0d\x01\x05\x03"; },
      "encryption algorithm 1.2.840.113549.1.5.3 is not supported");
  add("PKCS#12 PBE",
      [](Pbes2Fields& f) { f.pbes2_oid = "\x2a\x86\x48\x86\xf7\x0d\x01\x0c\x01\x03"; },
      "encryption algorithm 1.2.840.113549.1.12.1.3 is not supported");
  add("KDF", [](Pbes2Fields& f) { f.kdf_oid = "\x2b\x06\x01\x04\x01\xda\x47\x04\x0b"; },
      "key derivation function 1.3.6.1.4.1.11591.4.11 is not supported");
  add("PRF", [](Pbes2Fields& f) { f.prf_oid = "\x2a\x86\x48\x86\xf7\x0d\x02\x05"; },
      "PBKDF2 PRF 1.2.840.113549.2.5 is not supported");
  add("cipher", [](Pbes2Fields& f) { f.cipher_oid = "\x2a\x86\x48\x86\xf7\x0d\x03\x07"; },
      "encryption scheme 1.2.840.113549.3.7 is not supported");
  add("GCM", [](Pbes2Fields& f) { f.cipher_oid = "\x60\x86\x48\x01\x65\x03\x04\x01\x2e"; },
      "encryption scheme 2.16.840.1.101.3.4.1.46 is not supported");
  add("iterations 0", [](Pbes2Fields& f) { f.iterations = std::string(1, '\0'); },
      "PBKDF2 iteration count 0");
  add("iterations 10^7+1",
      [](Pbes2Fields& f) { f.iterations = std::string("\x00\x98\x96\x81", 4); },
      "PBKDF2 iteration count 10000001 exceeds the limit of 10000000");
  add("iterations 2^64",
      [](Pbes2Fields& f) { f.iterations = std::string("\x01\x00\x00\x00\x00\x00\x00\x00\x00", 9); },
      "PBKDF2 iteration count of 9 bytes exceeds the limit");
  add("iterations negative", [](Pbes2Fields& f) { f.iterations = "\xff"; },
      "PBKDF2-params iterationCount: DER: negative INTEGER");
  add("iterations non-minimal", [](Pbes2Fields& f) { f.iterations = std::string("\x00\x01", 2); },
      "non-minimal INTEGER");
  add("IV 8 bytes", [](Pbes2Fields& f) { f.iv = std::string(8, '\x01'); },
      "AES-256-CBC IV is 8 bytes, expected 16");
  add("IV 0 bytes", [](Pbes2Fields& f) { f.iv.clear(); }, "IV is 0 bytes, expected 16");
  add("empty salt", [](Pbes2Fields& f) { f.salt.clear(); }, "PBKDF2 salt is 0 bytes");
  add("salt 257", [](Pbes2Fields& f) { f.salt = std::string(257, 's'); },
      "PBKDF2 salt is 257 bytes");
  add("keyLength", [](Pbes2Fields& f) { f.key_length = 16; },
      "PBKDF2 keyLength 16 does not match AES-256-CBC's 32-byte key");
  add("data empty", [](Pbes2Fields& f) { f.data.clear(); }, "encryptedData is 0 bytes");
  add("data 33", [](Pbes2Fields& f) { f.data = std::string(33, 'd'); },
      "encryptedData is 33 bytes, expected a non-zero multiple of 16");
  add("data too long", [](Pbes2Fields& f) { f.data = std::string(65552, 'd'); },
      "encryptedData is 65552 bytes");
  add("trailing", [](Pbes2Fields& f) { f.trailing = std::string(1, '\0'); },
      "EncryptedPrivateKeyInfo: DER: trailing bytes");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string der = Build(c.fields);
    EXPECT_THAT(DecryptPrivateKeyInfo(der, "pw").status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
    EXPECT_THAT(GetPbes2Params(der).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
  }
}

TEST(Pkcs8Test, AcceptedParameterForms) {
  // The valid variants parse: keyLength equal to the key size, PRF absent (SHA-1),
  // PRF without NULL, the defaults of each field.
  Pbes2Fields f;
  f.key_length = 32;
  ASSERT_THAT(GetPbes2Params(Build(f)).status(), IsOk());
  f.prf_present = false;
  absl::StatusOr<Pbes2Params> p = GetPbes2Params(Build(f));
  ASSERT_THAT(p.status(), IsOk());
  EXPECT_EQ(p->prf, "hmacWithSHA1");
  EXPECT_EQ(p->scheme, std::nullopt);
  f.prf_present = true;
  f.prf_null = false;
  p = GetPbes2Params(Build(f));
  ASSERT_THAT(p.status(), IsOk());
  EXPECT_EQ(p->scheme, Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc);
  f.iterations = std::string("\x00\x98\x96\x80", 4);  // exactly the limit
  p = GetPbes2Params(Build(f));
  ASSERT_THAT(p.status(), IsOk());
  EXPECT_EQ(p->iterations, kMaxPbkdf2Iterations);
  // Random ciphertext under valid parameters: the one generic error.
  f.iterations = "\x01";
  EXPECT_THAT(DecryptPrivateKeyInfo(Build(f), "pw").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(kWrong)));
}

TEST(Pkcs8Test, PemWithAnotherLabelOrBadBase64) {
  const std::string plain = Pkcs8Of("SM2");
  absl::StatusOr<std::string> der =
      EncryptPrivateKeyInfo(plain, "pw", Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc, 1);
  ASSERT_THAT(der.status(), IsOk());
  EXPECT_THAT(DecryptPrivateKeyInfo(PemEncode("PRIVATE KEY", *der), "pw").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PEM label \"PRIVATE KEY\", expected \"ENCRYPTED PRIVATE KEY\"")));
  std::string pem = PemEncode("ENCRYPTED PRIVATE KEY", *der);
  pem[40] = '!';
  EXPECT_THAT(DecryptPrivateKeyInfo(pem, "pw").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("PEM: ")));
  // An unencrypted PrivateKeyInfo given to the decryptor.
  EXPECT_THAT(DecryptPrivateKeyInfo(plain, "pw").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(Pkcs8Test, EncryptRefusesBadArguments) {
  const std::string plain = Pkcs8Of("SM2");
  const auto scheme = Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc;
  EXPECT_THAT(EncryptPrivateKeyInfo(plain, "", scheme).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("password is 0 bytes")));
  EXPECT_THAT(EncryptPrivateKeyInfo(plain, std::string(kMaxPkcs8PasswordSize + 1, 'p'), scheme)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("password is 65537 bytes")));
  EXPECT_THAT(EncryptPrivateKeyInfo(plain, "pw", scheme, kMaxPbkdf2Iterations + 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("exceeds the limit")));
  EXPECT_THAT(EncryptPrivateKeyInfo("not DER", "pw", scheme).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("PrivateKeyInfo: DER: ")));
  EXPECT_THAT(EncryptPrivateKeyInfo(plain + "x", "pw", scheme).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trailing")));
  EXPECT_THAT(EncryptPrivateKeyInfo(std::string(32, '\x07'), "pw", scheme).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("PrivateKeyInfo: ")));
  EXPECT_THAT(DecryptPrivateKeyInfo("x", std::string(kMaxPkcs8PasswordSize + 1, 'p')).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("password is 65537 bytes")));
  EXPECT_THAT(DecryptPrivateKeyInfo(std::string(kMaxEncryptedPrivateKeyInfoInput + 1, '0'), "pw")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at most 1048576")));
}

}  // namespace
}  // namespace smcrypt
