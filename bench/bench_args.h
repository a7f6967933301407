// bench_args: list and size arguments of the benchmark programs that are not Google Benchmark ones.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ecjit::bench {

// "4K,64K,1M" -> {"4K", "64K", "1M"}.
inline std::vector<std::string> split_list(const std::string &s) {
  std::vector<std::string> out;
  for (size_t a = 0;;) {
    const size_t b = s.find(',', a);
    out.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) return out;
    a = b + 1;
  }
}

// A positive byte count: digits, then nothing, K or M (either case). False otherwise.
inline bool parse_size(const std::string &s, size_t *out) {
  char *end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str() || v == 0) return false;
  const std::string unit = end;
  const unsigned shift = unit.empty() ? 0 : (unit == "K" || unit == "k") ? 10 : (unit == "M" || unit == "m") ? 20 : 64;
  if (shift == 64) return false;
  *out = size_t(v) << shift;
  return true;
}

// The value of option argv[*i] (the next word; *i moves past it). Exits with status 2 and a
// message naming `program` when there is none.
inline std::string option_value(const char *program, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) {
    std::fprintf(stderr, "%s: %s needs a value\n", program, argv[*i]);
    std::exit(2);
  }
  return argv[++*i];
}

}  // namespace ecjit::bench
