// args: the small --option parser, help printer and error reporting shared by every ecjit subcommand.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ecjit::tools {

// One option of a subcommand: "--name VALUE" (or "--name=VALUE"), or a flag "--name" when
// value_name is empty.
struct Option {
  std::string name;        // without the leading "--"
  std::string value_name;  // e.g. "S"; empty for a flag
  std::string help;        // one line; mention the default here
};

// What a subcommand accepts, for parsing and for --help.
struct CommandDef {
  std::string name;      // e.g. "demo"
  std::string synopsis;  // e.g. "[--spec S] [--target T]"
  std::string summary;   // one line, shown by `ecjit --help`
  std::string details;   // paragraph(s) shown by `ecjit <cmd> --help`
  std::vector<Option> options;
  // Words that are not options (e.g. "PATH..."): empty = none accepted.
  std::string positional;
  // The exit statuses, printed last by --help.
  std::string exit_status = "0 success, 1 failure (a compile or I/O error, a mismatch), 2 bad arguments";
};

// The parsed options of one invocation. Every option may be given at most once.
class Args {
 public:
  // Parses argv[0..argc) (the words after the subcommand name). On failure returns false
  // and sets *error to a one-line message ("unknown option '--x'", ...). "--help" / "-h"
  // is always accepted and sets help().
  bool parse(const CommandDef &def, int argc, char **argv, std::string *error);

  bool help() const { return help_; }
  // The words that are not options, in order (only when CommandDef::positional is set).
  const std::vector<std::string> &positional() const { return positional_; }
  bool has(const std::string &name) const;
  // The value of an option, or `fallback` when it was not given.
  std::string get(const std::string &name, const std::string &fallback = "") const;

 private:
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

// Prints "usage: ecjit <name> <synopsis>", the details and the option table to stdout.
void print_help(const CommandDef &def);

// Parses one invocation of `def` into *args. Returns the exit code when the command is done
// already: 2 after a usage error (reported on stderr), 0 after printing --help; std::nullopt
// when the command should go on.
std::optional<int> parse_command(const CommandDef &def, int argc, char **argv, Args *args);

// Prints "ecjit <cmd>: error: <message>" (one line) to stderr and returns 2 (bad arguments).
int usage_error(const std::string &cmd, const std::string &message);
// Same line, returns 1 (a runtime failure: compilation, mismatch, I/O).
int runtime_error(const std::string &cmd, const std::string &message);

// Collapses a multi-line message (LLVM errors) into one line.
std::string one_line(const std::string &text);

// Unsigned decimal number (digits only: "0100" is one hundred); false on anything else or overflow.
bool parse_u64(const std::string &text, uint64_t *out);
// A byte count: "4096", "4K"/"4KiB" (x1024), "1M"/"1MiB", "1G"/"1GiB".
bool parse_size(const std::string &text, uint64_t *out);
// A positive number of seconds, e.g. "1", "0.25".
bool parse_seconds(const std::string &text, double *out);
// A comma-separated list of unsigned integers and inclusive ranges, e.g. "0,3,7" or "0-31,40"
// (no index twice).
bool parse_index_list(const std::string &text, std::vector<unsigned> *out, std::string *error);
// "0,3,7"
std::string join_indices(const std::vector<unsigned> &v, const char *sep = ",");

// A byte count for humans: "4 KiB", "1 MiB", "1536 B".
std::string format_bytes(uint64_t bytes);

}  // namespace ecjit::tools
