// flags.h — the per-subcommand flag parser of the smcrypt CLI, on CLI11 (libcli11-dev).
//
// Grammar: `--name value`, `--name=value`, boolean `--name`; `-` alone is a positional
// argument (stdin); `--` ends the flags. A flag given twice keeps every value; Get()
// returns the last one. Flags are looked up by name without the leading dashes.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_FLAGS_H_
#define SMCRYPT_CLIENTS_SMCRYPT_FLAGS_H_

#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace smcrypt::cli {

// FlagSpec describes one flag: `value_name` is empty for a boolean flag.
struct FlagSpec {
  absl::string_view name;
  absl::string_view value_name;
  absl::string_view help;
};

// Args is a parsed command line.
class Args {
 public:
  // Has returns whether flag `name` was given at least once.
  bool Has(absl::string_view name) const;
  // Get returns the last value of flag `name`, or nullopt when absent.
  std::optional<std::string> Get(absl::string_view name) const;
  // GetAll returns every value of flag `name`, in command-line order.
  std::vector<std::string> GetAll(absl::string_view name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  void AddFlag(std::string name, std::string value) {
    flags_.emplace_back(std::move(name), std::move(value));
  }
  void AddPositional(std::string value) { positional_.push_back(std::move(value)); }

 private:
  std::vector<std::pair<std::string, std::string>> flags_;
  std::vector<std::string> positional_;
};

// ParseArgs parses `argv` against `specs`. An unknown flag, a missing value or a value
// given to a boolean flag is InvalidArgument naming the flag. `--help` and `-h` are
// recorded as the boolean flag "help".
absl::StatusOr<Args> ParseArgs(absl::Span<const FlagSpec> specs,
                               absl::Span<const std::string> argv);

}  // namespace smcrypt::cli

#endif  // SMCRYPT_CLIENTS_SMCRYPT_FLAGS_H_
