// ISA-L's GF(2^8) basics, bit for bit: gf_mul/gf_inv, the 32-byte nibble tables, matrix generators and inversion.
#pragma once

#include <cstdint>

namespace ecjit::isal {

// GF(2^8) with polynomial 0x11d, as ISA-L's gf_mul / gf_inv (gf_inv(0) == 0).
uint8_t gf_mul(uint8_t a, uint8_t b);
uint8_t gf_inv(uint8_t a);

// The 32-byte table of coefficient c, ISA-L's layout (gf_vect_mul_init): bytes 0..15 are
// c * {0..15}, bytes 16..31 are c * {0x00, 0x10, .., 0xf0}. Static storage, never freed.
const uint8_t *nibble_table(uint8_t c);

// Whether `t` is exactly the table of its own coefficient t[1] (what ec_init_tables and
// gf_vect_mul_init write).
bool is_genuine_table(const uint8_t *t);

// The full product table of one 32-byte table: p[b] = t[b & 15] ^ t[16 + (b >> 4)]. For a
// genuine table this is c * b for every byte b.
void expand_nibble_table(const uint8_t *t, uint8_t p[256]);
// p[b] = gf_mul(b, c).
void expand_coefficient(uint8_t c, uint8_t p[256]);

// ISA-L's gf_gen_rs_matrix / gf_gen_cauchy1_matrix / gf_invert_matrix, same algorithm and
// the same side effects (gf_invert_matrix reduces in_mat in place; -1 when singular).
void gen_rs_matrix(uint8_t *a, int m, int k);
void gen_cauchy1_matrix(uint8_t *a, int m, int k);
int invert_matrix(uint8_t *in_mat, uint8_t *out_mat, int n);

}  // namespace ecjit::isal
