//! Erasure coding with ecjit: codes named by a spec string, kernels generated as LLVM IR and
//! JIT-compiled for this CPU, encoding into the caller's buffers.
//!
//! ```
//! let codec = ecjit::Codec::new("rs-vand:k=4,m=2")?;
//! let data: Vec<Vec<u8>> = (0..4).map(|i| vec![i as u8; 4096]).collect();
//! let mut parity = vec![vec![0u8; 4096]; 2];
//! codec.encode(&data, &mut parity)?;
//!
//! let mut shards: Vec<Vec<u8>> = data.iter().chain(parity.iter()).cloned().collect();
//! shards[1].fill(0); // lost
//! let mut present = [true; 6];
//! present[1] = false;
//! codec.reconstruct(&mut shards, &present)?;
//! assert_eq!(shards[1], data[1]);
//! # Ok::<(), ecjit::Error>(())
//! ```
//!
//! `rs-vand` over GF(2^8) is the code reed-solomon-erasure, klauspost/reedsolomon and
//! Backblaze's JavaReedSolomon write by default; [`compat::ReedSolomon`] has
//! reed-solomon-erasure's calls. Calls allocate nothing (shard pointer tables of up to 256
//! shards live on the stack); a [`Codec`] is `Send + Sync` and may be shared by threads.

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_int;
use std::sync::OnceLock;

use ecjit_sys as sys;

pub mod compat;

/// What failed, as ecjit's status codes (`ecjit::StatusCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidSpec,
    InvalidArgument,
    NullPointer,
    ShardCount,
    ShardSize,
    TooManyErasures,
    Singular,
    UnsupportedTarget,
    Unsupported,
    JitFailure,
    Internal,
    IoError,
    Other(i32),
}

impl ErrorKind {
    fn from_code(code: c_int) -> ErrorKind {
        match code {
            sys::ECJIT_INVALID_SPEC => ErrorKind::InvalidSpec,
            sys::ECJIT_INVALID_ARGUMENT => ErrorKind::InvalidArgument,
            sys::ECJIT_NULL_POINTER => ErrorKind::NullPointer,
            sys::ECJIT_SHARD_COUNT => ErrorKind::ShardCount,
            sys::ECJIT_SHARD_SIZE => ErrorKind::ShardSize,
            sys::ECJIT_TOO_MANY_ERASURES => ErrorKind::TooManyErasures,
            sys::ECJIT_SINGULAR => ErrorKind::Singular,
            sys::ECJIT_UNSUPPORTED_TARGET => ErrorKind::UnsupportedTarget,
            sys::ECJIT_UNSUPPORTED => ErrorKind::Unsupported,
            sys::ECJIT_JIT_FAILURE => ErrorKind::JitFailure,
            sys::ECJIT_INTERNAL => ErrorKind::Internal,
            sys::ECJIT_IO_ERROR => ErrorKind::IoError,
            c => ErrorKind::Other(c),
        }
    }
    fn code(self) -> c_int {
        match self {
            ErrorKind::InvalidSpec => sys::ECJIT_INVALID_SPEC,
            ErrorKind::InvalidArgument => sys::ECJIT_INVALID_ARGUMENT,
            ErrorKind::NullPointer => sys::ECJIT_NULL_POINTER,
            ErrorKind::ShardCount => sys::ECJIT_SHARD_COUNT,
            ErrorKind::ShardSize => sys::ECJIT_SHARD_SIZE,
            ErrorKind::TooManyErasures => sys::ECJIT_TOO_MANY_ERASURES,
            ErrorKind::Singular => sys::ECJIT_SINGULAR,
            ErrorKind::UnsupportedTarget => sys::ECJIT_UNSUPPORTED_TARGET,
            ErrorKind::Unsupported => sys::ECJIT_UNSUPPORTED,
            ErrorKind::JitFailure => sys::ECJIT_JIT_FAILURE,
            ErrorKind::Internal => sys::ECJIT_INTERNAL,
            ErrorKind::IoError => sys::ECJIT_IO_ERROR,
            ErrorKind::Other(c) => c,
        }
    }
}

/// An ecjit error: its kind, the status name ("too-many-erasures") and ecjit's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// ecjit's short name of the status, e.g. "shard-count".
    pub fn name(&self) -> &'static str {
        let p = unsafe { sys::ecjit_status_name(self.kind.code()) };
        if p.is_null() {
            return "unknown";
        }
        unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("unknown")
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }
    fn last(code: c_int) -> Error {
        let p = unsafe { sys::ecjit_last_error() };
        let message = if p.is_null() { String::new() } else { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() };
        Error::new(ErrorKind::from_code(code), message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name(), self.message)
    }
}

impl std::error::Error for Error {}

fn check(code: c_int) -> Result<(), Error> {
    if code == sys::ECJIT_OK {
        Ok(())
    } else {
        Err(Error::last(code))
    }
}

// The process's JIT: one session and kernel cache shared by every codec (ecjit's own advice).
struct Jit(*mut sys::ecjit_jit);
unsafe impl Send for Jit {}
unsafe impl Sync for Jit {}

fn jit() -> Result<&'static Jit, Error> {
    static JIT: OnceLock<Result<Jit, Error>> = OnceLock::new();
    JIT.get_or_init(|| {
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::ecjit_jit_create(std::ptr::null(), &mut raw) })?;
        Ok(Jit(raw))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// One code: immutable, thread-safe, its kernels compiled for this CPU (served at once by
/// built-in kernels while the JIT compiles its own in the background).
pub struct Codec {
    raw: *mut sys::ecjit_codec,
    k: usize,
    m: usize,
    unit: usize,
    spec: String,
}

unsafe impl Send for Codec {}
unsafe impl Sync for Codec {}

impl Drop for Codec {
    fn drop(&mut self) {
        unsafe { sys::ecjit_codec_destroy(self.raw) }
    }
}

impl fmt::Debug for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Codec").field("spec", &self.spec).finish()
    }
}

// Shard pointer tables: on the stack up to 256 shards (no allocation per call), else on the heap.
const STACK: usize = 256;
enum Table<T: Copy> {
    Stack([T; STACK], usize),
    Heap(Vec<T>),
}
impl<T: Copy> Table<T> {
    fn new(fill: T, n: usize) -> Table<T> {
        if n <= STACK {
            Table::Stack([fill; STACK], n)
        } else {
            Table::Heap(vec![fill; n])
        }
    }
    fn as_mut(&mut self) -> &mut [T] {
        match self {
            Table::Stack(a, n) => &mut a[..*n],
            Table::Heap(v) => v,
        }
    }
}

impl Codec {
    /// The codec of `spec`, e.g. "rs-vand:k=10,m=4", "rs-cauchy:k=12,m=4,gf=16",
    /// "rs-fft:k=32,m=32", "lrc:k=12,l=2,r=2" (docs/specs.md).
    pub fn new(spec: &str) -> Result<Codec, Error> {
        let c = CString::new(spec).map_err(|_| Error::new(ErrorKind::InvalidSpec, "the spec contains a NUL byte"))?;
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::ecjit_codec_create(jit()?.0, c.as_ptr(), &mut raw) })?;
        let spec = unsafe { CStr::from_ptr(sys::ecjit_codec_spec(raw)) }.to_string_lossy().into_owned();
        let (k, m, unit) = unsafe {
            (sys::ecjit_codec_k(raw) as usize, sys::ecjit_codec_m(raw) as usize, sys::ecjit_codec_symbol_bytes(raw) as usize)
        };
        Ok(Codec { raw, k, m, unit, spec })
    }
    /// Data shards.
    pub fn k(&self) -> usize {
        self.k
    }
    /// Parity shards.
    pub fn m(&self) -> usize {
        self.m
    }
    pub fn n(&self) -> usize {
        self.k + self.m
    }
    /// Shard lengths are multiples of this (the symbol, or a bit-matrix code's block).
    pub fn symbol_bytes(&self) -> usize {
        self.unit
    }
    /// The C API's handle, valid while the codec lives (for calls this crate does not wrap).
    pub fn raw_handle(&self) -> *const sys::ecjit_codec {
        self.raw
    }
    /// The canonical spec: store it with the data.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    fn count(&self, what: &str, got: usize, want: usize) -> Result<(), Error> {
        if got == want {
            return Ok(());
        }
        Err(Error::new(ErrorKind::ShardCount, format!("{}: {} has {} such shards; got {}", what, self.spec, want, got)))
    }

    fn same_len<'a>(what: &str, lens: impl Iterator<Item = usize>) -> Result<usize, Error> {
        let mut len = None;
        for (i, l) in lens.enumerate() {
            match len {
                None => len = Some(l),
                Some(first) if first != l => {
                    return Err(Error::new(
                        ErrorKind::ShardSize,
                        format!("{}: shard {} has {} bytes, the first {}; every shard must have the same length", what, i, l, first),
                    ))
                }
                _ => {}
            }
        }
        Ok(len.unwrap_or(0))
    }

    /// Computes the m parity shards of the k data shards into `parity` (every shard the same
    /// length, a multiple of [`Codec::symbol_bytes`]).
    pub fn encode<D: AsRef<[u8]>, P: AsMut<[u8]>>(&self, data: &[D], parity: &mut [P]) -> Result<(), Error> {
        self.count("encode: data", data.len(), self.k)?;
        self.count("encode: parity", parity.len(), self.m)?;
        let len = Self::same_len(
            "encode",
            data.iter().map(|d| d.as_ref().len()).chain(parity.iter_mut().map(|p| p.as_mut().len())),
        )?;
        let mut d = Table::new(std::ptr::null::<u8>(), self.k);
        let mut p = Table::new(std::ptr::null_mut::<u8>(), self.m);
        for (slot, s) in d.as_mut().iter_mut().zip(data) {
            *slot = s.as_ref().as_ptr();
        }
        for (slot, s) in p.as_mut().iter_mut().zip(parity.iter_mut()) {
            *slot = s.as_mut().as_mut_ptr();
        }
        check(unsafe { sys::ecjit_encode(self.raw, d.as_mut().as_ptr(), p.as_mut().as_ptr(), len) })
    }

    fn rebuild<S: AsMut<[u8]>>(&self, what: &str, shards: &mut [S], present: &[bool], data_only: bool) -> Result<(), Error> {
        self.count(what, shards.len(), self.n())?;
        if present.len() != self.n() {  // (the message is built only on the error: no allocation per call)
            return self.count(&format!("{}: present", what), present.len(), self.n());
        }
        let len = Self::same_len(what, shards.iter_mut().map(|s| s.as_mut().len()))?;
        let mut ptr = Table::new(std::ptr::null_mut::<u8>(), self.n());
        let mut have = Table::new(0u8, self.n());
        for (i, s) in shards.iter_mut().enumerate() {
            ptr.as_mut()[i] = s.as_mut().as_mut_ptr();
            have.as_mut()[i] = present[i] as u8;
        }
        let f = if data_only { sys::ecjit_reconstruct_data } else { sys::ecjit_reconstruct };
        check(unsafe { f(self.raw, ptr.as_mut().as_ptr(), have.as_mut().as_ptr(), len) })
    }

    /// Rebuilds, in place, every shard whose `present` entry is false from the others (data
    /// 0..k, then parity; every buffer the same length). Nothing is written on an error.
    pub fn reconstruct<S: AsMut<[u8]>>(&self, shards: &mut [S], present: &[bool]) -> Result<(), Error> {
        self.rebuild("reconstruct", shards, present, false)
    }

    /// As [`Codec::reconstruct`], the missing data shards only (missing parity is left alone).
    pub fn reconstruct_data<S: AsMut<[u8]>>(&self, shards: &mut [S], present: &[bool]) -> Result<(), Error> {
        self.rebuild("reconstruct_data", shards, present, true)
    }

    /// Whether the parity shards match the data shards (all n shards given).
    pub fn verify<S: AsRef<[u8]>>(&self, shards: &[S]) -> Result<bool, Error> {
        self.count("verify", shards.len(), self.n())?;
        let len = Self::same_len("verify", shards.iter().map(|s| s.as_ref().len()))?;
        let mut ptr = Table::new(std::ptr::null::<u8>(), self.n());
        for (slot, s) in ptr.as_mut().iter_mut().zip(shards) {
            *slot = s.as_ref().as_ptr();
        }
        let mut matches: c_int = 0;
        check(unsafe { sys::ecjit_verify(self.raw, ptr.as_mut().as_ptr(), len, &mut matches, std::ptr::null_mut()) })?;
        Ok(matches != 0)
    }
}
