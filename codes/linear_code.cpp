// build_code: a CodeSpec's matrix code, built by its family's registry row (codes/families.h).
#include "codes/linear_code.h"

#include "codes/families.h"

namespace ecjit::codes {

Matrix LinearCode::generator() const {
  Matrix G(k + m, k);
  for (unsigned i = 0; i < k; ++i) G.at(i, i) = 1;
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < k; ++j) G.at(k + i, j) = parity.at(i, j);
  return G;
}

std::vector<uint64_t> LinearCode::generator_row(unsigned s) const {
  std::vector<uint64_t> row(k);
  for (unsigned j = 0; j < k; ++j) row[j] = generator_entry(s, j);
  return row;
}

Result<LinearCode> build_code(const CodeSpec &spec) {
  // Re-validate: a spec may have been assembled by hand rather than parsed.
  Result<CodeSpec> checked = CodeSpec::parse(spec.to_string());
  if (!checked.ok()) return checked.status();
  checked->chosen_by = spec.chosen_by;  // not in the text: an "rs:" spec's reason stays
  Result<Field> field = Field::make(spec.gf, spec.poly);
  if (!field.ok()) return field.status();
  const Field &f = *field;
  if (checked->bitmatrix())
    return Status(StatusCode::kInvalidSpec, checked->to_string() +
                                                " is a bit-matrix code (codes::build_bitmatrix_code)");
  const SymbolFamily *row = symbol_family(checked->family);
  if (!row || row->kind != CodecKind::kMatrix)
    return Status(StatusCode::kUnsupported,
                  checked->to_string() +
                      " is not a matrix code over a polynomial basis (reed-solomon-simd's additive-FFT "
                      "code; its symbols are Cantor-basis GF(2^16) elements): no parity-matrix kernels, "
                      "IR, AOT or MDS check; use Jit::codec() (codes/rs_fft.h for the reference)");
  return LinearCode{*checked, f, spec.k, spec.m, row->parity(f, *checked)};
}

Result<LinearCode> build_code(const std::string &spec_text) {
  Result<CodeSpec> spec = CodeSpec::parse(spec_text);
  if (!spec.ok()) return spec.status();
  return build_code(*spec);
}

}  // namespace ecjit::codes
