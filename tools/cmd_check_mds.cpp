// `ecjit check-mds`: is a code MDS (codes::check_mds)? --table: up to which k, m each family is MDS.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "codes/families.h"
#include "codes/linear_code.h"
#include "codes/mds.h"
#include "codes/recoverability.h"
#include "codes/xor_families.h"
#include "tools/args.h"
#include "tools/commands.h"

namespace ecjit::tools {
namespace {

const char kCmd[] = "check-mds";

// Default budgets: one check of --spec, and each of the many checks behind --table.
constexpr uint64_t kSpecBudget = 2000000;
constexpr uint64_t kTableBudget = 10000;

CommandDef check_mds_def() {
  CommandDef d;
  d.name = kCmd;
  d.synopsis = "--spec S [--budget N]\n       ecjit check-mds --table [--max-k K] [--budget N]";
  d.summary = "check that a code is MDS; --table: which families are MDS up to which k, m";
  d.details =
      "A systematic code [I; A] is MDS (any m lost shards can be rebuilt) iff every square\n"
      "submatrix of its m x k parity matrix A is invertible. The check is exhaustive when there\n"
      "are at most --budget such submatrices, otherwise it tests --budget of them drawn with a\n"
      "fixed seed (a sampled pass is evidence, not proof). For a code that is not MDS (an lrc code,\n"
      "say) it then counts the erasure patterns of 1..m losses the code decodes (every pattern\n"
      "while there are at most --budget, else a sample) and the shards one lost shard reads.\n"
      "\n"
      "--table: for each family over GF(2^8) and m = 1..8 (raidz: 1..3), the largest k <= --max-k\n"
      "such that the code is MDS for every k' <= k, and up to which k every check was exhaustive.";
  d.options = {
      {"spec", "S", "code to check, e.g. isal-rs:k=20,m=6"},
      {"budget", "N", "submatrices checked at most per code (default " + std::to_string(kSpecBudget) +
                          ", with --table " + std::to_string(kTableBudget) + ")"},
      {"table", "", "print the family x m table instead of checking one code"},
      {"max-k", "K", "with --table: largest k tried (default 64; stops earlier at a family's field limit)"},
  };
  d.exit_status = "0 MDS (--table: the table printed), 1 not MDS, 2 bad arguments";
  return d;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A non-MDS code: the patterns it decodes per number of losses, and what one loss reads,
// beside an MDS code of the same k and m (RS: every pattern of up to m losses, k reads).
void print_recoverability(const codes::LinearCode &code, uint64_t budget) {
  const codes::Recoverability r = codes::recoverability(code, budget);
  std::printf("\nerasure patterns decoded (an MDS code of the same k = %u, m = %u, e.g. rs-cauchy, decodes all):\n",
              code.k, code.m);
  std::printf("  %-6s %12s %12s %9s\n", "lost", "patterns", "decoded", "share");
  for (const codes::LossCount &c : r.by_losses)
    std::printf("  %-6u %12llu %12llu %8.1f%%%s\n", c.losses, (unsigned long long)c.patterns,
                (unsigned long long)c.recoverable, c.checked ? 100.0 * double(c.recoverable) / double(c.checked) : 0.0,
                c.checked < c.patterns ? " (sampled)" : "");
  if (r.local_shards)
    std::printf("one lost shard reads: %u of the %u shards by a local check, %.1f on average (worst %u); "
                "over all shards %.1f on average (an MDS code: %u)\n",
                r.local_shards, code.n(), r.local_reads_avg, r.local_reads_max, r.reads_avg, code.k);
  else
    std::printf("one lost shard reads %u shards (no local checks)\n", code.k);
}

int run_spec(const Args &args, uint64_t budget) {
  if (args.has("max-k")) return usage_error(kCmd, "--max-k applies to --table only");
  const std::string text = args.get("spec");
  if (Result<CodeSpec> spec = CodeSpec::parse(text); spec.ok() && spec->bitmatrix()) {
    Result<codes::BitMatrixCode> bits = codes::build_bitmatrix_code(*spec);
    if (!bits.ok()) return usage_error(kCmd, "spec '" + text + "': " + bits.status().message());
    const auto t0 = std::chrono::steady_clock::now();
    const codes::MdsReport rep = codes::check_mds(*bits, budget);
    std::printf("%s (k = %u, m = %u, w = %u bit-matrix): %s [%.2f s]\n", bits->spec.to_string().c_str(), bits->k,
                bits->m, bits->w, rep.to_string().c_str(), seconds_since(t0));
    if (const CodeSpec resolved = codes::resolved_spec(bits->spec); !(resolved == bits->spec))
      std::printf("resolved: %s (the search's result: store this form with the data)\n",
                  resolved.to_string().c_str());
    return rep.mds ? 0 : 1;
  }
  Result<codes::LinearCode> code = codes::build_code(text);
  if (!code.ok()) return usage_error(kCmd, "spec '" + text + "': " + code.status().message());
  const auto t0 = std::chrono::steady_clock::now();
  const codes::MdsReport rep = codes::check_mds(*code, budget);
  std::printf("%s (k = %u, m = %u, GF(2^%u)): %s [%.2f s]\n", code->spec.to_string().c_str(),
              code->k, code->m, code->field.bits(), rep.to_string().c_str(), seconds_since(t0));
  if (!rep.mds) {
    // The singular minor's columns lost, together with every parity row outside it: m
    // erasures whose surviving k shards do not determine the data.
    std::vector<unsigned> lost(rep.bad_cols.begin(), rep.bad_cols.end());
    for (unsigned r = 0; r < code->m; ++r)
      if (std::find(rep.bad_rows.begin(), rep.bad_rows.end(), r) == rep.bad_rows.end())
        lost.push_back(code->k + r);
    std::printf("cannot rebuild after losing shards {%s} (%zu <= m = %u erasures)\n",
                join_indices(lost).c_str(), lost.size(), code->m);
    print_recoverability(*code, budget);
  }
  return rep.mds ? 0 : 1;
}

struct Cell {
  unsigned mds_up_to = 0;          // largest k with every k' <= k MDS
  unsigned exhaustive_up_to = 0;   // largest k with every check up to it exhaustive
  bool field_limit = false;        // stopped because the family rejects larger k
  std::string failure;             // first failing k and its singular submatrix
};

Cell scan(const std::string &family, unsigned m, unsigned max_k, uint64_t budget) {
  Cell c;
  bool all_exhaustive = true;
  for (unsigned k = 1; k <= max_k; ++k) {
    const std::string spec = family + ":k=" + std::to_string(k) + ",m=" + std::to_string(m) + ",gf=8";
    Result<codes::LinearCode> code = codes::build_code(spec);
    if (!code.ok()) {
      c.field_limit = true;
      break;
    }
    const codes::MdsReport rep = codes::check_mds(*code, budget);
    if (!rep.mds) {
      c.failure = spec + ": " + rep.to_string();
      break;
    }
    c.mds_up_to = k;
    all_exhaustive = all_exhaustive && rep.exhaustive;
    if (all_exhaustive) c.exhaustive_up_to = k;
  }
  return c;
}

int run_table(const Args &args, uint64_t budget) {
  if (args.has("spec")) return usage_error(kCmd, "--spec and --table exclude each other");
  uint64_t max_k = 64;
  if (args.has("max-k") && (!parse_u64(args.get("max-k"), &max_k) || max_k < 1 || max_k > 4096))
    return usage_error(kCmd, "--max-k '" + args.get("max-k") + "' is not a number in 1..4096");
  constexpr unsigned kMaxM = 8;
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("MDS over GF(2^8): largest k <= %llu with every k' <= k MDS, as K/E where every check\n"
              "up to k = E was exhaustive (beyond it sampled, %llu submatrices per code)\n\n",
              (unsigned long long)max_k, (unsigned long long)budget);
  std::printf("%-14s", "family");
  for (unsigned m = 1; m <= kMaxM; ++m) std::printf(" %9s", ("m=" + std::to_string(m)).c_str());
  std::printf("\n");
  std::vector<std::string> notes;
  // Every matrix family the registry has whose matrix follows from k and m (not "matrix",
  // which takes its entries); an m the family refuses (raidz past 3) is "-".
  for (const codes::SymbolFamily &f : codes::symbol_families()) {
    // (and not lrc, whose shape is l and r, and which is not meant to be MDS)
    if (f.kind != codes::CodecKind::kMatrix || f.family == CodeFamily::kMatrix || f.read_keys) continue;
    std::printf("%-14s", f.name);
    for (unsigned m = 1; m <= kMaxM; ++m) {
      if (!CodeSpec::parse(std::string(f.name) + ":k=1,m=" + std::to_string(m)).ok()) {
        std::printf(" %9s", "-");
        continue;
      }
      const Cell c = scan(f.name, m, unsigned(max_k), budget);
      std::string cell = std::to_string(c.mds_up_to) + "/" + std::to_string(c.exhaustive_up_to);
      if (!c.failure.empty()) cell += "!";
      if (c.field_limit) cell += "|";
      std::printf(" %9s", cell.c_str());
      std::fflush(stdout);
      if (!c.failure.empty()) notes.push_back(c.failure);
      if (c.field_limit)
        notes.push_back(std::string(f.name) + " m=" + std::to_string(m) + ": k > " +
                        std::to_string(c.mds_up_to) + " is rejected by the family (field limit)");
    }
    std::printf("\n");
  }
  std::printf("\n! = the next k is not MDS; | = the family allows no larger k. First failures:\n");
  for (const std::string &n : notes) std::printf("  %s\n", n.c_str());
  std::printf("[%.1f s]\n", seconds_since(t0));
  return 0;
}

}  // namespace

int cmd_check_mds(int argc, char **argv) {
  const CommandDef def = check_mds_def();
  Args args;
  if (std::optional<int> done = parse_command(def, argc, argv, &args)) return *done;
  const bool table = args.has("table");
  uint64_t budget = table ? kTableBudget : kSpecBudget;
  if (args.has("budget") && (!parse_u64(args.get("budget"), &budget) || budget == 0))
    return usage_error(kCmd, "--budget '" + args.get("budget") + "' is not a positive number");
  if (table) return run_table(args, budget);
  if (!args.has("spec")) return usage_error(kCmd, "give --spec S or --table (see --help)");
  return run_spec(args, budget);
}

}  // namespace ecjit::tools
