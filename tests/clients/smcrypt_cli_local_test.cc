// Tests of `smcrypt --local`: no smcryptd runs, SMCRYPT_TARGET points at a closed port,
// and every command runs in process. Results are checked with the openssl command
// (OpenSSL 3): SM3, HMAC-SM3, SM4-CBC/CTR, SM2 signatures verified by `openssl pkeyutl`,
// SM2 ciphertexts decrypted by it, encrypted PKCS#8 keys both ways. Exit statuses 0, 1,
// 2 and 3; and `strace` shows that a local command makes no socket.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace smcrypt {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

class SmcryptLocalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/smcrypt_local_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Write("msg.txt", "an everyday message for smcrypt --local\n");
    Write("pw.txt", "s3cret pass\n");
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  void Write(const std::string& name, const std::string& data) {
    std::ofstream(absl::StrCat(dir_, "/", name), std::ios::binary) << data;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(absl::StrCat(dir_, "/", name), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Sh runs `line` with bash in the test folder, SMCRYPT_TARGET at a closed port and
  // `smcrypt` the binary under test.
  Result Sh(const std::string& line) {
    static int n = 0;
    const std::string base = absl::StrCat(dir_, "/sh", ++n);
    const std::string cmd = absl::StrCat(
        "cd '", dir_, "' && export SMCRYPT_TARGET=127.0.0.1:1 && unset SMCRYPT_LOCAL && ",
        "smcrypt() { '", SMCRYPT_CLI_PATH, "' \"$@\"; }; { ", line, "; } >'", base,
        ".out' 2>'", base, ".err'");
    Result r;
    int status = std::system(absl::StrCat("bash -c '", Escape(cmd), "'").c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(base + ".out");
    r.err = Slurp(base + ".err");
    return r;
  }

  static std::string Escape(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    return out;
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static std::string Describe(const Result& r) {
    return absl::StrCat("exit ", r.code, "\nstdout: ", r.out, "\nstderr: ", r.err);
  }
  static std::string Trim(const std::string& s) {
    return std::string(absl::StripAsciiWhitespace(s));
  }

  std::string dir_;
};

TEST_F(SmcryptLocalTest, HashAndHmacMatchOpenSsl) {
  Result r = Sh("printf abc | smcrypt hash --local");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(Trim(r.out), "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
  r = Sh("smcrypt hash --local --alg sm3 msg.txt");
  Result o = Sh("openssl dgst -sm3 -r msg.txt | cut -d' ' -f1");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(Trim(r.out), Trim(o.out));
  r = Sh("smcrypt hmac --local --key-hex 0011223344556677889900aabbccddeeff msg.txt");
  o = Sh("openssl dgst -sm3 -mac HMAC -macopt hexkey:0011223344556677889900aabbccddeeff -r "
         "msg.txt | cut -d' ' -f1");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(Trim(r.out), Trim(o.out));
  ASSERT_EQ(Trim(o.out).size(), 64u) << Describe(o);
  // --expect: 0 for the right tag, 1 for a wrong one.
  r = Sh(absl::StrCat("smcrypt hmac --local --key-hex 0011223344556677889900aabbccddeeff "
                      "--expect ", Trim(o.out), " msg.txt"));
  EXPECT_EQ(r.code, 0) << Describe(r);
  std::string wrong = Trim(o.out);
  wrong[0] = wrong[0] == '0' ? '1' : '0';
  r = Sh(absl::StrCat("smcrypt hmac --local --key-hex 0011223344556677889900aabbccddeeff "
                      "--expect ", wrong, " msg.txt"));
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("MAC invalid"));
}

TEST_F(SmcryptLocalTest, Sm4CbcAndCtrMatchOpenSslEnc) {
  const std::string key = "0123456789abcdeffedcba9876543210";
  const std::string iv = "000102030405060708090a0b0c0d0e0f";
  for (const char* mode : {"cbc", "ctr"}) {
    SCOPED_TRACE(mode);
    Result r = Sh(absl::StrCat("smcrypt encrypt --local --alg sm4-", mode, " --key-hex ", key,
                               " --iv ", iv, " --outform der --out s.", mode, " msg.txt"));
    ASSERT_EQ(r.code, 0) << Describe(r);
    Result o = Sh(absl::StrCat("openssl enc -sm4-", mode, " -K ", key, " -iv ", iv,
                               " -in msg.txt -out o.", mode));
    ASSERT_EQ(o.code, 0) << Describe(o);
    EXPECT_EQ(Read(absl::StrCat("s.", mode)), Read(absl::StrCat("o.", mode)));
    r = Sh(absl::StrCat("smcrypt decrypt --local --alg sm4-", mode, " --key-hex ", key,
                        " --nonce ", iv, " --inform der o.", mode));
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_EQ(r.out, Read("msg.txt"));
  }
  // Flipping the top bit of the last byte of the next-to-last block makes the last
  // padding byte 0x80 or more: a padding failure, DECRYPTION_FAILED, exit 1.
  std::string ct = Read("o.cbc");
  ASSERT_GE(ct.size(), 32u);
  ct[ct.size() - 17] ^= static_cast<char>(0x80);
  Write("bad.cbc", ct);
  Result r = Sh(absl::StrCat("smcrypt decrypt --local --alg sm4-cbc --key-hex ", key, " --iv ",
                             iv, " --inform der bad.cbc"));
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(r.out.empty());
}

TEST_F(SmcryptLocalTest, GcmTagFailureIsExitOne) {
  Result r = Sh("smcrypt keygen --local --alg sm4-gcm --out sm4.key && "
                "smcrypt encrypt --local --key sm4.key --aad v1 --out m.enc msg.txt");
  ASSERT_EQ(r.code, 0) << Describe(r);
  r = Sh("smcrypt decrypt --local --key sm4.key --aad v1 m.enc");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, Read("msg.txt"));
  r = Sh("smcrypt decrypt --local --key sm4.key --aad v2 m.enc");
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("decryption failed"));
  EXPECT_TRUE(r.out.empty());
}

TEST_F(SmcryptLocalTest, Sm2SignAndEncryptInteroperateWithOpenSsl) {
  Result r = Sh("smcrypt keygen --local --pass-file pw.txt --out k.pem --pubout p.pem");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_THAT(Read("k.pem"), HasSubstr("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
  // OpenSSL opens the AES-256 PBES2 key smcrypt wrote.
  Result o = Sh("openssl pkey -in k.pem -passin file:pw.txt -pubout");
  ASSERT_EQ(o.code, 0) << Describe(o);
  EXPECT_EQ(o.out, Read("p.pem"));
  r = Sh("smcrypt sign --local --key k.pem --pass-file pw.txt --outform der --out m.sig "
         "msg.txt");
  ASSERT_EQ(r.code, 0) << Describe(r);
  o = Sh("openssl pkeyutl -verify -rawin -digest sm3 -pkeyopt distid:1234567812345678 -pubin "
         "-inkey p.pem -in msg.txt -sigfile m.sig");
  EXPECT_EQ(o.code, 0) << Describe(o);
  r = Sh("smcrypt verify --local --key p.pem --inform der --sig m.sig msg.txt");
  EXPECT_EQ(r.code, 0) << Describe(r);
  r = Sh("echo tampered > other.txt; smcrypt verify --local --key p.pem --inform der --sig "
         "m.sig other.txt");
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_EQ(Trim(r.out), "signature invalid");
  r = Sh("smcrypt pkencrypt --local --key p.pem --sm2-format der --outform der --out m.sm2 "
         "msg.txt");
  ASSERT_EQ(r.code, 0) << Describe(r);
  o = Sh("openssl pkeyutl -decrypt -inkey k.pem -passin file:pw.txt -in m.sm2");
  ASSERT_EQ(o.code, 0) << Describe(o);
  EXPECT_EQ(o.out, Read("msg.txt"));
  // The GmSSL scheme (SM4-CBC, PBKDF2-HMAC-SM3) is read back by smcrypt.
  r = Sh("smcrypt keygen --local --pass-file pw.txt --pass-cipher sm4-cbc --out g.pem "
         "--pubout gp.pem && smcrypt sign --local --key g.pem --pass-file pw.txt --out g.sig "
         "msg.txt && smcrypt verify --local --key gp.pem --sig g.sig msg.txt");
  EXPECT_EQ(r.code, 0) << Describe(r);
}

TEST_F(SmcryptLocalTest, ReadsOpenSslEncryptedKeys) {
  Result o = Sh("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:SM2 -aes256 -pass "
                "file:pw.txt -out ok.pem && openssl pkey -in ok.pem -passin file:pw.txt "
                "-pubout -out op.pem && openssl pkeyutl -encrypt -pubin -inkey op.pem -in "
                "msg.txt -out o.sm2");
  ASSERT_EQ(o.code, 0) << Describe(o);
  Result r = Sh("smcrypt pkdecrypt --local --key ok.pem --pass-file pw.txt --sm2-format der "
                "--inform der o.sm2");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, Read("msg.txt"));
  r = Sh("smcrypt pubkey --local --key ok.pem --pass-file pw.txt");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, Read("op.pem"));
  // Wrong or missing password: usage errors that say so.
  r = Sh("echo wrong > bad.txt; smcrypt sign --local --key ok.pem --pass-file bad.txt msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("wrong password"));
  r = Sh("smcrypt sign --local --key ok.pem msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("encrypted private key"));
}

TEST_F(SmcryptLocalTest, HpkeSealOpenAndRandom) {
  Result r = Sh("smcrypt keygen --local --alg hpke-sm2-sm3-sm4gcm --out h.pem --pubout hp.pem "
                "&& smcrypt seal --local --key hp.pem --info v1 --out m.hpke msg.txt && "
                "smcrypt open --local --key h.pem --info v1 m.hpke");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, Read("msg.txt"));
  r = Sh("smcrypt open --local --key h.pem --info v2 m.hpke");
  EXPECT_EQ(r.code, 1) << Describe(r);
  r = Sh("smcrypt random --local 16");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(Trim(r.out).size(), 32u);
}

// info runs the self-tests in process and reports them on stdout; stderr stays empty (the
// engine's own log lines are smcryptd's).
TEST_F(SmcryptLocalTest, InfoReportsSelfTestsWithoutLogLines) {
  Result r = Sh("smcrypt info --local");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("Self-tests: "));
  EXPECT_EQ(r.err, "");
}

TEST_F(SmcryptLocalTest, ExitStatuses) {
  // 2: --key-id needs a server's keyring; --local with a connection flag.
  Result r = Sh("smcrypt sign --local --key-id signer msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--local has none"));
  r = Sh("smcrypt hash --local --target 127.0.0.1:1 msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  // 2: an input the in-process service refuses (a key of the wrong size).
  r = Sh("smcrypt encrypt --local --alg sm4-gcm --key-hex 0011 msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, Not(HasSubstr("is smcryptd running")));
  // 3: without --local the closed target is unreachable.
  r = Sh("smcrypt hash msg.txt");
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
  // SMCRYPT_LOCAL=1 is --local; an explicit --target overrides it.
  r = Sh("SMCRYPT_LOCAL=1 smcrypt hash msg.txt");
  EXPECT_EQ(r.code, 0) << Describe(r);
  r = Sh("SMCRYPT_LOCAL=1 smcrypt hash --target 127.0.0.1:1 msg.txt");
  EXPECT_EQ(r.code, 3) << Describe(r);
}

TEST_F(SmcryptLocalTest, KeyAndPasswordFilesAreBounded) {
  ASSERT_EQ(Sh("smcrypt keygen --local --pass-file pw.txt --out enc.pem").code, 0);
  // /dev/zero as the password file or the key file: a usage error naming the file and
  // the limit, read within a bounded size (the address-space cap turns an unbounded
  // read into a crash instead of an endless run).
#if defined(__SANITIZE_ADDRESS__)
  const std::string cap;  // AddressSanitizer reserves terabytes of shadow: no cap there
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  const std::string cap;
#else
  const std::string cap = "ulimit -v 2000000; ";
#endif
#else
  const std::string cap = "ulimit -v 2000000; ";
#endif
  Result r = Sh(cap + "smcrypt sign --local --key enc.pem --pass-file /dev/zero msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--pass-file: /dev/zero"));
  EXPECT_THAT(r.err, HasSubstr("65537 bytes"));
  r = Sh(cap + "smcrypt sign --local --key /dev/zero msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--key: /dev/zero is larger than 1048576 bytes"));
  // A regular file one byte over the key limit; the same for --ca.
  Write("big.pem", std::string((1 << 20) + 1, 'A'));
  r = Sh("smcrypt sign --local --key big.pem msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--key: big.pem is larger than 1048576 bytes"));
  r = Sh("smcrypt hash --ca big.pem msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--ca: big.pem is larger than 1048576 bytes"));
  // The longest password, 64 KiB, with a CRLF line end and more lines after it: only its
  // first line is the password, for keygen and for sign. One byte more is refused.
  Write("long.txt", std::string(65536, 'p') + "\r\nsecond line\n");
  r = Sh("smcrypt keygen --local --pass-file long.txt --out long.pem && "
         "smcrypt sign --local --key long.pem --pass-file long.txt msg.txt");
  EXPECT_EQ(r.code, 0) << Describe(r);
  Write("longer.txt", std::string(65537, 'p') + "\n");
  r = Sh("smcrypt sign --local --key long.pem --pass-file longer.txt msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("longer.txt: the password is longer than 65536 bytes"));
  // Data inputs still stream: hash reads 64 MiB of /dev/zero under the same cap.
  r = Sh(cap + "head -c 67108864 /dev/zero | smcrypt hash --local");
  EXPECT_EQ(r.code, 0) << Describe(r);
}

TEST_F(SmcryptLocalTest, KeygenPrivateKeyFilesAreMode0600) {
  // Existing 0644 files: the private key (plain or encrypted) and the secret key become
  // 0600 before they are written; the public key file keeps its mode.
  Result r = Sh("for f in k.pem e.pem s.pem p.pem; do echo old > $f; chmod 644 $f; done && "
                "smcrypt keygen --local --out k.pem --pubout p.pem && "
                "smcrypt keygen --local --pass-file pw.txt --out e.pem && "
                "smcrypt keygen --local --alg sm4-gcm --out s.pem && stat -c '%n %a' k.pem "
                "e.pem s.pem p.pem");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "k.pem 600\ne.pem 600\ns.pem 600\np.pem 644\n");
  EXPECT_THAT(Read("k.pem"), HasSubstr("BEGIN PRIVATE KEY"));
  // A new file: 0600 whatever the umask.
  r = Sh("umask 022 && smcrypt keygen --local --out new.pem && stat -c %a new.pem");
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "600\n");
}

TEST_F(SmcryptLocalTest, ErrorMessagesAreEscapedForTheTerminal) {
  // --key-id is echoed by the local usage error: its ESC, BEL and newline come out as
  // \x1b, \x07 and \n; valid UTF-8 text stays as it is.
  Result r = Sh("smcrypt sign --local --key-id $'x\\e]0;pwned\\a\\nkey-\\xc3\\xa9' msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--key-id x\\x1b]0;pwned\\x07\\nkey-\xc3\xa9 names"));
  EXPECT_THAT(r.err, Not(HasSubstr("\x1b")));
  EXPECT_THAT(r.err, Not(HasSubstr("\x07")));
  // A file name in a per-file error, and an unknown command name.
  r = Sh("smcrypt hash --local msg.txt $'no\\e[2Jsuch'");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("no\\x1b[2Jsuch"));
  EXPECT_THAT(r.err, Not(HasSubstr("\x1b")));
  r = Sh("smcrypt $'ha\\e[2Jsh'");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("ha\\x1b[2Jsh"));
  EXPECT_THAT(r.err, Not(HasSubstr("\x1b")));
}

TEST_F(SmcryptLocalTest, UnusedInformAndOutformAreUsageErrors) {
  const std::string sm4 = "--alg sm4-cbc --key-hex 0123456789abcdeffedcba9876543210 "
                          "--iv 000102030405060708090a0b0c0d0e0f";
  // encrypt reads raw bytes: --inform der was silently ignored.
  Result r = Sh("smcrypt encrypt --local " + sm4 + " --inform der msg.txt");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--inform der: smcrypt encrypt reads no encoded input"));
  EXPECT_EQ(r.out, "");
  // decrypt writes raw bytes: --outform has nothing to set.
  r = Sh("smcrypt encrypt --local " + sm4 + " --outform der --out m.cbc msg.txt && "
         "smcrypt decrypt --local " + sm4 + " --outform der m.cbc");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--outform der: smcrypt decrypt writes no encoded output"));
  for (const char* line : {"smcrypt hash --local --inform base64 msg.txt",
                           "smcrypt sign --local --key k.pem --inform der msg.txt",
                           "smcrypt random --local --inform hex 16",
                           "smcrypt verify --local --key k.pem --outform der --sig s msg.txt",
                           "smcrypt open --local --key k.pem --outform der msg.txt"}) {
    r = Sh(line);
    EXPECT_EQ(r.code, 2) << line << "\n" << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("form")) << line;
  }
  // The directions a command has are honoured: der out of encrypt, der into decrypt.
  r = Sh("smcrypt decrypt --local " + sm4 + " --inform der m.cbc");
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, Read("msg.txt"));
}

TEST_F(SmcryptLocalTest, LocalCommandsOpenNoSocket) {
  if (std::system("command -v strace >/dev/null 2>&1") != 0) {
    FAIL() << "strace is not installed (apt-get install strace; deploy/local/install-deps.sh)";
  }
  // Every socket-family syscall of the process and its threads is logged; a local keygen,
  // sign and a streamed encryption must make none (the remote run shows the check works).
  const std::string trace =
      // LeakSanitizer cannot run under ptrace; the variable is ignored by other builds.
      "ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e "
      "trace=socket,socketpair,connect,bind,listen,accept,accept4 -o ";
  Result r = Sh(absl::StrCat(
      trace, "t1 ", SMCRYPT_CLI_PATH, " keygen --local --out k.pem --pubout p.pem && ", trace,
      "t2 ", SMCRYPT_CLI_PATH, " sign --local --key k.pem --out m.sig msg.txt && ", trace,
      "t3 ", SMCRYPT_CLI_PATH, " encrypt --local --stream --key-hex ", std::string(32, '1'),
      " --out m.enc msg.txt"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  for (const char* t : {"t1", "t2", "t3"}) {
    EXPECT_EQ(Read(t), "") << t << " shows socket calls";
  }
  r = Sh(absl::StrCat(trace, "t4 ", SMCRYPT_CLI_PATH, " hash msg.txt"));
  EXPECT_EQ(r.code, 3) << Describe(r);
  EXPECT_THAT(Read("t4"), HasSubstr("connect(")) << "the remote run should try to connect";
}

// kex: two runs connected by FIFOs agree on K, with and without --confirm; a wrong peer
// ID makes the confirmation fail (exit 1 and no key) or, without it, gives another K.
TEST_F(SmcryptLocalTest, KexTwoRunsAgreeAndConfirmationCatchesAWrongId) {
  Result r = Sh("smcrypt keygen --local --alg sm2 --out a.pem --pubout a_pub.pem && "
                "smcrypt keygen --local --alg sm2 --out b.pem --pubout b_pub.pem");
  ASSERT_EQ(r.code, 0) << Describe(r);
  // The initiator opens its output FIFO first and the responder its input, so the two
  // opens pair up.
  auto exchange = [&](const std::string& flags, const std::string& b_peer_id) {
    return Sh(absl::StrCat(
        "rm -f a2b b2a ka kb; mkfifo a2b b2a; "
        "smcrypt kex --local --role initiator --key a.pem --peer-key b_pub.pem --id alice "
        "--peer-id bob ", flags, " --out ka >a2b <b2a 2>ea & pa=$!; "
        "smcrypt kex --local --role responder --key b.pem --peer-key a_pub.pem --id bob "
        "--peer-id ", b_peer_id, " ", flags, " --out kb <a2b >b2a 2>eb; rb=$?; "
        "wait $pa; ra=$?; echo \"$ra $rb\"; cat ea eb >&2"));
  };
  for (const std::string flags : {"--confirm --length 48", "--length 20"}) {
    SCOPED_TRACE(flags);
    r = exchange(flags, "alice");
    ASSERT_EQ(Trim(r.out), "0 0") << Describe(r);
    const std::string ka = Read("ka");
    EXPECT_EQ(ka.size(), flags == "--length 20" ? 20u : 48u);
    EXPECT_EQ(ka, Read("kb"));
    // K is a secret key: its files are the owner's alone, whatever the umask.
    for (const char* k : {"ka", "kb"}) {
      const std::filesystem::perms mode =
          std::filesystem::status(absl::StrCat(dir_, "/", k)).permissions();
      EXPECT_EQ(mode & std::filesystem::perms::all,
                std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)
          << k;
    }
  }
  r = exchange("--confirm", "mallory");
  EXPECT_EQ(Trim(r.out), "1 2") << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("S_B does not match"));
  EXPECT_TRUE(Read("ka").empty());
  r = exchange("", "mallory");
  ASSERT_EQ(Trim(r.out), "0 0") << Describe(r);
  EXPECT_EQ(Read("ka").size(), 16u);
  EXPECT_NE(Read("ka"), Read("kb"));
  // A usage error names the flag.
  r = Sh("smcrypt kex --local --key a.pem --peer-key b_pub.pem </dev/null");
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--role"));
}

}  // namespace
}  // namespace smcrypt
