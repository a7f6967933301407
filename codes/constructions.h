// The parity-matrix constructions of each code family (one function per family).
#pragma once

#include "codes/gf.h"
#include "codes/matrix.h"

namespace ecjit::codes {

// Nešković 2018, eq. 2.25-2.27: the (k+m) x k Vandermonde matrix on the points 0..k+m-1,
// brought to systematic form by column operations (V * inv(V_top)); returns the m x k
// bottom. Needs k + m <= 2^l.
Matrix rs_vandermonde_parity(const Field &f, unsigned k, unsigned m);

// Cauchy matrix a_ij = 1 / (x_i + y_j), x_i = i, y_j = m + j (Jerasure's
// cauchy_original_coding_matrix). Needs k + m <= 2^l.
Matrix rs_cauchy_parity(const Field &f, unsigned k, unsigned m);

// ISA-L gf_gen_rs_matrix: parity row r is (2^r)^j. GF(2^8) only.
Matrix isal_rs_parity(const Field &f, unsigned k, unsigned m);

// ISA-L gf_gen_cauchy1_matrix: parity row i, column j is 1 / ((k + i) ^ j). GF(2^8) only.
Matrix isal_cauchy_parity(const Field &f, unsigned k, unsigned m);

// Jerasure reed_sol_vandermonde_coding_matrix(k, m, w): the extended Vandermonde
// distribution matrix made systematic, then its first parity row and column scaled to 1.
Matrix jerasure_vandermonde_parity(const Field &f, unsigned k, unsigned m);

// RAID-Z (Nešković 2018, eq. 6.2): P = 1, Q = alpha^(k-1-j), R = (alpha^2)^(k-1-j), alpha = X.
Matrix raidz_parity(const Field &f, unsigned k, unsigned m);

}  // namespace ecjit::codes
