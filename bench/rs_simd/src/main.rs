//! rs_simd: reed-solomon-simd 3.x (ReedSolomonEncoder / ReedSolomonDecoder, i.e. the default
//! engine and rate) as an oracle for ecjit's rs-fft reference (codes/rs_fft.h).
//!
//! Commands (all shard data raw bytes, shards concatenated in index order):
//!   rs_simd kat                 print the golden vectors (test/data/rs_fft_kat.txt) to stdout
//!   rs_simd kat-vand            the same for reed-solomon-erasure 6's galois_8::ReedSolomon
//!                               (test/data/rs_vand_rse_kat.txt: ecjit's rs-vand)
//!   rs_simd encode K M BYTES    stdin: K originals; stdout: M recovery shards
//!   rs_simd decode K M BYTES    stdin: K+M presence bytes (0 or 1; originals then recovery),
//!                               then the present shards; stdout: the missing originals
//!   rs_simd gen K M BYTES SEED  stdout: the K originals of `originals(SEED, K, M, BYTES)`
//! Exit status: 0 ok, 1 crate error (message on stderr), 2 usage or I/O error.

use reed_solomon_simd::{ReedSolomonDecoder, ReedSolomonEncoder};
use std::io::{Read, Write};
use std::process::exit;

/// Seed of the known-answer vectors.
const KAT_SEED: u64 = 0x0ec1_7f17_5eed_2016;

/// (original_count, recovery_count) of the known-answer vectors. Covers both rates, the
/// equal-power-of-two tie rule (5:6 high, 6:5 low; 100:120 high, 120:100 low), and
/// several chunks on each side (300:50 high, 20:100 low).
const KAT_COUNTS: &[(usize, usize)] = &[
    (1, 1), (2, 2), (3, 5), (4, 2), (5, 6), (6, 5), (10, 4), (32, 32), (100, 20),
    (20, 100), (100, 120), (120, 100), (300, 50),
];

/// Shard lengths of the known-answer vectors: whole 64-byte chunks and partial tails.
const KAT_BYTES: &[usize] = &[2, 64, 98, 128];

/// Shards (all of them) are printed in full when k + m <= this and BYTES <= 128.
const KAT_FULL_MAX_SHARDS: usize = 11;

/// splitmix64 (Steele, Lea, Flood 2014): state += golden gamma, then the finaliser.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The K originals of one case: one splitmix64 stream seeded with
/// `seed ^ (k << 40) ^ (m << 20) ^ bytes`, each output giving 8 bytes little-endian;
/// shard i is bytes [i * BYTES, (i + 1) * BYTES) of that stream.
fn originals(seed: u64, k: usize, m: usize, bytes: usize) -> Vec<Vec<u8>> {
    let mut rng = SplitMix64(seed ^ ((k as u64) << 40) ^ ((m as u64) << 20) ^ bytes as u64);
    let mut stream = Vec::with_capacity(k * bytes + 8);
    while stream.len() < k * bytes {
        stream.extend_from_slice(&rng.next().to_le_bytes());
    }
    stream[..k * bytes].chunks(bytes).map(|c| c.to_vec()).collect()
}

/// 64-bit FNV-1a.
fn fnv1a64(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

fn fail(code: i32, msg: &str) -> ! {
    eprintln!("rs_simd: {msg}");
    exit(code)
}

fn encode(k: usize, m: usize, bytes: usize, orig: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut enc = ReedSolomonEncoder::new(k, m, bytes).unwrap_or_else(|e| fail(1, &e.to_string()));
    for o in orig {
        enc.add_original_shard(o).unwrap_or_else(|e| fail(1, &e.to_string()));
    }
    let res = enc.encode().unwrap_or_else(|e| fail(1, &e.to_string()));
    res.recovery_iter().map(|r| r.to_vec()).collect()
}

/// (data, parity) counts and shard lengths of the rs-vand vectors (reed-solomon-erasure takes
/// any length and k + m <= 256): the shapes of klauspost's (test/data/rs_vand_klauspost_kat.txt).
const KAT_VAND_COUNTS: &[(usize, usize)] = &[
    (1, 1), (2, 1), (3, 5), (4, 2), (6, 3), (10, 4), (12, 4), (17, 3), (20, 4), (32, 32),
    (128, 128), (200, 50), (255, 1),
];
const KAT_VAND_BYTES: &[usize] = &[1, 7, 64, 1000];

/// reed-solomon-erasure's GF(2^8) codec: its Vandermonde-derived matrix (ecjit's rs-vand).
fn encode_vand(k: usize, m: usize, _bytes: usize, orig: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let rs = reed_solomon_erasure::galois_8::ReedSolomon::new(k, m).unwrap_or_else(|e| fail(1, &format!("{e:?}")));
    let mut shards: Vec<Vec<u8>> = orig.to_vec();
    shards.extend((0..m).map(|_| vec![0u8; orig[0].len()]));
    rs.encode(&mut shards).unwrap_or_else(|e| fail(1, &format!("{e:?}")));
    shards.split_off(k)
}

/// Prints the vectors (recovery shards of the originals by `enc`) after `header`.
fn kat(header: &str, counts: &[(usize, usize)], lengths: &[usize], enc: fn(usize, usize, usize, &[Vec<u8>]) -> Vec<Vec<u8>>) {
    let mut out = String::from(header);
    out.push_str(
        "# originals: splitmix64 seeded with seed ^ (k << 40) ^ (m << 20) ^ bytes, 8 bytes per\n\
         # output little-endian, shard i = stream bytes [i*bytes, (i+1)*bytes).\n\
         # case K M BYTES / orig <fnv1a64 of all originals concatenated> /\n\
         # rec INDEX <fnv1a64 of the shard> [<shard hex> when small] / end\n",
    );
    out.push_str(&format!("seed 0x{KAT_SEED:016x}\n"));
    for &(k, m) in counts {
        for &bytes in lengths {
            let orig = originals(KAT_SEED, k, m, bytes);
            let rec = enc(k, m, bytes, &orig);
            out.push_str(&format!("case {k} {m} {bytes}\n"));
            out.push_str(&format!("orig {:016x}\n", fnv1a64(&orig.concat())));
            let full = k + m <= KAT_FULL_MAX_SHARDS && bytes <= 128;
            for (i, r) in rec.iter().enumerate() {
                if full {
                    out.push_str(&format!("rec {i} {:016x} {}\n", fnv1a64(r), hex(r)));
                } else {
                    out.push_str(&format!("rec {i} {:016x}\n", fnv1a64(r)));
                }
            }
            out.push_str("end\n");
        }
    }
    std::io::stdout()
        .write_all(out.as_bytes())
        .unwrap_or_else(|e| fail(2, &e.to_string()));
}

fn read_stdin(len: usize) -> Vec<u8> {
    let mut buf = Vec::new();
    std::io::stdin()
        .read_to_end(&mut buf)
        .unwrap_or_else(|e| fail(2, &e.to_string()));
    if buf.len() != len {
        fail(2, &format!("expected {len} bytes on stdin, got {}", buf.len()));
    }
    buf
}

fn write_stdout(shards: &[Vec<u8>]) {
    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
    for s in shards {
        w.write_all(s).unwrap_or_else(|e| fail(2, &e.to_string()));
    }
    w.flush().unwrap_or_else(|e| fail(2, &e.to_string()));
}

fn cmd_encode(k: usize, m: usize, bytes: usize) {
    let input = read_stdin(k * bytes);
    let orig: Vec<Vec<u8>> = input.chunks(bytes).map(|c| c.to_vec()).collect();
    write_stdout(&encode(k, m, bytes, &orig));
}

fn cmd_decode(k: usize, m: usize, bytes: usize) {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .unwrap_or_else(|e| fail(2, &e.to_string()));
    if input.len() < k + m {
        fail(2, "stdin shorter than the presence bytes");
    }
    let (present, data) = input.split_at(k + m);
    let count = present.iter().filter(|&&p| p != 0).count();
    if data.len() != count * bytes {
        fail(2, &format!("expected {} shard bytes, got {}", count * bytes, data.len()));
    }
    let mut dec = ReedSolomonDecoder::new(k, m, bytes).unwrap_or_else(|e| fail(1, &e.to_string()));
    let mut shards = data.chunks(bytes);
    for (i, &p) in present.iter().enumerate() {
        if p == 0 {
            continue;
        }
        let s = shards.next().unwrap();
        let r = if i < k { dec.add_original_shard(i, s) } else { dec.add_recovery_shard(i - k, s) };
        r.unwrap_or_else(|e| fail(1, &e.to_string()));
    }
    let res = dec.decode().unwrap_or_else(|e| fail(1, &e.to_string()));
    let missing: Vec<Vec<u8>> = (0..k)
        .filter(|&i| present[i] == 0)
        .map(|i| {
            res.restored_original(i)
                .unwrap_or_else(|| fail(1, &format!("original {i} not restored")))
                .to_vec()
        })
        .collect();
    write_stdout(&missing);
}

/// `bench K M BYTES SECONDS [LOST]`: the crate's own encode and decode speed on one thread,
/// with an encoder / decoder reused across calls (reset), as a caller keeping them would.
/// Decode loses LOST originals (default min(M, K)) and rebuilds them from the first LOST
/// recovery shards. Prints one line:
/// `encode_gbps=E decode_gbps=D` with GB = 1e9 bytes of K x BYTES original data per call.
fn cmd_bench(k: usize, m: usize, bytes: usize, seconds: f64, lost: usize) {
    let orig = originals(0xbe7c4, k, m, bytes);
    let rec = encode(k, m, bytes, &orig);
    let mut enc = ReedSolomonEncoder::new(k, m, bytes).unwrap_or_else(|e| fail(1, &e.to_string()));
    let time = |f: &mut dyn FnMut()| -> f64 {
        f(); // warm up
        let start = std::time::Instant::now();
        let mut calls = 0u64;
        while start.elapsed().as_secs_f64() < seconds {
            f();
            calls += 1;
        }
        (k * bytes) as f64 * calls as f64 / start.elapsed().as_secs_f64() / 1e9
    };
    let e = time(&mut || {
        enc.reset(k, m, bytes).unwrap_or_else(|e| fail(1, &e.to_string()));
        for s in &orig {
            enc.add_original_shard(s).unwrap_or_else(|e| fail(1, &e.to_string()));
        }
        let r = enc.encode().unwrap_or_else(|e| fail(1, &e.to_string()));
        std::hint::black_box(r.recovery(0));
    });
    let lost = lost.min(m).min(k);
    let mut dec = ReedSolomonDecoder::new(k, m, bytes).unwrap_or_else(|e| fail(1, &e.to_string()));
    let d = time(&mut || {
        dec.reset(k, m, bytes).unwrap_or_else(|e| fail(1, &e.to_string()));
        for (i, s) in orig.iter().enumerate().skip(lost) {
            dec.add_original_shard(i, s).unwrap_or_else(|e| fail(1, &e.to_string()));
        }
        for (j, s) in rec.iter().enumerate().take(lost) {
            dec.add_recovery_shard(j, s).unwrap_or_else(|e| fail(1, &e.to_string()));
        }
        let r = dec.decode().unwrap_or_else(|e| fail(1, &e.to_string()));
        std::hint::black_box(r.restored_original(0));
    });
    println!("encode_gbps={e:.3} decode_gbps={d:.3}");
}

fn num(s: Option<&String>, what: &str) -> u64 {
    let s = s.unwrap_or_else(|| fail(2, &format!("missing {what}")));
    let r = if let Some(h) = s.strip_prefix("0x") { u64::from_str_radix(h, 16) } else { s.parse() };
    r.unwrap_or_else(|_| fail(2, &format!("bad {what}: {s}")))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cmd = args.get(1).map(String::as_str).unwrap_or("");
    if cmd == "kat" {
        return kat(
            "# rs_fft_kat.txt: recovery shards of reed-solomon-simd 3.x (ReedSolomonEncoder) for ecjit's\n\
             # rs-fft reference (test/rs_fft_test.cpp). Generated by bench/rs_simd; regenerate with\n\
             #   bench/rs_simd/build.sh && bench/rs_simd/target/release/rs_simd kat > test/data/rs_fft_kat.txt\n",
            KAT_COUNTS,
            KAT_BYTES,
            encode,
        );
    }
    if cmd == "kat-vand" {
        return kat(
            "# rs_vand_rse_kat.txt: recovery shards of reed-solomon-erasure 6 (galois_8::ReedSolomon) for\n\
             # ecjit's rs-vand (test/peer_kat_test.cpp). Generated by bench/rs_simd; regenerate with\n\
             #   bench/rs_simd/build.sh && bench/rs_simd/target/release/rs_simd kat-vand > test/data/rs_vand_rse_kat.txt\n",
            KAT_VAND_COUNTS,
            KAT_VAND_BYTES,
            encode_vand,
        );
    }
    let k = num(args.get(2), "K") as usize;
    let m = num(args.get(3), "M") as usize;
    let bytes = num(args.get(4), "BYTES") as usize;
    match cmd {
        "encode" => cmd_encode(k, m, bytes),
        "bench" => cmd_bench(
            k,
            m,
            bytes,
            num(args.get(5), "SECONDS") as f64,
            args.get(6).map_or(usize::MAX, |_| num(args.get(6), "LOST") as usize),
        ),
        "decode" => cmd_decode(k, m, bytes),
        "gen" => write_stdout(&originals(num(args.get(5), "SEED"), k, m, bytes)),
        _ => fail(2, "usage: rs_simd kat | kat-vand | encode K M BYTES | decode K M BYTES | gen K M BYTES SEED"),
    }
}
