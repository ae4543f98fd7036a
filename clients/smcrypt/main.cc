// smcrypt: the command-line client of smcryptd (docs/design.md, "Clients"), in the spirit of
// the gmssl tool: `smcrypt hash --alg sm3 FILE`, sign, verify, encrypt, decrypt, ...
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "clients/smcrypt/commands.h"

namespace smcrypt::cli {
namespace {

#ifndef SMCRYPT_VERSION
#define SMCRYPT_VERSION "unknown"
#endif

std::vector<Command> AllCommands() {
  std::vector<Command> all;
  for (auto table :
       {HashCommands, SignCommands, CipherCommands, PkCommands, EnvelopeCommands, KexCommands,
        KeyCommands, KeyringCommands}) {
    for (Command& c : table()) all.push_back(std::move(c));
  }
  return all;
}

constexpr size_t kHelpWidth = 80;
constexpr size_t kFlagColumn = 24;

// The help text stays hand-made: it is laid out from the same FlagSpec tables the parser
// reads, in groups (own flags, input/output/key flags, connection flags) with each
// command's prose and examples, which CLI11's formatter (one option list per app) does not
// give without making each command a CLI11 subcommand with its own app.
// Wrap fills `text` into lines of at most kHelpWidth columns, each continuation line
// indented by `indent` spaces; `first_column` is where the first line starts.
std::string Wrap(absl::string_view text, size_t indent, size_t first_column) {
  std::string out;
  size_t column = first_column;
  bool first = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!first) {
      if (column + 1 + word.size() > kHelpWidth) {
        out.push_back('\n');
        out.append(indent, ' ');
        column = indent;
      } else {
        out += ' ';
        ++column;
      }
    }
    absl::StrAppend(&out, word);
    column += word.size();
    first = false;
  }
  return out;
}

std::string FlagLines(const std::vector<FlagSpec>& flags) {
  std::string out;
  for (const FlagSpec& f : flags) {
    std::string left = absl::StrCat("  --", f.name);
    if (!f.value_name.empty()) absl::StrAppend(&left, " ", f.value_name);
    if (left.size() < kFlagColumn) {
      left.resize(kFlagColumn, ' ');
    } else {
      left.push_back('\n');
      left.append(kFlagColumn, ' ');
    }
    absl::StrAppend(&out, left, Wrap(f.help, kFlagColumn, kFlagColumn), "\n");
  }
  return out;
}

std::string CommandHelp(const Command& c) {
  std::string out = absl::StrCat("smcrypt ", c.name, ": ", c.summary, "\n\nUsage: ",
                                 c.synopsis, "\n\n", c.details, "\n");
  if (c.groups & kKeyFlags) {
    absl::StrAppend(&out, "\nKEY is one of --key-id ID, --key FILE, --key-hex HEX.\n");
  }
  if (!c.flags.empty()) absl::StrAppend(&out, "\nFlags:\n", FlagLines(c.flags));
  std::vector<FlagSpec> common = GroupFlags(c.groups & ~kConnectionFlags);
  if (!common.empty()) absl::StrAppend(&out, "\nInput, output and key flags:\n", FlagLines(common));
  if (c.groups & kConnectionFlags) {
    absl::StrAppend(&out, "\nConnection flags:\n", FlagLines(GroupFlags(kConnectionFlags)));
  }
  absl::StrAppend(&out, "\nExit status: 0 ok, 1 verification or authentication failed "
                        "(signature, MAC, tag, C3 or padding), 2 usage or input error, 3 server "
                        "unreachable or RPC error.\n");
  return out;
}

std::string GeneralHelp(const std::vector<Command>& commands) {
  std::string out = absl::StrCat(
      "smcrypt ", SMCRYPT_VERSION, " -- command-line client of smcryptd, the SM2/SM3/SM4 and\n"
      "international crypto service.\n\n"
      "Usage: smcrypt <command> [flags] [FILE...]\n"
      "       smcrypt help <command>     (or smcrypt <command> --help)\n\nCommands:\n");
  for (const Command& c : commands) {
    std::string name(c.name);
    name.resize(11, ' ');
    absl::StrAppend(&out, "  ", name, c.summary, "\n");
  }
  absl::StrAppend(
      &out,
      "\nInputs are files (FILE or --in FILE) or stdin (no FILE, or -). Messages and\n"
      "plaintexts are raw bytes. Binary results -- digests, MACs, signatures, ciphertexts,\n"
      "random bytes -- are written in hex by default (--format base64 or raw to change),\n"
      "and commands that read them back (verify --sig, decrypt, pkdecrypt, open) expect\n"
      "the same --format. Decrypted plaintext is written as raw bytes.\n\n"
      "Algorithms (--alg, case-insensitive; each command lists those it takes):\n  ",
      Wrap(absl::StrJoin(AlgorithmsOf(AlgorithmFamily::kAny), ", "), 2, 2), "\n\n"
      "Connection: --target HOST:PORT (default $SMCRYPT_TARGET, else localhost:50051),\n"
      "--tls, --ca FILE, --cert FILE, --cert-key FILE, --server-name NAME, --timeout DURATION.\n"
      "--local (or $SMCRYPT_LOCAL=1 without --target) runs the command in this process with\n"
      "libsmcrypt -- the same code smcryptd runs -- and opens no socket: keys come from\n"
      "files (--key FILE, --pass-file for encrypted ones), keygen keys are made here, and\n"
      "--key-id (a server's keyring) is a usage error.\n\n"
      "Exit status: 0 ok; 1 verification or authentication failed (\"signature invalid\",\n"
      "\"MAC invalid\", a decryption's tag, C3 or padding check: DECRYPTION_FAILED; kex's\n"
      "confirmation value);\n"
      "2 usage or input error (with --local, any error of the command); 3 server\n"
      "unreachable or RPC error (gRPC code name and server message shown).\n\n"
      "Examples:\n"
      "  printf abc | smcrypt hash --alg sm3\n"
      "  smcrypt hash --local --alg sm3 msg.txt\n"
      "  smcrypt keygen --alg sm2 --out sm2.pem --pubout sm2pub.pem\n"
      "  smcrypt sign --key sm2.pem --out msg.sig msg.txt\n"
      "  smcrypt verify --key sm2pub.pem --sig msg.sig msg.txt\n"
      "  smcrypt keygen --alg sm4-gcm --out sm4.key\n"
      "  smcrypt encrypt --key sm4.key msg.txt | smcrypt decrypt --key sm4.key\n"
      "  smcrypt info\n");
  return out;
}

int Main(int argc, char** argv) {
  // gRPC's own log lines repeat what the CLI reports with the status; keep them unless
  // the user asks for them (GRPC_VERBOSITY=ERROR or DEBUG).
  setenv("GRPC_VERBOSITY", "NONE", /*overwrite=*/0);
  std::vector<Command> commands = AllCommands();
  std::vector<std::string> rest(argv + 1, argv + argc);
  if (rest.empty()) {
    std::fputs(GeneralHelp(commands).c_str(), stderr);
    return kExitUsage;
  }
  std::string name = rest.front();
  rest.erase(rest.begin());
  if (name == "help" || name == "--help" || name == "-h") {
    if (rest.empty()) {
      std::fputs(GeneralHelp(commands).c_str(), stdout);
      return kExitOk;
    }
    name = rest.front();
    rest = {"--help"};
  }
  if (name == "version" || name == "--version") {
    std::printf("smcrypt %s\n", SMCRYPT_VERSION);
    return kExitOk;
  }
  const Command* command = nullptr;
  for (const Command& c : commands) {
    if (c.name == name) command = &c;
  }
  if (command == nullptr) {
    std::fprintf(stderr, "smcrypt: unknown command \"%s\"; run 'smcrypt help' for the list\n",
                 TerminalSafe(name).c_str());
    return kExitUsage;
  }
  std::vector<FlagSpec> specs = command->flags;
  for (const FlagSpec& f : GroupFlags(command->groups)) {
    bool own = false;
    for (const FlagSpec& o : command->flags) own = own || o.name == f.name;
    if (!own) specs.push_back(f);
  }
  absl::StatusOr<Args> args = ParseArgs(specs, rest);
  if (args.ok() && args->Has("help")) {
    std::fputs(CommandHelp(*command).c_str(), stdout);
    return kExitOk;
  }
  absl::Status forms = args.ok() ? CheckFormAliases(command->name, *args) : absl::OkStatus();
  absl::StatusOr<int> rc = !args.ok()   ? absl::StatusOr<int>(args.status())
                           : !forms.ok() ? absl::StatusOr<int>(forms)
                                         : command->run(*args);
  if (rc.ok()) return *rc;
  std::fprintf(stderr, "smcrypt %s: %s\n", command->name.data(),
               DescribeError(rc.status()).c_str());
  int code = ExitCodeFor(rc.status());
  if (code == kExitUsage) {
    std::fprintf(stderr, "Run 'smcrypt %s --help' for usage.\n", command->name.data());
  }
  return code;
}

}  // namespace
}  // namespace smcrypt::cli

int main(int argc, char** argv) { return smcrypt::cli::Main(argc, argv); }
