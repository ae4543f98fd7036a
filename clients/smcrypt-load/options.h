// options.h — parsing smcrypt-load's flag values: sizes ("1KiB"), durations ("300s"),
// lists ("1,10,100"), and the channels of --target / --connections.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_OPTIONS_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_OPTIONS_H_

#include <limits>
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
// ParseIntList reads "1,10,100" (integers from 1 to `max`).
absl::StatusOr<std::vector<int>> ParseIntList(absl::string_view text,
                                              int max = std::numeric_limits<int>::max());

// The upper bounds of the counts that allocate per unit. kMaxInFlight bounds --concurrency
// and each of --steps: one slot (a call's context, request and response) per operation in
// flight; 100,000 is five times the concurrency scenario's last step (20,000).
// kMaxConnections bounds --connections: one channel, TCP connection and HTTP/2 session
// each. kMaxBatchItems bounds --batch: the copies of the request in one *Batch RPC, at
// most smcryptd's limit (CryptoEngine::kMaxBatchItems), which fails a larger batch.
inline constexpr int kMaxInFlight = 100000;
inline constexpr int kMaxConnections = 1000;
inline constexpr int kMaxBatchItems = 65536;

// ParseCount reads the value of --`flag`: an integer from 1 to `max`.
absl::StatusOr<int> ParseCount(absl::string_view flag, absl::string_view text, int max);

// CheckMetadataValue checks a --metadata value as gRPC does before it sends a header: a key
// that ends in "-bin" is binary and takes any bytes; any other key's value is printable
// ASCII (0x20 to 0x7E), so no control character (tab, CR, LF, NUL), DEL or non-ASCII byte.
absl::Status CheckMetadataValue(absl::string_view key, absl::string_view value);

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
