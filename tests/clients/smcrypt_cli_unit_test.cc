// Unit tests of the smcrypt CLI's building blocks: text codecs, the flag parser and the
// algorithm names (no server needed).
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "clients/smcrypt/algorithm_names.h"
#include "clients/smcrypt/codec.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/session.h"
#include "error_details.h"
#include "clients/smcrypt/flags.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt::cli {
namespace {

using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

TEST(TerminalSafeTest, EscapesControlsAndMalformedBytesKeepsUtf8Text) {
  EXPECT_EQ(TerminalSafe("key \"signer\" not found"), "key \"signer\" not found");
  EXPECT_EQ(TerminalSafe("x\x1b]0;pwned\x07"), "x\\x1b]0;pwned\\x07");
  EXPECT_EQ(TerminalSafe("a\nb\rc\td\x7f"), "a\\nb\\rc\\td\\x7f");
  EXPECT_EQ(TerminalSafe(std::string("nul\0", 4)), "nul\\x00");
  // Valid UTF-8 stays: é, 密钥, an emoji.
  EXPECT_EQ(TerminalSafe("cl\xc3\xa9 \xe5\xaf\x86\xe9\x92\xa5 \xf0\x9f\x94\x91"),
            "cl\xc3\xa9 \xe5\xaf\x86\xe9\x92\xa5 \xf0\x9f\x94\x91");
  // Malformed UTF-8 (a lone byte, an overlong ESC, a surrogate, a cut sequence) and the
  // C1 CSI U+009B, a bidi override U+202E: hex bytes.
  EXPECT_EQ(TerminalSafe("\xff"), "\\xff");
  EXPECT_EQ(TerminalSafe("\xc0\x9b"), "\\xc0\\x9b");
  EXPECT_EQ(TerminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(TerminalSafe("\xe5\xaf"), "\\xe5\\xaf");
  EXPECT_EQ(TerminalSafe("\xc2\x9b" "2J"), "\\xc2\\x9b2J");
  EXPECT_EQ(TerminalSafe("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb");
}

TEST(TerminalSafeTest, DescribeErrorEscapesServerMessages) {
  // A server's message echoing a key_id with an OSC sequence and a bell.
  absl::Status s = RpcStatus(
      grpc::Status(grpc::StatusCode::NOT_FOUND, "no key \"x\x1b]0;pwned\x07\" in the keyring"));
  EXPECT_EQ(DescribeError(s), "NOT_FOUND: no key \"x\\x1b]0;pwned\\x07\" in the keyring");
  EXPECT_EQ(DescribeError(absl::InvalidArgumentError("--key-id \x1b[2J")),
            "--key-id \\x1b[2J");
}

TEST(DescribeErrorTest, ConnectionHintOnlyForTransportFailures) {
  // gRPC's own UNAVAILABLE (no server reached): no ErrorInfo, the hint is added.
  EXPECT_THAT(DescribeError(RpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                                   "failed to connect to all addresses"))),
              HasSubstr("is smcryptd running at --target?"));
  // The server's UNAVAILABLE with a reason: it was reached, no hint.
  rpc::ErrorInfo info;
  info.reason = "AUDIT_UNAVAILABLE";
  info.domain = std::string(rpc::kErrorDomain);
  const std::string message = "the audit log cannot be written";
  absl::Status s = RpcStatus(grpc::Status(
      grpc::StatusCode::UNAVAILABLE, message,
      rpc::SerializeStatusDetails(static_cast<int>(grpc::StatusCode::UNAVAILABLE), message,
                                  info)));
  EXPECT_EQ(ErrorReason(s), "AUDIT_UNAVAILABLE");
  EXPECT_EQ(DescribeError(s), "UNAVAILABLE: the audit log cannot be written");
}

TEST(InfoTextTest, BytesAlsoInHumanForm) {
  EXPECT_EQ(HumanBytes(0), "0 bytes");
  EXPECT_EQ(HumanBytes(1), "1 byte");
  EXPECT_EQ(HumanBytes(1023), "1023 bytes");
  EXPECT_EQ(HumanBytes(1024), "1 KiB");
  EXPECT_EQ(HumanBytes(1536 * 1024), "1.5 MiB");
  EXPECT_EQ(HumanBytes(uint64_t{1} << 30), "1 GiB");
  EXPECT_EQ(HumanBytes(~uint64_t{0}), "16.0 EiB");

  v1::GetServerInfoResponse info;
  v1::ResourceSizing* z = info.mutable_sizing();
  z->set_cgroup("cgroup v2");
  z->set_cpu_limit(2);
  z->set_memory_limit_bytes(uint64_t{1} << 30);
  z->set_cpus_available(2);
  v1::SizedValue* v = z->add_values();
  v->set_name("worker_threads");
  v->set_value(2);
  v->set_source("cgroup cpu");
  v = z->add_values();
  v->set_name("max_inflight_bytes");
  v->set_value(uint64_t{128} << 20);
  v->set_source("cgroup memory");
  const std::string text = InfoText(info);
  EXPECT_THAT(text, HasSubstr("Sizing: cgroup v2, CPU limit 2, memory limit 1073741824 (1 GiB), "
                              "2 CPUs available\n"));
  EXPECT_THAT(text, HasSubstr("  worker_threads=2 (cgroup cpu)\n"));
  EXPECT_THAT(text, HasSubstr("  max_inflight_bytes=134217728 = 128 MiB (cgroup memory)\n"));
}

TEST(CodecTest, OneShotKnownValues) {
  EXPECT_EQ(EncodeAll(Encoding::kHex, std::string("\x00\xff\x10", 3)), "00ff10\n");
  EXPECT_EQ(EncodeAll(Encoding::kBase64, "abc"), "YWJj\n");
  EXPECT_EQ(EncodeAll(Encoding::kBase64, "ab"), "YWI=\n");
  EXPECT_EQ(EncodeAll(Encoding::kRaw, "ab"), "ab");
  EXPECT_EQ(*DecodeAll(Encoding::kHex, " 00 FF\n10\n"), std::string("\x00\xff\x10", 3));
  EXPECT_EQ(*DecodeAll(Encoding::kBase64, "YW\nJj"), "abc");
  EXPECT_THAT(DecodeAll(Encoding::kHex, "abc").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("odd")));
  EXPECT_THAT(DecodeAll(Encoding::kHex, "zz").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(DecodeAll(Encoding::kBase64, "Y*==").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(CodecTest, IncrementalMatchesOneShotForEverySplit) {
  uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  for (Encoding e : {Encoding::kHex, Encoding::kBase64, Encoding::kRaw}) {
    for (size_t len : {0, 1, 2, 3, 4, 5, 64, 1000}) {
      std::string data = testing::RandomBytes(rng, len);
      Encoder encoder(e);
      std::string text;
      for (size_t i = 0; i < data.size();) {
        size_t n = std::min<size_t>(data.size() - i, rng() % 7);
        text += encoder.Update(absl::string_view(data).substr(i, n));
        i += n;
      }
      text += encoder.Finish();
      ASSERT_EQ(text, EncodeAll(e, data));
      Decoder decoder(e);
      std::string back;
      for (size_t i = 0; i < text.size();) {
        size_t n = std::min<size_t>(text.size() - i, 1 + rng() % 5);
        ASSERT_THAT(decoder.Update(absl::string_view(text).substr(i, n), &back), IsOk());
        i += n;
      }
      ASSERT_THAT(decoder.Finish(&back), IsOk());
      // Raw keeps the text as is; the text encodings drop their newline.
      EXPECT_EQ(back, data);
    }
  }
}

TEST(CodecTest, PemSymmetricKeyRoundTrip) {
  std::string key = "0123456789abcdef";
  std::string pem = ToPem("SM4 KEY", key);
  EXPECT_EQ(pem, "-----BEGIN SM4 KEY-----\nMDEyMzQ1Njc4OWFiY2RlZg==\n-----END SM4 KEY-----\n");
  absl::StatusOr<std::optional<std::string>> raw = PemSymmetricKey(pem);
  ASSERT_THAT(raw.status(), IsOk());
  EXPECT_EQ(raw->value(), key);
  raw = PemSymmetricKey("-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n");
  ASSERT_THAT(raw.status(), IsOk());
  EXPECT_FALSE(raw->has_value());
  EXPECT_THAT(PemSymmetricKey("-----BEGIN AES KEY-----\n!!\n-----END AES KEY-----").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(FlagsTest, ParsesValuesBooleansAndPositionals) {
  std::vector<FlagSpec> specs = {{"alg", "ALG", ""}, {"stream", "", ""}};
  std::vector<std::string> argv = {"--alg", "sm3", "a.txt", "--stream", "--alg=sha-256",
                                   "-", "--", "--not-a-flag"};
  absl::StatusOr<Args> args = ParseArgs(specs, argv);
  ASSERT_THAT(args.status(), IsOk());
  EXPECT_EQ(args->Get("alg"), "sha-256");
  EXPECT_EQ(args->GetAll("alg"), (std::vector<std::string>{"sm3", "sha-256"}));
  EXPECT_TRUE(args->Has("stream"));
  EXPECT_EQ(args->positional(), (std::vector<std::string>{"a.txt", "-", "--not-a-flag"}));
}

TEST(FlagsTest, RejectsBadFlags) {
  std::vector<FlagSpec> specs = {{"alg", "ALG", ""}, {"stream", "", ""}};
  auto parse = [&](std::vector<std::string> argv) { return ParseArgs(specs, argv).status(); };
  EXPECT_THAT(parse({"--nope"}), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("unknown flag --nope")));
  EXPECT_THAT(parse({"--alg"}), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("needs a value")));
  EXPECT_THAT(parse({"--stream=yes"}), StatusIs(absl::StatusCode::kInvalidArgument,
                                                HasSubstr("takes no value")));
  EXPECT_THAT(parse({"-x"}), StatusIs(absl::StatusCode::kInvalidArgument));
  absl::StatusOr<Args> help = ParseArgs(specs, std::vector<std::string>{"-h"});
  ASSERT_THAT(help.status(), IsOk());
  EXPECT_TRUE(help->Has("help"));
}

// The exit status follows the ErrorInfo reason of a status, not its message: 1 for
// DECRYPTION_FAILED (call or batch item), 3 for the other server errors.
// --no-retries turns gRPC's retries off on the channel (GRPC_ARG_ENABLE_RETRIES 0);
// without it the channel keeps gRPC's default (on) and the service config's retry policy.
TEST(ChannelConfigTest, NoRetriesTurnsRetriesOff) {
  for (const bool no_retries : {false, true}) {
    std::vector<std::string> argv = {"--target", "ipv4:127.0.0.1:1,127.0.0.1:2"};
    if (no_retries) argv.push_back("--no-retries");
    absl::StatusOr<Args> args = ParseArgs(GroupFlags(kConnectionFlags), argv);
    ASSERT_THAT(args.status(), IsOk());
    absl::StatusOr<ChannelConfig> config = ChannelConfigFromArgs(*args);
    ASSERT_THAT(config.status(), IsOk());
    const grpc_channel_args c = config->channel_args.c_channel_args();
    int found = 0, value = -1;
    for (size_t i = 0; i < c.num_args; ++i) {
      if (std::string(c.args[i].key) == GRPC_ARG_ENABLE_RETRIES) {
        ++found;
        value = c.args[i].value.integer;
      }
    }
    EXPECT_EQ(found, no_retries ? 1 : 0) << no_retries;
    if (no_retries) {
      EXPECT_EQ(value, 0);
    }
  }
}

TEST(ExitCodeTest, ErrorInfoReasonDecides) {
  const rpc::ErrorInfo failed{"DECRYPTION_FAILED", "smcrypt.v1", {}};
  const rpc::ErrorInfo not_found{"KEY_NOT_FOUND", "smcrypt.v1", {{"key_id", "k"}}};
  grpc::Status call(grpc::StatusCode::INVALID_ARGUMENT, "any wording",
                    rpc::SerializeStatusDetails(3, "any wording", failed));
  EXPECT_EQ(ExitCodeFor(RpcStatus(call)), kExitInvalid);
  EXPECT_EQ(ErrorReason(RpcStatus(call)), "DECRYPTION_FAILED");
  grpc::Status missing(grpc::StatusCode::NOT_FOUND, "no key k",
                       rpc::SerializeStatusDetails(5, "no key k", not_found));
  EXPECT_EQ(ExitCodeFor(RpcStatus(missing)), kExitRpc);
  EXPECT_EQ(ErrorReason(RpcStatus(missing)), "KEY_NOT_FOUND");
  EXPECT_EQ(ExitCodeFor(RpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down"))),
            kExitRpc);

  smcrypt::v1::Status item;
  item.set_code(3);
  item.set_message("another wording");
  google::protobuf::Any* any = item.add_details();
  any->set_type_url(std::string(rpc::kErrorInfoTypeUrl));
  any->set_value(rpc::SerializeErrorInfo(failed));
  EXPECT_EQ(ExitCodeFor(ItemStatus(item)), kExitInvalid);
  item.clear_details();
  EXPECT_EQ(ExitCodeFor(ItemStatus(item)), kExitRpc);
  // A server without ErrorInfo: its one "decryption failed" message.
  item.set_message("decryption failed");
  EXPECT_EQ(ExitCodeFor(ItemStatus(item)), kExitInvalid);
  // Local usage errors are 2.
  EXPECT_EQ(ExitCodeFor(UsageError("bad flag")), kExitUsage);
}

TEST(AlgorithmNamesTest, EveryEnumValueRoundTripsCaseInsensitively) {
  const google::protobuf::EnumDescriptor* desc = smcrypt::v1::Algorithm_descriptor();
  int seen = 0;
  for (int i = 0; i < desc->value_count(); ++i) {
    auto alg = static_cast<smcrypt::v1::Algorithm>(desc->value(i)->number());
    if (alg == smcrypt::v1::ALGORITHM_UNSPECIFIED) continue;
    std::string name = AlgorithmName(alg);
    EXPECT_THAT(name, ::testing::Not(HasSubstr("_")));
    absl::StatusOr<smcrypt::v1::Algorithm> parsed =
        ParseAlgorithm(absl::AsciiStrToLower(name), AlgorithmFamily::kAny);
    ASSERT_THAT(parsed.status(), IsOk()) << name;
    EXPECT_EQ(*parsed, alg);
    ++seen;
  }
  EXPECT_GE(seen, 26);
  EXPECT_EQ(AlgorithmName(smcrypt::v1::SHA_256), "SHA-256");
  EXPECT_EQ(AlgorithmName(smcrypt::v1::HPKE_SM2_SM3_SM4GCM), "HPKE-SM2-SM3-SM4GCM");
}

TEST(AlgorithmNamesTest, FamiliesAndErrors) {
  EXPECT_EQ(*ParseAlgorithm("Sm4-Gcm", AlgorithmFamily::kSymmetric), smcrypt::v1::SM4_GCM);
  EXPECT_THAT(ParseAlgorithm("sm4-gcm", AlgorithmFamily::kHash).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not a hash algorithm; expected one of: SM3, SHA-256")));
  EXPECT_THAT(ParseAlgorithm("sha256", AlgorithmFamily::kHash).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown algorithm")));
  EXPECT_THAT(ParseAlgorithm("SM4_GCM", AlgorithmFamily::kSymmetric).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("did you mean SM4-GCM?")));
  EXPECT_TRUE(InFamily(smcrypt::v1::SM2, AlgorithmFamily::kSignature));
  EXPECT_TRUE(InFamily(smcrypt::v1::SM2, AlgorithmFamily::kPublicKeyEncrypt));
  EXPECT_FALSE(InFamily(smcrypt::v1::RSA_2048_OAEP, AlgorithmFamily::kSignature));
  EXPECT_FALSE(InFamily(smcrypt::v1::RSA_2048_PSS, AlgorithmFamily::kPublicKeyEncrypt));
  EXPECT_TRUE(IsAead(smcrypt::v1::SM4_CCM));
  EXPECT_FALSE(IsAead(smcrypt::v1::SM4_CTR));
  EXPECT_TRUE(UsesPadding(smcrypt::v1::AES_256_ECB));
  EXPECT_EQ(DefaultNonceSize(smcrypt::v1::SM4_ECB), 0u);
  EXPECT_EQ(DefaultNonceSize(smcrypt::v1::SM4_CBC), 16u);
  EXPECT_EQ(DefaultNonceSize(smcrypt::v1::AES_128_GCM), 12u);
  EXPECT_EQ(SymmetricKeySize(smcrypt::v1::AES_256_GCM), 32u);
  EXPECT_EQ(SymmetricKeySize(smcrypt::v1::SM4_CBC), 16u);
  EXPECT_EQ(SymmetricKeySize(smcrypt::v1::SM2), 0u);
}

}  // namespace
}  // namespace smcrypt::cli
