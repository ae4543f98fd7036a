#include "clients/smcrypt/flags.h"

#include <algorithm>
#include <cstdint>

#include "CLI/CLI.hpp"

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
  // CLI11 parses, with one option per spec: a valued flag takes exactly one argument per
  // occurrence (whatever it starts with, so `--aad -v1` works) and keeps every
  // occurrence; a boolean flag takes none (`--stream=yes` is an error).
  CLI::App app;
  app.set_help_flag();  // -h/--help is recorded as the flag "help", the caller prints help
  app.allow_extras(false);
  std::vector<std::vector<std::string>> values(specs.size());
  std::vector<int64_t> counts(specs.size(), 0);
  std::vector<std::string> positional;
  int64_t help = 0;
  app.add_flag("-h,--help", help);
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string name = absl::StrCat("--", specs[i].name);
    if (specs[i].value_name.empty()) {
      app.add_flag(name, counts[i])->disable_flag_override();
    } else {
      app.add_option(name, values[i])
          ->type_name(std::string(specs[i].value_name))
          ->expected(1)
          ->allow_extra_args(false)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
  }
  app.add_option("FILE", positional);
  std::vector<std::string> args_in(argv.begin(), argv.end());
  std::reverse(args_in.begin(), args_in.end());  // CLI11 takes its vector in reverse order
  try {
    app.parse(args_in);
  } catch (const CLI::ExtrasError& e) {
    // "The following argument(s) was/were not expected: --nope -x"
    absl::string_view what = e.what();
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown flag ", what.substr(what.find(": ") == absl::string_view::npos
                                         ? 0 : what.find(": ") + 2),
        " (flags are spelled --name; run with --help for the list)"));
  } catch (const CLI::ParseError& e) {
    absl::string_view what = e.what();
    if (absl::StrContains(what, "disallowed flag override")) {
      // "stream was given a disallowed flag override"
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", what.substr(0, what.find(' ')), " takes no value"));
    }
    if (absl::StrContains(what, " required ") && absl::StrContains(what, " missing")) {
      // "--alg: 1 required ALG missing"
      return absl::InvalidArgumentError(
          absl::StrCat("flag ", what.substr(0, what.find(':')), " needs a value"));
    }
    return absl::InvalidArgumentError(what);
  }
  Args args;
  if (help > 0) args.AddFlag("help", "");
  for (size_t i = 0; i < specs.size(); ++i) {
    for (int64_t n = 0; n < counts[i]; ++n) args.AddFlag(std::string(specs[i].name), "");
    for (std::string& v : values[i]) args.AddFlag(std::string(specs[i].name), std::move(v));
  }
  for (std::string& p : positional) args.AddPositional(std::move(p));
  return args;
}

}  // namespace smcrypt::cli
