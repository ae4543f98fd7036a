#include "server/engine/command_line.h"

#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace smcrypt::server {
namespace {

constexpr int kMaxFlagfileDepth = 8;

// FlagfileArgs: the arguments of a --flagfile, one a line, blank lines and `#` comments
// skipped; empty when it cannot be read.
std::vector<std::string> FlagfileArgs(const std::string& path) {
  std::vector<std::string> args;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view arg = absl::StripAsciiWhitespace(line);
    if (arg.empty() || arg[0] == '#') continue;
    args.emplace_back(arg);
  }
  return args;
}

void Scan(const std::vector<std::string>& args, const std::map<std::string, bool>& known,
          int depth, std::set<std::string>* given) {
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") return;
    if (arg.size() < 2 || arg[0] != '-') continue;
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    const size_t eq = arg.find('=');
    const std::string name(arg.substr(0, eq));
    const bool has_value = eq != absl::string_view::npos;
    std::string value = has_value ? std::string(arg.substr(eq + 1)) : std::string();
    const bool reads_flags = name == "flagfile" || name == "fromenv" || name == "tryfromenv";
    auto it = known.find(name);
    if (!reads_flags && it == known.end()) {
      // --noname: a bool flag set to false.
      if (!has_value && absl::StartsWith(name, "no")) {
        auto bool_flag = known.find(name.substr(2));
        if (bool_flag != known.end() && bool_flag->second) given->insert(bool_flag->first);
      }
      continue;
    }
    const bool is_bool = !reads_flags && it->second;
    if (!has_value && !is_bool && i + 1 < args.size()) value = args[++i];
    if (name == "flagfile") {
      if (depth >= kMaxFlagfileDepth) continue;
      for (absl::string_view path : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        Scan(FlagfileArgs(std::string(path)), known, depth + 1, given);
      }
      continue;
    }
    if (name == "fromenv" || name == "tryfromenv") {
      for (absl::string_view env_name : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        if (known.count(std::string(env_name)) > 0) given->emplace(env_name);
      }
      continue;
    }
    given->insert(name);
  }
}

}  // namespace

std::set<std::string> FlagsOnCommandLine(const std::vector<std::string>& args,
                                         const std::map<std::string, bool>& known) {
  std::set<std::string> given;
  Scan(args, known, 0, &given);
  return given;
}

}  // namespace smcrypt::server
