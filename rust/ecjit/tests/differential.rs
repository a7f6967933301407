// ecjit's rs-vand against reed-solomon-erasure 6 (galois_8): the same parity for the same data,
// and each rebuilds the other's shards after random losses; bad arguments give ecjit's errors;
// the hot path allocates nothing.
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ecjit::compat::ReedSolomon;
use ecjit::{Codec, ErrorKind};

// Allocations counted per thread (the tests run side by side).
struct Counting;
thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.with(|n| n.set(n.get() + 1));
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}
#[global_allocator]
static A: Counting = Counting;

// xorshift64*: the test's data and losses, seeded.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

const SHAPES: [(usize, usize); 5] = [(4, 2), (10, 4), (17, 3), (32, 32), (200, 50)];

#[test]
fn same_parity_as_reed_solomon_erasure() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for (k, m) in SHAPES {
        for len in [64usize, 1000, 65536] {
            let data: Vec<Vec<u8>> = (0..k).map(|_| rng.bytes(len)).collect();
            let peer = reed_solomon_erasure::galois_8::ReedSolomon::new(k, m).unwrap();
            let mut theirs: Vec<Vec<u8>> = data.iter().cloned().chain((0..m).map(|_| vec![0u8; len])).collect();
            peer.encode(&mut theirs).unwrap();
            let codec = Codec::new(&format!("rs-vand:k={},m={}", k, m)).unwrap();
            let mut parity = vec![vec![0u8; len]; m];
            codec.encode(&data, &mut parity).unwrap();
            assert_eq!(&theirs[k..], &parity[..], "({}, {}) at {} bytes", k, m, len);
        }
    }
}

#[test]
fn each_rebuilds_the_others_shards() {
    let mut rng = Rng(7);
    for (k, m) in SHAPES {
        let len = 4096;
        let rs = ReedSolomon::new(k, m).unwrap();
        let peer = reed_solomon_erasure::galois_8::ReedSolomon::new(k, m).unwrap();
        let mut ours: Vec<Vec<u8>> = (0..k).map(|_| rng.bytes(len)).chain((0..m).map(|_| vec![0u8; len])).collect();
        rs.encode(&mut ours).unwrap();
        assert!(peer.verify(&ours).unwrap());
        for round in 0..8 {
            let lost = 1 + (rng.next() as usize) % m;
            let mut idx: Vec<usize> = (0..k + m).collect();
            for i in 0..lost {
                let j = i + (rng.next() as usize) % (k + m - i);
                idx.swap(i, j);
            }
            let mut a: Vec<Option<Vec<u8>>> = ours.iter().cloned().map(Some).collect();
            let mut b = a.clone();
            for &i in &idx[..lost] {
                a[i] = None;
                b[i] = None;
            }
            peer.reconstruct(&mut a).unwrap(); // the peer rebuilds ecjit's shards
            rs.reconstruct(&mut b).unwrap(); // ecjit rebuilds them too; the peer's check below
            for i in 0..k + m {
                assert_eq!(a[i].as_ref().unwrap(), &ours[i], "({}, {}) round {}: peer, shard {}", k, m, round, i);
                assert_eq!(b[i].as_ref().unwrap(), &ours[i], "({}, {}) round {}: ecjit, shard {}", k, m, round, i);
            }
        }
        // ecjit rebuilds the peer's shards.
        let mut theirs: Vec<Vec<u8>> = (0..k).map(|_| rng.bytes(len)).chain((0..m).map(|_| vec![0u8; len])).collect();
        peer.encode(&mut theirs).unwrap();
        let mut present = vec![true; k + m];
        let mut work = theirs.clone();
        for i in 0..m {
            present[i] = false;
            work[i].fill(0);
        }
        rs.codec().reconstruct(&mut work, &present).unwrap();
        assert_eq!(work, theirs, "({}, {}): the peer's shards", k, m);
    }
}

#[test]
fn bad_arguments_give_ecjits_errors() {
    let codec = Codec::new("rs-vand:k=4,m=2").unwrap();
    let data = vec![vec![0u8; 64]; 3];
    let mut parity = vec![vec![0u8; 64]; 2];
    let e = codec.encode(&data, &mut parity).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShardCount);
    assert_eq!(e.name(), "shard-count");
    let data = vec![vec![0u8; 64], vec![0u8; 64], vec![0u8; 63], vec![0u8; 64]];
    assert_eq!(codec.encode(&data, &mut parity).unwrap_err().kind(), ErrorKind::ShardSize);
    let mut shards = vec![vec![0u8; 64]; 6];
    let present = [false, false, false, true, true, true];
    let e = codec.reconstruct(&mut shards, &present).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooManyErasures, "{}", e);
    assert!(e.message().contains("can rebuild at most 2"), "{}", e);
    let e = Codec::new("rs-vand:k=0,m=2").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidSpec);
    assert!(e.message().contains("k must be at least 1"), "{}", e);
    assert_eq!(Codec::new("no-such:k=1,m=1").unwrap_err().kind(), ErrorKind::InvalidSpec);
    let gf16 = Codec::new("rs-vand:k=2,m=1,gf=16").unwrap();
    let odd = vec![vec![0u8; 3]; 2];
    let mut p = vec![vec![0u8; 3]; 1];
    assert_eq!(gf16.encode(&odd, &mut p).unwrap_err().kind(), ErrorKind::ShardSize);
    assert!(ReedSolomon::new(200, 57).is_err());
    let rs = ReedSolomon::new(3, 2).unwrap();
    let mut none: Vec<Option<Vec<u8>>> = vec![None, None, None, Some(vec![0u8; 8]), Some(vec![0u8; 8])];
    assert_eq!(rs.reconstruct(&mut none).unwrap_err().kind(), ErrorKind::TooManyErasures);
    assert!(none[0].is_none() && none[3].is_some(), "a failed reconstruct leaves the shards as they were");
    // A locally repairable code is not MDS: data shards 0 and 1 and their group's local parity
    // (shard 4) lost leave only the global parity for two unknowns.
    let lrc = Codec::new("lrc:k=4,l=2,r=1").unwrap();
    let mut shards = vec![vec![7u8; 64]; 7];
    let present = [false, false, true, true, false, true, true];
    let e = lrc.reconstruct(&mut shards, &present).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Singular, "{}", e);
    assert!(e.message().contains("not MDS for this erasure set"), "{}", e);
    assert!(shards.iter().all(|s| s.iter().all(|&b| b == 7)), "a failed reconstruct writes nothing");
    let present = [false, false, true, true, true, false, true];
    lrc.reconstruct(&mut shards, &present).unwrap();
}

#[test]
fn calls_allocate_nothing() {
    let codec = Codec::new("rs-vand:k=10,m=4").unwrap();
    let len = 65536;
    let data: Vec<Vec<u8>> = (0..10).map(|i| vec![i as u8; len]).collect();
    let mut parity = vec![vec![0u8; len]; 4];
    codec.encode(&data, &mut parity).unwrap(); // first calls may set things up
    let mut shards: Vec<Vec<u8>> = data.iter().chain(parity.iter()).cloned().collect();
    let mut present = [true; 14];
    present[3] = false;
    codec.reconstruct(&mut shards, &present).unwrap();
    let before = ALLOCS.with(Cell::get);
    for _ in 0..100 {
        codec.encode(&data, &mut parity).unwrap();
        codec.reconstruct(&mut shards, &present).unwrap();
        assert!(codec.verify(&shards).unwrap());
    }
    assert_eq!(ALLOCS.with(Cell::get) - before, 0, "encode / reconstruct / verify allocated");
}

#[test]
fn codecs_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Codec>();
    both::<ReedSolomon>();
    let codec = std::sync::Arc::new(Codec::new("rs-cauchy:k=6,m=3").unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let c = codec.clone();
            std::thread::spawn(move || {
                let data: Vec<Vec<u8>> = (0..6).map(|i| vec![(i * 7 + t) as u8; 4096]).collect();
                let mut parity = vec![vec![0u8; 4096]; 3];
                c.encode(&data, &mut parity).unwrap();
                let shards: Vec<&Vec<u8>> = data.iter().chain(parity.iter()).collect();
                assert!(c.verify(&shards).unwrap());
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
