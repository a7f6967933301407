// RS(k, m) encode through this crate against reed-solomon-erasure 6 (galois_8, the same code),
// rs-fft:k=32,m=32 against reed-solomon-simd 3 (likewise), one thread, alternating rounds,
// medians; the binding's own cost against the C API directly.
//   cargo run --release --example bench [-- K M SHARD_BYTES SECONDS]
use std::time::Instant;

fn time<F: FnMut()>(seconds: f64, mut f: F) -> f64 {
    f();
    let mut calls = 0u64;
    let t0 = Instant::now();
    while t0.elapsed().as_secs_f64() < seconds {
        f();
        calls += 1;
    }
    t0.elapsed().as_secs_f64() / calls as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: usize| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (k, m, len) = (arg(0, 10), arg(1, 4), arg(2, 65536));
    let seconds = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(0.3);
    let data: Vec<Vec<u8>> = (0..k).map(|i| (0..len).map(|j| (i * 131 + j * 7) as u8).collect()).collect();
    let codec = ecjit::Codec::new(&format!("rs-vand:k={},m={}", k, m)).unwrap();
    let peer = reed_solomon_erasure::galois_8::ReedSolomon::new(k, m).unwrap();
    let mut parity = vec![vec![0u8; len]; m];
    let mut shards: Vec<Vec<u8>> = data.iter().cloned().chain((0..m).map(|_| vec![0u8; len])).collect();
    let raw = {
        // the C API directly, as the binding calls it
        let d: Vec<*const u8> = data.iter().map(|s| s.as_ptr()).collect();
        let p: Vec<*mut u8> = parity.iter_mut().map(|s| s.as_mut_ptr()).collect();
        (d, p)
    };
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut direct = Vec::new();
    for _ in 0..5 {
        ours.push(time(seconds, || codec.encode(&data, &mut parity).unwrap()));
        theirs.push(time(seconds, || peer.encode(&mut shards).unwrap()));
        direct.push(time(seconds, || unsafe {
            ecjit_sys::ecjit_encode(codec.raw_handle(), raw.0.as_ptr(), raw.1.as_ptr(), len);
        }));
    }
    // rs-fft:k=32,m=32 against reed-solomon-simd (its own code), the same shards.
    let (fk, fm) = (32usize, 32usize);
    let fdata: Vec<Vec<u8>> = (0..fk).map(|i| (0..len).map(|j| (i * 17 + j * 3) as u8).collect()).collect();
    let fft = ecjit::Codec::new(&format!("rs-fft:k={},m={}", fk, fm)).unwrap();
    let mut fpar = vec![vec![0u8; len]; fm];
    let mut simd = reed_solomon_simd::ReedSolomonEncoder::new(fk, fm, len).unwrap();
    let (mut fo, mut fs) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        fo.push(time(seconds, || fft.encode(&fdata, &mut fpar).unwrap()));
        fs.push(time(seconds, || {
            simd.reset(fk, fm, len).unwrap();
            for d in &fdata {
                simd.add_original_shard(d).unwrap();
            }
            let r = simd.encode().unwrap();
            std::hint::black_box(r.recovery(0));
        }));
    }
    let gbs = |s: f64| (k * len) as f64 / s / 1e9;
    let (o, t, d) = (median(ours), median(theirs), median(direct));
    println!(
        "RS({},{}) {} B shards, encode GB/s (k x shard bytes): ecjit {:.2}, reed-solomon-erasure {:.2} -> {:.2}x; \
         C API directly {:.2} (binding overhead {:+.1}%)",
        k, m, len, gbs(o), gbs(t), t / o, gbs(d), (o / d - 1.0) * 100.0
    );
    let (a, b) = (median(fo), median(fs));
    let fg = |s: f64| (fk * len) as f64 / s / 1e9;
    println!(
        "rs-fft:k={},m={} {} B shards, encode GB/s: ecjit {:.2}, reed-solomon-simd {:.2} -> {:.2}x",
        fk, fm, len, fg(a), fg(b), b / a
    );
}
