// ecjit's rs-fft through the crate against reed-solomon-simd 3 (the code it is byte for byte):
// the same recovery shards, and each restores the other's originals after m random losses.
use ecjit::Codec;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

const CASES: [(usize, usize); 4] = [(3, 5), (32, 32), (100, 28), (17, 200)];

#[test]
fn same_recovery_shards_as_reed_solomon_simd() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for (k, m) in CASES {
        let codec = Codec::new(&format!("rs-fft:k={},m={}", k, m)).unwrap();
        for len in [64usize, 1024, 65536] {
            let data: Vec<Vec<u8>> = (0..k).map(|_| rng.bytes(len)).collect();
            let theirs = reed_solomon_simd::encode(k, m, &data).unwrap();
            let mut ours = vec![vec![0u8; len]; m];
            codec.encode(&data, &mut ours).unwrap();
            assert_eq!(ours, theirs, "rs-fft:k={},m={} at {} bytes", k, m, len);
        }
    }
}

#[test]
fn each_restores_the_others_originals() {
    let mut rng = Rng(99);
    for (k, m) in CASES {
        let len = 4096;
        let codec = Codec::new(&format!("rs-fft:k={},m={}", k, m)).unwrap();
        let data: Vec<Vec<u8>> = (0..k).map(|_| rng.bytes(len)).collect();
        let mut parity = vec![vec![0u8; len]; m];
        codec.encode(&data, &mut parity).unwrap();
        let n = k + m;
        let mut idx: Vec<usize> = (0..n).collect();
        for i in 0..m {
            let j = i + (rng.next() as usize) % (n - i);
            idx.swap(i, j);
        }
        let lost = &idx[..m];
        // reed-solomon-simd restores ecjit's lost originals from what is left.
        let originals = (0..k).filter(|i| !lost.contains(i)).map(|i| (i, &data[i]));
        let recovery = (0..m).filter(|j| !lost.contains(&(k + j))).map(|j| (j, &parity[j]));
        let restored = reed_solomon_simd::decode(k, m, originals, recovery).unwrap();
        for (i, shard) in &restored {
            assert_eq!(shard, &data[*i], "rs-fft:k={},m={}: the crate's restore of original {}", k, m, i);
        }
        // ecjit rebuilds every lost shard.
        let mut shards: Vec<Vec<u8>> = data.iter().chain(parity.iter()).cloned().collect();
        let mut present = vec![true; n];
        for &i in lost {
            present[i] = false;
            shards[i].fill(0);
        }
        codec.reconstruct(&mut shards, &present).unwrap();
        for i in 0..n {
            assert_eq!(&shards[i], if i < k { &data[i] } else { &parity[i - k] }, "rs-fft:k={},m={} shard {}", k, m, i);
        }
    }
}
