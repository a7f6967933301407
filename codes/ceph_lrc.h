// ceph-lrc:k=,m=,l=: the code Ceph's lrc plugin builds from its k, m, l profile, chunk for chunk.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codes/gf.h"
#include "codes/locality.h"
#include "codes/matrix.h"
#include "ecjit/code_spec.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// Ceph's lrc plugin, given k, m and l, generates (ErasureCodeLrc::parse_kml) g = (k + m) / l
// local groups of l + 1 chunks each: k/g data chunks, m/g chunks of a global layer (jerasure
// reed_sol_van over all k data chunks: ecjit's jerasure-vand:k=k,m=m), then one chunk of the
// group's local layer (jerasure reed_sol_van with m = 1 over the group's other l chunks: their
// XOR). So k=4, m=2, l=3 is the mapping "DD__DD__" with layers "DDc_DDc_", "DDDc____",
// "____DDDc": 8 chunks.
//
// ecjit's shards: 0..k-1 the data chunks in order, then the other chunks in Ceph's chunk order
// (group by group, its global chunks then its local one); ceph_lrc_chunk() maps a shard to its
// chunk index (the N of Ceph's object.N files). A spec has m_total = m + g parity shards.
// Rules, as the plugin's: l divides k + m, g divides k (and so m); GF(2^8) (jerasure's w=8).
Status check_ceph_lrc(const CodeSpec &spec);
// Reads m= (Ceph's: the global parities, kept in spec->r) and l= into the spec; spec->m
// becomes every parity shard, m + (k + m) / l.
Status read_ceph_lrc_keys(const std::map<std::string, std::string> &kv, CodeSpec *spec);
std::string write_ceph_lrc_keys(const CodeSpec &spec);
// The (m + g) x k parity matrix of a checked spec, rows in ecjit's shard order.
Matrix ceph_lrc_parity(const Field &field, const CodeSpec &spec);
// The local groups: each group's data, global and local shards, whose XOR is zero.
std::vector<LocalCheck> ceph_lrc_checks(const CodeSpec &spec);
// Ceph's chunk index of ecjit shard s.
unsigned ceph_lrc_chunk(const CodeSpec &spec, unsigned s);

}  // namespace ecjit::codes
