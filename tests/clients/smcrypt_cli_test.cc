// Integration tests of the smcrypt CLI: a real smcryptd on a free loopback port, and
// the smcrypt binary run as a subprocess for every command. Results are checked
// against the standards' known answers (GB/T 32905, FIPS 180-4) and OpenSSL 3.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "openssl/evp.h"
#include "openssl/hmac.h"
#include "tests/testing/test_util.h"

extern char** environ;

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::testing::HasSubstr;
using ::testing::Not;

struct RunResult {
  int code = -1;
  std::string out;
  std::string err;
};

std::string ReadWhole(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteWhole(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

// FreePort returns a loopback TCP port nothing listens on right now.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool CanConnect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// Spawn runs `argv` with stdin from `in_path` and stdout/stderr to files; returns pid.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& in_path,
            const std::string& out_path, const std::string& err_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot spawn " << argv[0];
  return rc == 0 ? pid : -1;
}

class SmcryptCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/smcrypt_cli_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = new std::string(tmpl);
    WriteWhole(Path("empty"), "");
    server_log_ = new std::string(Path("smcryptd.log"));
    port_ = FreePort();
    server_pid_ = StartServer(port_, {}, *server_log_);
  }

  // StartServer starts smcryptd on 127.0.0.1:`port` with `extra` flags (and no drain
  // delay: StopServer's SIGTERM waits for no balancer) and waits until it accepts
  // connections; returns its pid, or -1 after a test failure.
  static pid_t StartServer(int port, const std::vector<std::string>& extra,
                           const std::string& log) {
    std::vector<std::string> argv = {SMCRYPTD_PATH, absl::StrCat("--listen=127.0.0.1:", port),
                                     absl::StrCat("--metrics_listen=127.0.0.1:", FreePort()),
                                     "--drain_delay=0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    pid_t pid = Spawn(argv, Path("empty"), log + ".out", log);
    if (pid <= 0) return -1;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!CanConnect(port)) {
      int status;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        ADD_FAILURE() << "smcryptd exited at start:\n" << ReadWhole(log);
        return -1;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "smcryptd did not listen within 60 s:\n" << ReadWhole(log);
        StopServer(pid);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return pid;
  }

  static void StopServer(pid_t pid) {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
  }

  static void TearDownTestSuite() {
    StopServer(server_pid_);
    server_pid_ = -1;
    // Keep the keys, outputs and server logs when asked, for a failure post-mortem.
    if (std::getenv("SMCRYPT_KEEP_TEST_DIR") == nullptr) {
      std::error_code ignored;
      std::filesystem::remove_all(*dir_, ignored);
    }
  }

  void SetUp() override {
    if (server_pid_ <= 0) GTEST_SKIP() << "smcryptd is not running";
  }

  static std::string Path(absl::string_view name) { return absl::StrCat(*dir_, "/", name); }
  static std::string Target() { return absl::StrCat("127.0.0.1:", port_); }

  // Run runs `smcrypt args... --target <server>` with `stdin_data` on stdin.
  static RunResult Run(std::vector<std::string> args, const std::string& stdin_data = "",
                       bool add_target = true) {
    args.insert(args.begin(), SMCRYPT_CLI_PATH);
    if (add_target) {
      args.push_back("--target");
      args.push_back(Target());
    }
    return RunProgram(args, stdin_data);
  }

  static RunResult RunProgram(const std::vector<std::string>& argv,
                              const std::string& stdin_data = "") {
    static int counter = 0;
    std::string base = Path(absl::StrCat("run", ++counter));
    WriteWhole(base + ".in", stdin_data);
    RunResult r;
    pid_t pid = Spawn(argv, base + ".in", base + ".out", base + ".err");
    if (pid <= 0) return r;
    int status = 0;
    waitpid(pid, &status, 0);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = ReadWhole(base + ".out");
    r.err = ReadWhole(base + ".err");
    return r;
  }

  static std::string* dir_;
  static std::string* server_log_;
  static int port_;
  static pid_t server_pid_;
};

std::string* SmcryptCliTest::dir_ = nullptr;
std::string* SmcryptCliTest::server_log_ = nullptr;
int SmcryptCliTest::port_ = 0;
pid_t SmcryptCliTest::server_pid_ = -1;

std::string Describe(const RunResult& r) {
  return absl::StrCat("exit ", r.code, "\nstdout: ", r.out, "\nstderr: ", r.err);
}

std::string Trimmed(const std::string& s) { return std::string(absl::StripAsciiWhitespace(s)); }

std::string OpenSslDigest(const EVP_MD* md, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(data.data(), data.size(), out, &len, md, nullptr), 1);
  return std::string(reinterpret_cast<char*>(out), len);
}

// OpenSslCipher runs a one-shot EVP cipher with PKCS#7 padding (OpenSSL's default).
std::string OpenSslEncrypt(const EVP_CIPHER* cipher, const std::string& key,
                           const std::string& iv, const std::string& plaintext) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::string out(plaintext.size() + 32, '\0');
  int len1 = 0, len2 = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, cipher, nullptr,
                               reinterpret_cast<const unsigned char*>(key.data()),
                               reinterpret_cast<const unsigned char*>(iv.data())), 1);
  EXPECT_EQ(EVP_EncryptUpdate(ctx, reinterpret_cast<unsigned char*>(out.data()), &len1,
                              reinterpret_cast<const unsigned char*>(plaintext.data()),
                              static_cast<int>(plaintext.size())), 1);
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx, reinterpret_cast<unsigned char*>(out.data()) + len1,
                                &len2), 1);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(len1 + len2);
  return out;
}

// ---- hash ---------------------------------------------------------------------------

TEST_F(SmcryptCliTest, HashAbcSm3MatchesGbt32905) {
  // GB/T 32905-2016 Appendix A, example 1.
  RunResult r = Run({"hash", "--alg", "sm3"}, "abc");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0\n");
  // Same through a file (the unary Hash call) and a mixed-case name.
  WriteWhole(Path("abc.txt"), "abc");
  r = Run({"hash", "--alg", "sM3", Path("abc.txt")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0\n");
}

TEST_F(SmcryptCliTest, HashSha256AbcMatchesFips180) {
  RunResult r = Run({"hash", "--alg", "SHA-256", "--format", "base64"}, "abc");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(Trimmed(r.out), "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
}

TEST_F(SmcryptCliTest, HashStreamOfLargeFileAndStdinMatchesOpenSsl) {
  uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  // 3 MiB + 5: larger than the unary limit, several HashStream chunks, a short tail.
  std::string data = testing::RandomBytes(rng, (3 << 20) + 5);
  WriteWhole(Path("large.bin"), data);
  std::string want = BytesToHex(OpenSslDigest(EVP_sm3(), data)) + "\n";
  RunResult r = Run({"hash", Path("large.bin")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, want);
  r = Run({"hash", "--alg", "sm3"}, data);  // stdin always streams
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, want);
  // GB/T 32905-2016 Appendix A, example 2 (512 bits), forced through HashStream.
  WriteWhole(Path("abcd16.txt"), std::string(absl::StrCat(
      "abcdabcdabcdabcdabcdabcdabcdabcd", "abcdabcdabcdabcdabcdabcdabcdabcd")));
  r = Run({"hash", "--stream", "--in", Path("abcd16.txt")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732\n");
  // Empty input.
  r = Run({"hash", "--alg", "sha-256"}, "");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n");
}

TEST_F(SmcryptCliTest, HashSeveralFilesUsesOneLinePerFile) {
  std::vector<std::string> args = {"hash", "--alg", "sha-256"};
  std::vector<std::string> contents = {"", "abc", std::string(5000, 'x')};
  for (size_t i = 0; i < contents.size(); ++i) {
    std::string p = Path(absl::StrCat("multi", i));
    WriteWhole(p, contents[i]);
    args.push_back(p);
  }
  RunResult r = Run(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  std::vector<std::string> lines = absl::StrSplit(Trimmed(r.out), '\n');
  ASSERT_EQ(lines.size(), contents.size()) << r.out;
  for (size_t i = 0; i < contents.size(); ++i) {
    EXPECT_EQ(lines[i], absl::StrCat(BytesToHex(OpenSslDigest(EVP_sha256(), contents[i])),
                                     "  ", Path(absl::StrCat("multi", i))));
  }
  // A missing file is reported; the others are still hashed; exit 2 (local error).
  r = Run({"hash", Path("multi1"), Path("no-such-file")});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr(Path("multi1")));
  EXPECT_THAT(r.err, HasSubstr("no-such-file"));
}

// ---- hmac ---------------------------------------------------------------------------

TEST_F(SmcryptCliTest, HmacMatchesOpenSslAndChecksExpectedTag) {
  std::string key = HexToBytes("000102030405060708090a0b0c0d0e0f1011");
  std::string msg = "message to authenticate";
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sm3(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), mac, &mac_len);
  std::string want = BytesToHex(std::string(reinterpret_cast<char*>(mac), mac_len));
  RunResult r = Run({"hmac", "--alg", "hmac-sm3", "--key-hex", BytesToHex(key)}, msg);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(Trimmed(r.out), want);
  r = Run({"hmac", "--key-hex", BytesToHex(key), "--expect", want}, msg);
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(Trimmed(r.out), "MAC valid");
  r = Run({"hmac", "--key-hex", BytesToHex(key), "--expect", want}, msg + "!");
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_EQ(Trimmed(r.out), "MAC invalid");
}

// ---- keygen, sign, verify ---------------------------------------------------------

TEST_F(SmcryptCliTest, KeygenOutputIsReadByOpenSsl) {
  for (std::string alg : {"sm2", "ecdsa-p256", "rsa-2048-pss"}) {
    SCOPED_TRACE(alg);
    std::string priv = Path(alg + ".pem"), pub = Path(alg + "pub.pem");
    RunResult r = Run({"keygen", "--alg", alg, "--out", priv, "--pubout", pub});
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_THAT(ReadWhole(priv), HasSubstr("-----BEGIN PRIVATE KEY-----"));
    RunResult o = RunProgram({"openssl", "pkey", "-in", priv, "-noout"});
    EXPECT_EQ(o.code, 0) << Describe(o);
    o = RunProgram({"openssl", "pkey", "-pubin", "-in", pub, "-noout"});
    EXPECT_EQ(o.code, 0) << Describe(o);
    // pubkey (GetPublicKey) derives the same public key from the private one.
    r = Run({"pubkey", "--alg", alg, "--key", priv});
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_EQ(r.out, ReadWhole(pub));
  }
  // Without --pubout, one file holds both; openssl reads the private key first.
  RunResult r = Run({"keygen", "--out", Path("both.pem")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  RunResult o = RunProgram({"openssl", "pkey", "-in", Path("both.pem"), "-noout", "-text"});
  EXPECT_EQ(o.code, 0) << Describe(o);
  EXPECT_THAT(o.out, HasSubstr("SM2"));
}

TEST_F(SmcryptCliTest, SignVerifyRoundTripAndTamperedMessage) {
  std::string priv = Path("signer.pem"), pub = Path("signerpub.pem");
  RunResult r = Run({"keygen", "--alg", "sm2", "--out", priv, "--pubout", pub});
  ASSERT_EQ(r.code, 0) << Describe(r);
  WriteWhole(Path("msg.txt"), "the message");
  WriteWhole(Path("tampered.txt"), "the messagE");
  for (std::string encoding : {"der", "raw"}) {
    SCOPED_TRACE(encoding);
    std::string sig = Path("msg.sig." + encoding);
    r = Run({"sign", "--key", priv, "--sig-encoding", encoding, "--out", sig,
             Path("msg.txt")});
    ASSERT_EQ(r.code, 0) << Describe(r);
    if (encoding == "raw") {
      EXPECT_EQ(Trimmed(ReadWhole(sig)).size(), 128u);
    }
    r = Run({"verify", "--key", pub, "--sig-encoding", encoding, "--sig", sig,
             Path("msg.txt")});
    EXPECT_EQ(r.code, 0) << Describe(r);
    EXPECT_EQ(Trimmed(r.out), "signature valid");
    r = Run({"verify", "--key", pub, "--sig-encoding", encoding, "--sig", sig,
             Path("tampered.txt")});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_EQ(Trimmed(r.out), "signature invalid");
  }
  // Another signer ID changes Z: the default-ID signature does not verify under it.
  r = Run({"verify", "--key", pub, "--id", "alice@example.com", "--sig",
           Path("msg.sig.der"), Path("msg.txt")});
  EXPECT_EQ(r.code, 1) << Describe(r);
}

TEST_F(SmcryptCliTest, SignSeveralFilesAndVerifyCheckList) {
  std::string priv = Path("batch.pem"), pub = Path("batchpub.pem");
  ASSERT_EQ(Run({"keygen", "--alg", "ecdsa-p256", "--out", priv, "--pubout", pub}).code, 0);
  std::vector<std::string> args = {"sign", "--alg", "ECDSA-P256", "--key", priv,
                                    "--out", Path("SIGS")};
  for (int i = 0; i < 3; ++i) {
    WriteWhole(Path(absl::StrCat("doc", i)), absl::StrCat("document ", i));
    args.push_back(Path(absl::StrCat("doc", i)));
  }
  RunResult r = Run(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = Run({"verify", "--alg", "ecdsa-p256", "--key", pub, "--check", Path("SIGS")});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat(Path("doc0"), ": OK\n", Path("doc1"), ": OK\n", Path("doc2"),
                                ": OK\n"));
  WriteWhole(Path("doc1"), "changed");
  r = Run({"verify", "--alg", "ecdsa-p256", "--key", pub, "--check", Path("SIGS")});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat(Path("doc1"), ": FAILED")));
}

// ---- symmetric encryption -----------------------------------------------------------

TEST_F(SmcryptCliTest, Sm4GcmRoundTripWithGeneratedKey) {
  std::string key = Path("sm4gcm.key");
  RunResult r = Run({"keygen", "--alg", "sm4-gcm", "--out", key});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_THAT(ReadWhole(key), HasSubstr("-----BEGIN SM4 KEY-----"));
  std::string msg = "attack at dawn, SM4-GCM";
  r = Run({"encrypt", "--alg", "sm4-gcm", "--key", key, "--aad", "hdr"}, msg);
  ASSERT_EQ(r.code, 0) << Describe(r);
  std::string ct = HexToBytes(Trimmed(r.out));
  EXPECT_EQ(ct.size(), 12 + msg.size() + 16);  // nonce || ciphertext || tag
  WriteWhole(Path("gcm.hex"), r.out);
  r = Run({"decrypt", "--alg", "sm4-gcm", "--key", key, "--aad", "hdr", Path("gcm.hex")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, msg);
  // The PEM type binds the key to its family, for --key files as for the keyring: an
  // SM4 KEY is never sent as an AES or a signing key (usage error, exit 2).
  r = Run({"encrypt", "--alg", "aes-128-gcm", "--key", key}, msg);
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("AES-128-GCM needs an AES KEY"));
  r = Run({"sign", "--key", key}, msg);
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("holds an SM4 KEY"));
  // Wrong aad, flipped ciphertext byte: the server's generic failure, DECRYPTION_FAILED:
  // exit 1, as a signature that does not verify.
  r = Run({"decrypt", "--key", key, "--aad", "hdR", Path("gcm.hex")});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr("decryption failed"));
  EXPECT_THAT(r.err, HasSubstr("needs decrypt --stream and the same --chunk-size"));
  std::string flipped = ct;
  flipped[14] ^= 1;
  r = Run({"decrypt", "--key", key, "--aad", "hdr"}, BytesToHex(flipped));
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(r.out.empty());
  // A caller-chosen nonce is not in the output; a short tag is honoured.
  r = Run({"encrypt", "--key", key, "--nonce", "000102030405060708090a0b", "--tag-length",
           "12", "--format", "base64"}, msg);
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = Run({"decrypt", "--key", key, "--nonce", "000102030405060708090a0b", "--tag-length",
           "12", "--format", "base64"}, r.out);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, msg);
}

TEST_F(SmcryptCliTest, Sm4CbcRoundTripMatchesOpenSsl) {
  RunResult r = Run({"random", "16"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  std::string key_hex = Trimmed(r.out);
  ASSERT_EQ(key_hex.size(), 32u);
  uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::string msg = testing::RandomBytes(rng, 1000);
  r = Run({"encrypt", "--alg", "SM4-CBC", "--key-hex", key_hex, "--format", "raw"}, msg);
  ASSERT_EQ(r.code, 0) << Describe(r);
  ASSERT_EQ(r.out.size(), 16 + 1008u);  // IV || PKCS#7-padded ciphertext
  std::string iv = r.out.substr(0, 16);
  EXPECT_EQ(r.out.substr(16), OpenSslEncrypt(EVP_sm4_cbc(), HexToBytes(key_hex), iv, msg));
  r = Run({"decrypt", "--alg", "sm4-cbc", "--key-hex", key_hex, "--format", "raw"}, r.out);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, msg);
  // Keygen'd key file, PEM "SM4 KEY".
  ASSERT_EQ(Run({"keygen", "--alg", "sm4-cbc", "--out", Path("cbc.key")}).code, 0);
  r = Run({"encrypt", "--alg", "sm4-cbc", "--key", Path("cbc.key")}, msg);
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = Run({"decrypt", "--alg", "sm4-cbc", "--key", Path("cbc.key")}, r.out);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, msg);
}

TEST_F(SmcryptCliTest, StreamingEncryptDecryptRoundTrip) {
  uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::string key_hex = BytesToHex(testing::RandomBytes(rng, 16));
  // 200 KiB + 7: four 64 KiB segments and a short last one.
  std::string data = testing::RandomBytes(rng, 200 * 1024 + 7);
  WriteWhole(Path("stream.bin"), data);
  for (std::string alg : {"sm4-gcm", "sm4-cbc", "sm4-ctr"}) {
    SCOPED_TRACE(alg);
    std::string enc = Path("stream.enc." + alg);
    RunResult r = Run({"encrypt", "--stream", "--alg", alg, "--key-hex", key_hex, "--format",
                       "raw", "--out", enc, Path("stream.bin")});
    ASSERT_EQ(r.code, 0) << Describe(r);
    r = Run({"decrypt", "--stream", "--alg", alg, "--key-hex", key_hex, "--format", "raw",
             enc});
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_TRUE(r.out == data) << "stream round trip differs, " << r.out.size() << " bytes";
    if (alg != "sm4-gcm") {
      // ECB/CBC/CTR streams are byte-identical to the one-shot form.
      r = Run({"decrypt", "--alg", alg, "--key-hex", key_hex, "--format", "raw", enc});
      ASSERT_EQ(r.code, 0) << Describe(r);
      EXPECT_TRUE(r.out == data);
    }
  }
  // Dropping the last GCM segment is detected: an authentication failure, exit 1.
  std::string enc = ReadWhole(Path("stream.enc.sm4-gcm"));
  std::string truncated = enc.substr(0, 12 + 3 * (65536 + 16));
  RunResult r = Run({"decrypt", "--stream", "--key-hex", key_hex, "--format", "raw",
                     "--out", Path("truncated.out")}, truncated);
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_NE(access(Path("truncated.out").c_str(), F_OK), 0) << "partial output left behind";
}

// ---- public-key encryption, hybrid ---------------------------------------------------

TEST_F(SmcryptCliTest, PkEncryptDecryptRoundTrip) {
  std::string priv = Path("pke.pem"), pub = Path("pkepub.pem");
  ASSERT_EQ(Run({"keygen", "--alg", "sm2", "--out", priv, "--pubout", pub}).code, 0);
  std::string msg = "SM2 encryption, GB/T 32918.4";
  for (std::string layout : {"c1c3c2", "c1c2c3", "der"}) {
    SCOPED_TRACE(layout);
    RunResult r = Run({"pkencrypt", "--key", pub, "--sm2-format", layout}, msg);
    ASSERT_EQ(r.code, 0) << Describe(r);
    if (layout != "der") {
      EXPECT_EQ(HexToBytes(Trimmed(r.out)).size(), 97 + msg.size());
    }
    r = Run({"pkdecrypt", "--key", priv, "--sm2-format", layout}, r.out);
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_EQ(r.out, msg);
  }
  // --format takes a layout and an encoding together.
  RunResult r = Run({"pkencrypt", "--key", pub, "--format", "der", "--format", "base64"}, msg);
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = Run({"pkdecrypt", "--key", priv, "--format", "der", "--format", "base64"}, r.out);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, msg);
  // RSA-OAEP.
  ASSERT_EQ(Run({"keygen", "--alg", "rsa-2048-oaep", "--out", Path("rsa.pem"), "--pubout",
                 Path("rsapub.pem")}).code, 0);
  r = Run({"pkencrypt", "--alg", "rsa-2048-oaep", "--key", Path("rsapub.pem")}, msg);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(HexToBytes(Trimmed(r.out)).size(), 256u);
  r = Run({"pkdecrypt", "--alg", "rsa-2048-oaep", "--key", Path("rsa.pem")}, r.out);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, msg);
}

TEST_F(SmcryptCliTest, SealOpenRoundTrips) {
  // The SM suite's recipient key is an SM2 key pair; the P-256 suite's an EC P-256 pair.
  ASSERT_EQ(Run({"keygen", "--alg", "sm2", "--out", Path("hpke.pem"), "--pubout",
                 Path("hpkepub.pem")}).code, 0);
  ASSERT_EQ(Run({"keygen", "--alg", "ecdsa-p256", "--out", Path("p256.pem"), "--pubout",
                 Path("p256pub.pem")}).code, 0);
  const std::string big(300000, 'b');  // several 64 KiB reads on the streamed path
  struct Case {
    std::vector<std::string> alg;
    std::string priv, pub;
  };
  for (const Case& c : {Case{{}, Path("hpke.pem"), Path("hpkepub.pem")},
                        Case{{"--alg", "hpke-p256-sha256-aes128gcm"}, Path("p256.pem"),
                             Path("p256pub.pem")}}) {
    for (bool stream : {false, true}) {
      for (const std::string& msg : {std::string("hello"), big}) {
        SCOPED_TRACE(absl::StrCat(c.pub, stream ? " stream " : " one-shot ", msg.size()));
        std::vector<std::string> seal = {"seal", "--key", c.pub, "--info", "ctx"};
        seal.insert(seal.end(), c.alg.begin(), c.alg.end());
        if (stream) seal.push_back("--stream");
        RunResult r = Run(seal, msg);
        ASSERT_EQ(r.code, 0) << Describe(r);
        const std::string sealed = r.out;
        if (!stream) EXPECT_EQ(HexToBytes(Trimmed(sealed)).size(), msg.size() + 88);
        std::vector<std::string> open = {"open", "--key", c.priv, "--info", "ctx"};
        open.insert(open.end(), c.alg.begin(), c.alg.end());
        if (stream) open.push_back("--stream");
        r = Run(open, sealed);
        ASSERT_EQ(r.code, 0) << Describe(r);
        EXPECT_EQ(r.out, msg);
        // The wrong info: "decryption failed", exit 1, no output.
        std::vector<std::string> wrong = open;
        wrong[4] = "other";
        r = Run(wrong, sealed);
        EXPECT_EQ(r.code, 1) << Describe(r);
        EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: decryption failed")) << Describe(r);
        EXPECT_TRUE(r.out.empty());
      }
    }
  }
}

// ---- random, info, help, errors -----------------------------------------------------

TEST_F(SmcryptCliTest, RandomGivesFreshBytes) {
  RunResult a = Run({"random", "32"});
  RunResult b = Run({"random", "--length", "32"});
  ASSERT_EQ(a.code, 0) << Describe(a);
  ASSERT_EQ(b.code, 0) << Describe(b);
  EXPECT_EQ(Trimmed(a.out).size(), 64u);
  EXPECT_NE(a.out, b.out);
  RunResult raw = Run({"random", "100", "--format", "raw"});
  ASSERT_EQ(raw.code, 0) << Describe(raw);
  EXPECT_EQ(raw.out.size(), 100u);
}

TEST_F(SmcryptCliTest, InfoMentionsKernels) {
  RunResult r = Run({"info"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("Kernels:"));
  for (const char* alg : {"SM2", "SM3", "SM4"}) {
    bool found = false;
    for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
      if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), alg) &&
          (absl::StrContains(line, "generic") || absl::StrContains(line, "_avx") ||
           absl::StrContains(line, "mulx_adx") || absl::StrContains(line, "gfni") ||
           absl::StrContains(line, "aesni"))) {
        found = true;
      }
    }
    EXPECT_TRUE(found) << "no kernel line for " << alg << " in:\n" << r.out;
  }
  EXPECT_THAT(r.out, HasSubstr("Self-tests:"));
  EXPECT_THAT(r.out, HasSubstr("Sizing: "));
  EXPECT_THAT(r.out, HasSubstr("  worker_threads="));
  r = Run({"info", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("\"kernels\""));
}

TEST_F(SmcryptCliTest, HelpForEveryCommand) {
  RunResult r = Run({"help"}, "", /*add_target=*/false);
  ASSERT_EQ(r.code, 0) << Describe(r);
  for (const char* cmd : {"hash", "hmac", "sign", "verify", "encrypt", "decrypt", "pkencrypt",
                          "pkdecrypt", "seal", "open", "keygen", "pubkey", "random", "info",
                          "keys"}) {
    SCOPED_TRACE(cmd);
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("  ", cmd, " ")));
    RunResult h = Run({cmd, "--help"}, "", /*add_target=*/false);
    EXPECT_EQ(h.code, 0) << Describe(h);
    EXPECT_THAT(h.out, HasSubstr(absl::StrCat("smcrypt ", cmd)));
    EXPECT_THAT(h.out, HasSubstr("Examples:"));
    EXPECT_THAT(h.out, HasSubstr("--target"));
  }
}

TEST_F(SmcryptCliTest, BadAlgorithmIsUsageError) {
  RunResult r = Run({"hash", "--alg", "md5"}, "abc");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("unknown algorithm \"md5\""));
  EXPECT_THAT(r.err, HasSubstr("SM3, SHA-256"));
  r = Run({"sign", "--alg", "sm4-gcm", "--key-hex", "00"}, "abc");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("not a signature algorithm"));
  r = Run({"encrypt", "--alg", "sm4_gcm", "--key-hex", "00"}, "abc");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("did you mean SM4-GCM?"));
  r = Run({"hash", "--no-such-flag"}, "abc");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --no-such-flag"));
  r = Run({"frobnicate"}, "", /*add_target=*/false);
  EXPECT_EQ(r.code, 2) << Describe(r);
}

TEST_F(SmcryptCliTest, ServerErrorsAreExitThreeWithCodeName) {
  // Unknown keyring entry: NOT_FOUND from the server.
  RunResult r = Run({"sign", "--key-id", "no-such-key"}, "abc");
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
  // Wrong key size: INVALID_ARGUMENT with the server's message.
  r = Run({"encrypt", "--alg", "sm4-cbc", "--key-hex", "0011"}, "abc");
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
}

TEST_F(SmcryptCliTest, ServerErrorMessagesAreEscapedForTheTerminal) {
  // A key_id with an OSC sequence (set the window title) and a bell: smcryptd refuses it
  // without echoing it; whatever the message, no raw ESC or BEL reaches the terminal
  // (DescribeErrorEscapesServerMessages covers a server message that does echo them).
  RunResult r = Run({"sign", "--key-id", "x\x1b]0;pwned\x07"}, "abc");
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, Not(HasSubstr("\x1b"))) << Describe(r);
  EXPECT_THAT(r.err, Not(HasSubstr("\x07"))) << Describe(r);
  // A valid key_id absent from the keyring: the message is printed as it is.
  r = Run({"sign", "--key-id", "no-such-key"}, "abc");
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("no-such-key"));
}

TEST_F(SmcryptCliTest, TlsAndMutualTls) {
  // A CA, a server certificate for "localhost" and a client certificate, all P-256.
  auto openssl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "openssl");
    RunResult r = RunProgram(args);
    EXPECT_EQ(r.code, 0) << Describe(r);
  };
  openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
           "-keyout", Path("ca.key"), "-out", Path("ca.crt"), "-days", "1", "-subj",
           "/CN=smcrypt test CA"});
  for (std::string who : {"server", "client"}) {
    openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", Path(who + ".key"), "-out", Path(who + ".csr"), "-subj",
             who == "server" ? "/CN=localhost" : "/CN=smcrypt client"});
    WriteWhole(Path(who + ".ext"), who == "server" ? "subjectAltName=DNS:localhost\n"
                                                   : "extendedKeyUsage=clientAuth\n");
    openssl({"x509", "-req", "-in", Path(who + ".csr"), "-CA", Path("ca.crt"), "-CAkey",
             Path("ca.key"), "-CAcreateserial", "-out", Path(who + ".crt"), "-days", "1",
             "-extfile", Path(who + ".ext")});
  }
  const std::string abc_sm3 =
      "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0\n";
  for (bool mutual : {false, true}) {
    SCOPED_TRACE(mutual ? "mTLS" : "TLS");
    int port = FreePort();
    std::vector<std::string> flags = {"--tls_cert=" + Path("server.crt"),
                                      "--tls_key=" + Path("server.key")};
    if (mutual) flags.push_back("--tls_client_ca=" + Path("ca.crt"));
    pid_t pid = StartServer(port, flags, Path(mutual ? "mtls.log" : "tls.log"));
    ASSERT_GT(pid, 0);
    std::vector<std::string> base = {"hash", "--target", absl::StrCat("127.0.0.1:", port),
                                     "--timeout", "10", "--ca", Path("ca.crt"),
                                     "--server-name", "localhost"};
    std::vector<std::string> with_cert = base;
    with_cert.insert(with_cert.end(), {"--cert", Path("client.crt"), "--cert-key",
                                       Path("client.key")});
    RunResult r = Run(with_cert, "abc", /*add_target=*/false);
    EXPECT_EQ(r.code, 0) << Describe(r);
    EXPECT_EQ(r.out, abc_sm3);
    r = Run(base, "abc", /*add_target=*/false);  // no client certificate
    if (mutual) {
      EXPECT_EQ(r.code, 3) << Describe(r);
    } else {
      EXPECT_EQ(r.code, 0) << Describe(r);
      EXPECT_EQ(r.out, abc_sm3);
    }
    // Plaintext against a TLS server fails to connect.
    r = Run({"hash", "--target", absl::StrCat("127.0.0.1:", port), "--timeout", "10"}, "abc",
            /*add_target=*/false);
    EXPECT_EQ(r.code, 3) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
    StopServer(pid);
  }
}

TEST_F(SmcryptCliTest, KeyVersionsInPubkeySignAndEncrypt) {
  // A keyring key "s" with two SM2 versions and "k" with two SM4-GCM versions.
  std::string keys = Path("versioned-keys");
  std::filesystem::create_directories(keys);
  for (std::string name : {"s.v1", "s.v2"}) {
    RunResult r = Run({"keygen", "--alg", "sm2", "--out", keys + "/" + name + ".pem",
                       "--pubout", Path(name + ".pub")});
    ASSERT_EQ(r.code, 0) << Describe(r);
  }
  for (std::string name : {"k.v1", "k.v2"}) {
    RunResult r = Run({"keygen", "--alg", "sm4-gcm", "--out", keys + "/" + name + ".pem"});
    ASSERT_EQ(r.code, 0) << Describe(r);
  }
  int port = FreePort();
  pid_t pid = StartServer(port, {"--keys_dir=" + keys}, Path("versions.log"));
  ASSERT_GT(pid, 0);
  const std::string target = absl::StrCat("127.0.0.1:", port);
  auto run = [&](std::vector<std::string> args, const std::string& in = "") {
    args.insert(args.end(), {"--target", target, "--timeout", "10"});
    return Run(args, in, /*add_target=*/false);
  };

  // pubkey: the named version's key; the newest without one; --versions lists both.
  RunResult r = run({"pubkey", "--key-id", "s", "--key-version", "1"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, ReadWhole(Path("s.v1.pub")));
  r = run({"pubkey", "--key-id", "s"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, ReadWhole(Path("s.v2.pub")));
  r = run({"pubkey", "--key-id", "s", "--versions"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# s version 1\n", ReadWhole(Path("s.v1.pub")),
                                "# s version 2\n", ReadWhole(Path("s.v2.pub"))));
  r = run({"pubkey", "--key-id", "s", "--versions", "--der"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  r = run({"pubkey", "--key-id", "s", "--key-version", "3"});
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
  // An SM4 key has no public key, and the message says so (no --alg: the key's family
  // decides, so no algorithm is blamed).
  r = run({"pubkey", "--key-id", "k", "--versions"});
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("key 'k' is an SM4 key: a secret key, with no public key"));
  EXPECT_THAT(r.err, Not(HasSubstr("needs an")));
  EXPECT_THAT(r.err, Not(HasSubstr("pubkey assumes")));
  r = run({"pubkey", "--key-id", "k", "--alg", "sm2"});  // an algorithm named: as before
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("SM2 needs an SM2 key"));

  // sign says which version signed; the key `pubkey --key-version 1` printed verifies it.
  WriteWhole(Path("versioned.msg"), "signed with version 1");
  r = run({"sign", "--key-id", "s", "--key-version", "1", "--out", Path("v1.sig"),
           Path("versioned.msg")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.err, "smcrypt sign: key version 1\n");
  r = run({"pubkey", "--key-id", "s", "--key-version", "1", "--out", Path("s.v1.got")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = run({"verify", "--key", Path("s.v1.got"), "--sig", Path("v1.sig"), Path("versioned.msg")});
  EXPECT_EQ(r.code, 0) << Describe(r);
  r = run({"verify", "--key-id", "s", "--key-version", "1", "--sig", Path("v1.sig"),
           Path("versioned.msg")});
  EXPECT_EQ(r.code, 0) << Describe(r);
  // With no version named, every version is tried; verify says which one verified.
  r = run({"verify", "--key-id", "s", "--sig", Path("v1.sig"), Path("versioned.msg")});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.err, "smcrypt verify: key version 1\n");

  // encrypt reports the newest version; decrypt opens older data without naming it.
  r = run({"encrypt", "--alg", "sm4-gcm", "--key-id", "k", "--key-version", "1"}, "secret");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.err, "smcrypt encrypt: key version 1\n");
  WriteWhole(Path("v1.enc"), r.out);
  r = run({"decrypt", "--alg", "sm4-gcm", "--key-id", "k", "--key-version", "1",
           Path("v1.enc")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "secret");
  r = run({"decrypt", "--alg", "sm4-gcm", "--key-id", "k", Path("v1.enc")});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "secret");
  EXPECT_EQ(r.err, "smcrypt decrypt: key version 1\n");
  r = run({"encrypt", "--alg", "sm4-gcm", "--key-id", "k"}, "secret");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.err, "smcrypt encrypt: key version 2\n");

  // kex: a version of the peer's keyring key; an unknown one is the server's NOT_FOUND,
  // named as the peer's, before any message of the exchange.
  r = run({"kex", "--role", "initiator", "--key-id", "s", "--peer-key-id", "s",
           "--peer-key-version", "3"});
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("peer_key: key 's' has no version 3"));
  r = run({"kex", "--role", "initiator", "--key-id", "s", "--peer-key", Path("s.v1.pub"),
           "--peer-key-version", "1"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--peer-key-version goes with --peer-key-id"));
  StopServer(pid);
}

// keys: every page of ListKeys as a table (one row per version) or JSON.
TEST_F(SmcryptCliTest, KeysListsEveryVersionAcrossPages) {
  std::string keys = Path("listed-keys");
  std::filesystem::create_directories(keys);
  for (std::string name : {"s.v1", "s.v2"}) {
    RunResult r = Run({"keygen", "--alg", "sm2", "--out", keys + "/" + name + ".pem",
                       "--pubout", Path(name + ".pub")});
    ASSERT_EQ(r.code, 0) << Describe(r);
  }
  for (std::string name : {"k.v1", "k.v2", "k.v3", "a", "b", "c"}) {
    RunResult r = Run({"keygen", "--alg", "sm4-gcm", "--out", keys + "/" + name + ".pem"});
    ASSERT_EQ(r.code, 0) << Describe(r);
  }
  WriteWhole(keys + "/k.primary", "2\n");
  WriteWhole(keys + "/k.min_version", "2\n");
  int port = FreePort();
  pid_t pid = StartServer(port, {"--keys_dir=" + keys}, Path("keys.log"));
  ASSERT_GT(pid, 0);
  const std::string target = absl::StrCat("127.0.0.1:", port);
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--target", target, "--timeout", "10"});
    return Run(args, "", /*add_target=*/false);
  };
  RunResult r = run({"keys", "--page-size", "2"});  // three pages
  ASSERT_EQ(r.code, 0) << Describe(r);
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u + 8u) << r.out;  // keyring line, header, 8 versions
  EXPECT_THAT(lines[0], HasSubstr(", 5 key(s)"));
  EXPECT_THAT(lines[1], HasSubstr("KEY ID"));
  // Keys in key_id order: a, b, c, then k's three versions and s's two.
  EXPECT_THAT(lines[5],
              ::testing::MatchesRegex("k +SM4 +2 +2 +1 +retired +20[0-9-]+T[0-9:]+Z +- *"));
  EXPECT_THAT(lines[6], ::testing::MatchesRegex("k +SM4 +2 +2 +2 +primary .*"));
  EXPECT_THAT(lines[7], ::testing::MatchesRegex("k +SM4 +2 +2 +3 +retained .*"));
  EXPECT_THAT(lines[9], ::testing::MatchesRegex("s +SM2 +2 +1 +2 +primary .* [0-9a-f]{64}"));
  r = run({"keys", "--json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("\"primary_version\": 2"));
  EXPECT_THAT(r.out, HasSubstr("\"keyring_load_time_unix_micros\""));
  EXPECT_THAT(r.out, Not(HasSubstr("next_page_token")));
  r = run({"keys", "--page-size", "1001"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  r = run({"keys", "extra"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  StopServer(pid);
  r = run({"keys"});
  EXPECT_EQ(r.code, 3) << Describe(r);
}

TEST_F(SmcryptCliTest, RewrapAndDataKey) {
  // "k": SM4 versions 1 and 2; "kek": AES-256; "s": SM2 (encryption and HPKE).
  std::string keys = Path("envelope-keys");
  std::filesystem::create_directories(keys);
  for (auto [alg, name] : std::vector<std::pair<std::string, std::string>>{
           {"sm4-gcm", "k.v1"}, {"sm4-gcm", "k.v2"}, {"aes-256-gcm", "kek"}, {"sm2", "s"}}) {
    std::vector<std::string> args = {"keygen", "--alg", alg, "--out", keys + "/" + name + ".pem"};
    if (alg == "sm2") args.insert(args.end(), {"--pubout", Path("envelope-s.pub")});
    RunResult r = Run(args);
    ASSERT_EQ(r.code, 0) << Describe(r);
  }
  int port = FreePort();
  pid_t pid = StartServer(port, {"--keys_dir=" + keys}, Path("envelope.log"));
  ASSERT_GT(pid, 0);
  const std::string target = absl::StrCat("127.0.0.1:", port);
  auto run = [&](std::vector<std::string> args, const std::string& in = "") {
    args.insert(args.end(), {"--target", target, "--timeout", "10"});
    return Run(args, in, /*add_target=*/false);
  };

  // rewrap: encrypt's file under version 1 becomes one under version 2 that decrypt opens
  // there only; a tampered file is "decryption failed" (exit 1) and writes nothing.
  RunResult r = run({"encrypt", "--key-id", "k", "--key-version", "1", "--aad", "hdr",
                     "--out", Path("rw.v1")}, "rewrap me");
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = run({"rewrap", "--key-id", "k", "--key-version", "1", "--aad", "hdr", "--out",
           Path("rw.v2"), Path("rw.v1")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.err, "smcrypt rewrap: key version 1 -> 2\n");
  r = run({"decrypt", "--key-id", "k", "--key-version", "2", "--aad", "hdr", Path("rw.v2")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "rewrap me");
  r = run({"decrypt", "--key-id", "k", "--key-version", "1", "--aad", "hdr", Path("rw.v2")});
  EXPECT_EQ(r.code, 1) << Describe(r);
  std::string tampered = ReadWhole(Path("rw.v1"));
  tampered[30] = tampered[30] == '0' ? '1' : '0';  // a hex digit of the ciphertext
  WriteWhole(Path("rw.bad"), tampered);
  r = run({"rewrap", "--key-id", "k", "--key-version", "1", "--aad", "hdr", "--out",
           Path("rw.bad.out"), Path("rw.bad")});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("decryption failed"));
  EXPECT_FALSE(std::filesystem::exists(Path("rw.bad.out")));
  r = run({"rewrap", "--key-hex", "00112233445566778899aabbccddeeff", Path("rw.v1")});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("rewrap takes --key-id"));
  r = run({"rewrap", "--alg", "sm2", "--key-id", "s", "--aad", "x", Path("rw.v1")});
  EXPECT_EQ(r.code, 2) << Describe(r);

  // pkencrypt's and seal's files, rewrapped, open with pkdecrypt and open.
  r = run({"pkencrypt", "--key-id", "s", "--sm2-format", "der", "--out", Path("rw.sm2")},
          "sm2 text");
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = run({"rewrap", "--alg", "sm2", "--key-id", "s", "--sm2-format", "der", "--out",
           Path("rw.sm2.2"), Path("rw.sm2")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = run({"pkdecrypt", "--key-id", "s", "--sm2-format", "der", Path("rw.sm2.2")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "sm2 text");
  r = run({"seal", "--key-id", "s", "--info", "app", "--out", Path("rw.hpke")}, "hpke text");
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = run({"rewrap", "--alg", "HPKE-SM2-SM3-SM4GCM", "--key-id", "s", "--info", "app", "--out",
           Path("rw.hpke.2"), Path("rw.hpke")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_NE(ReadWhole(Path("rw.hpke.2")), ReadWhole(Path("rw.hpke")));
  r = run({"open", "--key-id", "s", "--info", "app", Path("rw.hpke.2")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "hpke text");

  // datakey: the key file (0600) equals what decrypt unwraps from the wrapped file.
  r = run({"datakey", "--spec", "aes256", "--alg", "AES-256-GCM", "--key-id", "kek", "--aad",
           "tenant=7", "--key-out", Path("dk.key"), "--key-format", "raw", "--format", "raw",
           "--out", Path("dk.wrapped")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(std::filesystem::status(Path("dk.key")).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(ReadWhole(Path("dk.key")).size(), 32u);
  EXPECT_EQ(ReadWhole(Path("dk.wrapped")).size(), 12u + 32u + 16u);
  r = run({"decrypt", "--alg", "AES-256-GCM", "--key-id", "kek", "--aad", "tenant=7", "--format",
           "raw", Path("dk.wrapped")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, ReadWhole(Path("dk.key")));
  // The default key file is a PEM key that encrypt and decrypt take with --key.
  r = run({"datakey", "--key-id", "k", "--key-out", Path("dk.pem"), "--out",
           Path("dk.pem.wrapped")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.err, "smcrypt datakey: key version 2\n");
  EXPECT_THAT(ReadWhole(Path("dk.pem")), HasSubstr("-----BEGIN SM4 KEY-----"));
  r = run({"encrypt", "--key", Path("dk.pem"), "--out", Path("dk.data")}, "under the data key");
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = run({"decrypt", "--key", Path("dk.pem"), Path("dk.data")});
  EXPECT_EQ(r.out, "under the data key") << Describe(r);
  // Without --alg (SM4-GCM) an AES key's refusal says to pass --alg.
  r = run({"datakey", "--key-id", "kek", "--no-plaintext"});
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("pass --alg for this key's family")) << Describe(r);
  r = run({"datakey", "--alg", "sm2", "--key-id", "s", "--no-plaintext"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  WriteWhole(Path("dk.sm2"), r.out);
  r = run({"pkdecrypt", "--key-id", "s", Path("dk.sm2")});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out.size(), 16u);
  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{
           {"datakey", "--key-id", "k"},
           {"datakey", "--key-id", "k", "--key-out", "-"},
           {"datakey", "--key-id", "k", "--no-plaintext", "--key-out", Path("x")},
           {"datakey", "--spec", "des", "--key-id", "k", "--no-plaintext"},
           {"datakey", "--alg", "sm4-cbc", "--key-id", "k", "--no-plaintext"},
           {"datakey", "--key-hex", "00112233445566778899aabbccddeeff", "--no-plaintext"}}) {
    r = run(bad);
    EXPECT_EQ(r.code, 2) << absl::StrJoin(bad, " ") << "\n" << Describe(r);
  }
  StopServer(pid);
}

TEST_F(SmcryptCliTest, ServerNotRunningIsUnavailable) {
  int port = FreePort();
  RunResult r = Run({"hash", "--target", absl::StrCat("127.0.0.1:", port), "--timeout", "5"},
                    "abc", /*add_target=*/false);
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
}

}  // namespace
}  // namespace smcrypt
