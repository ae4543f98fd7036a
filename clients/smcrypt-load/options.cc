#include "clients/smcrypt-load/options.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace smcrypt::load {

absl::StatusOr<size_t> ParseSize(absl::string_view text) {
  std::string t = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  size_t unit = 1;
  struct Suffix {
    const char* s;
    size_t mult;
  };
  for (const Suffix& x : {Suffix{"kib", 1024}, Suffix{"mib", 1 << 20}, Suffix{"gib", size_t{1} << 30},
                          Suffix{"kb", 1024}, Suffix{"mb", 1 << 20}, Suffix{"gb", size_t{1} << 30},
                          Suffix{"k", 1024}, Suffix{"m", 1 << 20}, Suffix{"g", size_t{1} << 30},
                          Suffix{"b", 1}}) {
    if (absl::EndsWith(t, x.s)) {
      t.resize(t.size() - std::strlen(x.s));
      unit = x.mult;
      break;
    }
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(t), &n) || n > (uint64_t{1} << 40) / unit) {
    return absl::InvalidArgumentError(
        absl::StrCat("size ", text, ": expected bytes such as 512, 1KiB, 30k, 1MiB, 1GiB"));
  }
  return static_cast<size_t>(n * unit);
}

absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view text) {
  double seconds;
  absl::Duration d;
  if (absl::SimpleAtod(text, &seconds)) {
    d = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(text, &d)) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration ", text, ": expected seconds or a duration such as 500ms, 30s, 5m"));
  }
  if (d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("duration ", text, ": must be positive"));
  }
  return d;
}

absl::StatusOr<std::vector<int>> ParseIntList(absl::string_view text, int max) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    std::string p(absl::StripAsciiWhitespace(part));
    p.erase(std::remove(p.begin(), p.end(), '_'), p.end());
    int v;
    if (!absl::SimpleAtoi(p, &v) || v <= 0 || v > max) {
      return absl::InvalidArgumentError(absl::StrCat(
          text, ": expected integers from 1 to ", max, " such as 1,10,100"));
    }
    out.push_back(v);
  }
  if (out.empty()) return absl::InvalidArgumentError("empty list: expected integers such as 1,10,100");
  return out;
}

absl::StatusOr<int> ParseCount(absl::string_view flag, absl::string_view text, int max) {
  int64_t n;
  if (!absl::SimpleAtoi(text, &n) || n <= 0 || n > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " ", text, ": expected an integer from 1 to ", max));
  }
  return static_cast<int>(n);
}

absl::Status CheckMetadataValue(absl::string_view key, absl::string_view value) {
  if (absl::EndsWith(key, "-bin")) return absl::OkStatus();
  for (size_t i = 0; i < value.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--metadata %s: byte 0x%02x at offset %d of the value is not printable ASCII "
          "(gRPC sends only 0x20 to 0x7E in a header value)", key, c, i));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> TargetAddresses(absl::string_view target) {
  // A gRPC URI (dns:///name:port, ipv4:A:P,B:Q, ipv6:[A]:P,...) is one target that
  // resolves to many addresses; round_robin spreads each channel's RPCs across them.
  if (absl::StrContains(target, ":///") || absl::StartsWith(target, "ipv4:") ||
      absl::StartsWith(target, "ipv6:") || !absl::StrContains(target, ',')) {
    return {std::string(target)};
  }
  return absl::StrSplit(target, ',', absl::SkipWhitespace());
}

std::vector<std::shared_ptr<grpc::Channel>> MakeChannels(const cli::ChannelConfig& config,
                                                         int connections, bool retries) {
  const std::vector<std::string> addresses = TargetAddresses(config.target);
  std::vector<std::shared_ptr<grpc::Channel>> out;
  for (int i = 0; i < std::max(1, connections); ++i) {
    grpc::ChannelArguments args = config.channel_args;
    // A subchannel pool of its own, so each channel opens its own connection instead of
    // sharing one with the channels of identical arguments.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("smcrypt_load.channel", i);
    if (!retries) args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    const std::string& address = addresses[static_cast<size_t>(i) % addresses.size()];
    out.push_back(grpc::CreateCustomChannel(address, config.credentials, args));
  }
  return out;
}

}  // namespace smcrypt::load
