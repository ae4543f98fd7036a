// command_line.h — which flags a command line names, as smcryptd reports them in
// smcrypt_limit's `source` label ("flag": given on the command line).
// Thread-safe: pure functions (FlagsOnCommandLine reads --flagfile files).
#ifndef SMCRYPT_SERVER_COMMAND_LINE_H_
#define SMCRYPT_SERVER_COMMAND_LINE_H_

#include <map>
#include <set>
#include <string>
#include <vector>

namespace smcrypt::server {

// FlagsOnCommandLine names the flags of `known` (name -> whether it is a bool flag) that
// `args` (argv without argv[0]) gives, whatever their value, in the forms Abseil's parser
// takes: `-name` or `--name`, with `=value` or, for a non-bool flag, the value as the
// next argument; `--noname` for a bool flag. Arguments after `--` are not flags; names
// not in `known` are ignored. The flags of a `--flagfile` (one argument a line, `#`
// comments; nested files followed up to 8 deep, an unreadable file skipped: the parser
// reports it) and those named by `--fromenv` or `--tryfromenv` count as given.
std::set<std::string> FlagsOnCommandLine(const std::vector<std::string>& args,
                                         const std::map<std::string, bool>& known);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_COMMAND_LINE_H_
