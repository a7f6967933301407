//! reed-solomon-erasure's calls over ecjit's `rs-vand` (the same GF(2^8) code, byte for byte):
//! switching is a change of import.
//!
//! ```
//! use ecjit::compat::ReedSolomon;
//! let rs = ReedSolomon::new(3, 2)?;
//! let mut shards = vec![vec![1u8; 64], vec![2u8; 64], vec![3u8; 64], vec![0u8; 64], vec![0u8; 64]];
//! rs.encode(&mut shards)?;
//! assert!(rs.verify(&shards)?);
//! let mut maybe: Vec<Option<Vec<u8>>> = shards.iter().cloned().map(Some).collect();
//! maybe[0] = None;
//! maybe[4] = None;
//! rs.reconstruct(&mut maybe)?;
//! assert_eq!(maybe[0].as_deref(), Some(&shards[0][..]));
//! # Ok::<(), ecjit::Error>(())
//! ```

use crate::{Codec, Error, ErrorKind};

/// `reed_solomon_erasure::galois_8::ReedSolomon`'s interface.
#[derive(Debug)]
pub struct ReedSolomon {
    codec: Codec,
}

impl ReedSolomon {
    /// The Vandermonde-derived code of `data_shards` + `parity_shards` over GF(2^8) (at most 256 shards).
    pub fn new(data_shards: usize, parity_shards: usize) -> Result<ReedSolomon, Error> {
        if data_shards == 0 || parity_shards == 0 || data_shards + parity_shards > 256 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("{} data + {} parity shards: both at least 1, at most 256 in all", data_shards, parity_shards),
            ));
        }
        Ok(ReedSolomon { codec: Codec::new(&format!("rs-vand:k={},m={},gf=8", data_shards, parity_shards))? })
    }
    pub fn data_shard_count(&self) -> usize {
        self.codec.k()
    }
    pub fn parity_shard_count(&self) -> usize {
        self.codec.m()
    }
    pub fn total_shard_count(&self) -> usize {
        self.codec.n()
    }
    /// The codec behind it.
    pub fn codec(&self) -> &Codec {
        &self.codec
    }

    /// Fills the parity shards (the last m) from the data shards (the first k), in place.
    pub fn encode<T: AsRef<[u8]> + AsMut<[u8]>>(&self, shards: &mut [T]) -> Result<(), Error> {
        self.codec.count("encode", shards.len(), self.codec.n())?;
        let (data, parity) = shards.split_at_mut(self.codec.k());
        self.codec.encode(data, parity)
    }

    /// Whether the parity shards match the data shards.
    pub fn verify<T: AsRef<[u8]>>(&self, shards: &[T]) -> Result<bool, Error> {
        self.codec.verify(shards)
    }

    /// Rebuilds every `None` shard (allocated here) from the present ones.
    pub fn reconstruct(&self, shards: &mut [Option<Vec<u8>>]) -> Result<(), Error> {
        self.fill(shards, false)
    }

    /// Rebuilds the `None` data shards only.
    pub fn reconstruct_data(&self, shards: &mut [Option<Vec<u8>>]) -> Result<(), Error> {
        self.fill(shards, true)
    }

    fn fill(&self, shards: &mut [Option<Vec<u8>>], data_only: bool) -> Result<(), Error> {
        let n = self.codec.n();
        self.codec.count("reconstruct", shards.len(), n)?;
        let len = shards.iter().flatten().map(Vec::len).next().ok_or_else(|| {
            Error::new(ErrorKind::TooManyErasures, format!("no shard present; {} needs {}", self.codec.spec(), self.codec.k()))
        })?;
        let present: Vec<bool> = shards.iter().map(Option::is_some).collect();
        if present.iter().filter(|p| **p).count() < self.codec.k() {
            return Err(Error::new(
                ErrorKind::TooManyErasures,
                format!("{} shards missing; {} can rebuild at most {}", n - present.iter().filter(|p| **p).count(), self.codec.spec(), self.codec.m()),
            ));
        }
        let mut bufs: Vec<Vec<u8>> = shards.iter_mut().map(|s| s.take().unwrap_or_else(|| vec![0u8; len])).collect();
        let r = if data_only {
            self.codec.reconstruct_data(&mut bufs, &present)
        } else {
            self.codec.reconstruct(&mut bufs, &present)
        };
        for (i, (slot, buf)) in shards.iter_mut().zip(bufs).enumerate() {
            // On an error, or for parity reconstruct_data leaves alone, a missing shard stays None.
            if present[i] || (r.is_ok() && !(data_only && i >= self.codec.k())) {
                *slot = Some(buf);
            }
        }
        r
    }
}
