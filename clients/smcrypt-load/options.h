// options.h — parsing smcrypt-load's flag values: sizes ("1KiB"), durations ("300s"),
// lists ("1,10,100"), and the channels of --target / --connections.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_OPTIONS_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_OPTIONS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "clients/smcrypt/session.h"
#include "grpcpp/grpcpp.h"

namespace smcrypt::load {

// ParseSize reads a byte count: a number with an optional unit B, K/KiB/KB (1024),
// M/MiB/MB (2^20), G/GiB/GB (2^30), case-insensitive ("512", "1KiB", "30k", "1GiB").
absl::StatusOr<size_t> ParseSize(absl::string_view text);
// ParseDurationFlag reads seconds ("300", "0.5") or an absl duration ("5m", "500ms").
absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view text);
// ParseIntList reads "1,10,100" (positive integers).
absl::StatusOr<std::vector<int>> ParseIntList(absl::string_view text);

// TargetAddresses splits --target: a gRPC URI such as "dns:///name:port" or
// "ipv4:a:1,b:2" (one channel target; round_robin over the resolved addresses, with the
// clients' retry policy, cli::kServiceConfigJson), "a:1,b:2" (channel i goes to
// address i mod n), or one address.
std::vector<std::string> TargetAddresses(absl::string_view target);

// MakeChannels creates `connections` channels (each its own TCP connection) from the CLI's
// connection flags: channel i goes to TargetAddresses()[i mod n]. With `retries` false,
// gRPC's retries are off (GRPC_ARG_ENABLE_RETRIES 0): each call is one attempt, so a
// failure counts at once, and the retry filter's per-call copies of the request's
// metadata and message (about a tenth of the rate of a small call here) are not made.
std::vector<std::shared_ptr<grpc::Channel>> MakeChannels(const cli::ChannelConfig& config,
                                                         int connections, bool retries = true);

}  // namespace smcrypt::load

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_OPTIONS_H_
