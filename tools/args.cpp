// args: option parsing, --help output, one-line error reporting and number parsing for the ecjit tool.
#include "tools/args.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

namespace ecjit::tools {
namespace {

const Option *find_option(const CommandDef &def, const std::string &name) {
  for (const Option &o : def.options)
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace

bool Args::parse(const CommandDef &def, int argc, char **argv, std::string *error) {
  for (int i = 0; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--help" || word == "-h") {
      help_ = true;
      continue;
    }
    if (!def.positional.empty() && (word.size() < 2 || word[0] != '-')) {
      positional_.push_back(word);
      continue;
    }
    if (word.size() < 3 || word.compare(0, 2, "--") != 0) {
      *error = "unexpected argument '" + word + "' (options start with --; see --help)";
      return false;
    }
    std::string name = word.substr(2), value;
    bool inline_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      inline_value = true;
    }
    const Option *opt = find_option(def, name);
    if (!opt) {
      *error = "unknown option '--" + name + "' (see ecjit " + def.name + " --help)";
      return false;
    }
    if (has(name)) {
      *error = "option '--" + name + "' given more than once";
      return false;
    }
    if (opt->value_name.empty()) {
      if (inline_value) {
        *error = "option '--" + name + "' takes no value";
        return false;
      }
      values_.emplace_back(name, "");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        *error = "option '--" + name + "' needs a value (" + opt->value_name + ")";
        return false;
      }
      value = argv[++i];
    }
    if (value.empty()) {
      *error = "option '--" + name + "' has an empty value";
      return false;
    }
    values_.emplace_back(name, value);
  }
  return true;
}

bool Args::has(const std::string &name) const {
  return std::any_of(values_.begin(), values_.end(),
                     [&](const auto &kv) { return kv.first == name; });
}

std::string Args::get(const std::string &name, const std::string &fallback) const {
  for (const auto &kv : values_)
    if (kv.first == name) return kv.second;
  return fallback;
}

void print_help(const CommandDef &def) {
  std::printf("usage: ecjit %s %s\n\n%s\n", def.name.c_str(), def.synopsis.c_str(),
              def.summary.c_str());
  if (!def.details.empty()) std::printf("\n%s\n", def.details.c_str());
  std::printf("\noptions:\n");
  size_t width = 6;  // "--help"
  for (const Option &o : def.options)
    width = std::max(width, 2 + o.name.size() + (o.value_name.empty() ? 0 : 1 + o.value_name.size()));
  for (const Option &o : def.options) {
    std::string left = "--" + o.name + (o.value_name.empty() ? "" : " " + o.value_name);
    std::printf("  %-*s  %s\n", int(width), left.c_str(), o.help.c_str());
  }
  std::printf("  %-*s  %s\n", int(width), "--help", "print this help");
  std::printf("\nexit status: %s\n", def.exit_status.c_str());
}

std::optional<int> parse_command(const CommandDef &def, int argc, char **argv, Args *args) {
  std::string error;
  if (!args->parse(def, argc, argv, &error)) return usage_error(def.name, error);
  if (args->help()) {
    print_help(def);
    return 0;
  }
  return std::nullopt;
}

int usage_error(const std::string &cmd, const std::string &message) {
  std::fprintf(stderr, "ecjit %s: error: %s\n", cmd.c_str(), one_line(message).c_str());
  return 2;
}

int runtime_error(const std::string &cmd, const std::string &message) {
  std::fprintf(stderr, "ecjit %s: error: %s\n", cmd.c_str(), one_line(message).c_str());
  return 1;
}

std::string one_line(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += "; ";
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

bool parse_u64(const std::string &text, uint64_t *out) {
  if (text.empty() || text[0] == '-' || text[0] == '+' || text[0] == ' ') return false;
  errno = 0;
  char *end = nullptr;
  // Decimal only: "0100" is one hundred, not an octal 64 (and "09" is not an error).
  for (char ch : text)
    if (ch < '0' || ch > '9') return false;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  *out = uint64_t(v);
  return true;
}

bool parse_size(const std::string &text, uint64_t *out) {
  static const struct {
    const char *suffix;
    uint64_t mult;
  } kSuffixes[] = {{"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
                   {"K", 1ull << 10},   {"M", 1ull << 20},   {"G", 1ull << 30}};
  for (const auto &s : kSuffixes) {
    const std::string suf = s.suffix;
    if (text.size() > suf.size() && text.compare(text.size() - suf.size(), suf.size(), suf) == 0) {
      uint64_t v = 0;
      if (!parse_u64(text.substr(0, text.size() - suf.size()), &v)) return false;
      if (v > UINT64_MAX / s.mult) return false;
      *out = v * s.mult;
      return true;
    }
  }
  return parse_u64(text, out);
}

bool parse_seconds(const std::string &text, double *out) {
  if (text.empty()) return false;
  errno = 0;
  char *end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !(v > 0) || v > 3600) return false;
  *out = v;
  return true;
}

bool parse_index_list(const std::string &text, std::vector<unsigned> *out, std::string *error) {
  out->clear();
  std::unordered_set<unsigned> seen;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    // "a" or "a-b" (a <= b, both included)
    const size_t dash = item.find('-');
    uint64_t lo = 0, hi = 0;
    const bool ok = dash == std::string::npos
                        ? parse_u64(item, &lo) && (hi = lo, true)
                        : parse_u64(item.substr(0, dash), &lo) && parse_u64(item.substr(dash + 1), &hi) && lo <= hi;
    if (!ok || hi > 1000000 || out->size() + (hi - lo) >= 1000000) {
      *error = "'" + item + "' in '" + text + "' is not a shard index or a range a-b (a <= b)";
      return false;
    }
    for (uint64_t v = lo; v <= hi; ++v) {
      if (!seen.insert(unsigned(v)).second) {
        *error = "shard " + std::to_string(v) + " listed twice in '" + text + "'";
        return false;
      }
      out->push_back(unsigned(v));
    }
    start = comma + 1;
  }
  return true;
}

std::string join_indices(const std::vector<unsigned> &v, const char *sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

std::string format_bytes(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace ecjit::tools
