#include "clients/smcrypt/flags.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"

namespace smcrypt::cli {

bool Args::Has(absl::string_view name) const {
  return std::any_of(flags_.begin(), flags_.end(),
                     [&](const auto& f) { return f.first == name; });
}

std::optional<std::string> Args::Get(absl::string_view name) const {
  for (auto it = flags_.rbegin(); it != flags_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return std::nullopt;
}

std::vector<std::string> Args::GetAll(absl::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [n, v] : flags_) {
    if (n == name) out.push_back(v);
  }
  return out;
}

absl::StatusOr<Args> ParseArgs(absl::Span<const FlagSpec> specs,
                               absl::Span<const std::string> argv) {
  Args args;
  bool flags_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (flags_done || arg == "-" || !absl::StartsWith(arg, "-")) {
      args.AddPositional(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      args.AddFlag("help", "");
      continue;
    }
    if (!absl::StartsWith(arg, "--")) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag ", arg, " (flags are spelled --name)"));
    }
    absl::string_view body = absl::string_view(arg).substr(2);
    std::optional<std::string> inline_value;
    if (size_t eq = body.find('='); eq != absl::string_view::npos) {
      inline_value = std::string(body.substr(eq + 1));
      body = body.substr(0, eq);
    }
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const FlagSpec& s) { return s.name == body; });
    if (spec == specs.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", body));
    }
    if (spec->value_name.empty()) {
      if (inline_value.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", body, " takes no value"));
      }
      args.AddFlag(std::string(body), "");
      continue;
    }
    if (inline_value.has_value()) {
      args.AddFlag(std::string(body), *std::move(inline_value));
      continue;
    }
    if (i + 1 >= argv.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", body, " needs a value (", spec->value_name, ")"));
    }
    args.AddFlag(std::string(body), argv[++i]);
  }
  return args;
}

}  // namespace smcrypt::cli
