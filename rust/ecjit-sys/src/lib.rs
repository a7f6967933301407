//! Raw bindings to ecjit's C API (`ecjit/ecjit_c.h`). Every `int`-returning call returns a
//! status (`ECJIT_OK` on success); on failure nothing was written and `ecjit_last_error()` holds
//! the message. The safe API is the `ecjit` crate.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_uchar, c_uint};

pub const ECJIT_OK: c_int = 0;
pub const ECJIT_INVALID_SPEC: c_int = 1;
pub const ECJIT_INVALID_ARGUMENT: c_int = 2;
pub const ECJIT_NULL_POINTER: c_int = 3;
pub const ECJIT_SHARD_COUNT: c_int = 4;
pub const ECJIT_SHARD_SIZE: c_int = 5;
pub const ECJIT_TOO_MANY_ERASURES: c_int = 6;
pub const ECJIT_SINGULAR: c_int = 7;
pub const ECJIT_UNSUPPORTED_TARGET: c_int = 8;
pub const ECJIT_UNSUPPORTED: c_int = 9;
pub const ECJIT_JIT_FAILURE: c_int = 10;
pub const ECJIT_INTERNAL: c_int = 11;
pub const ECJIT_IO_ERROR: c_int = 12;

#[repr(C)]
pub struct ecjit_jit {
    _private: [u8; 0],
}
#[repr(C)]
pub struct ecjit_codec {
    _private: [u8; 0],
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecjit_jit_options {
    pub target: *const c_char,
    pub strategy: *const c_char,
    pub opt_level: c_uint,
    pub max_cached_kernels: usize,
    pub disk_cache: c_int,
    pub threads: c_uint,
    pub tune: c_int,
    pub tune_in_background: c_int,
}

extern "C" {
    pub fn ecjit_jit_options_init(options: *mut ecjit_jit_options);
    pub fn ecjit_last_error() -> *const c_char;
    pub fn ecjit_status_name(code: c_int) -> *const c_char;
    pub fn ecjit_jit_create(options: *const ecjit_jit_options, out: *mut *mut ecjit_jit) -> c_int;
    pub fn ecjit_jit_destroy(jit: *mut ecjit_jit);
    pub fn ecjit_jit_wait_for_tuning(jit: *mut ecjit_jit);
    pub fn ecjit_codec_create(jit: *mut ecjit_jit, spec: *const c_char, out: *mut *mut ecjit_codec) -> c_int;
    pub fn ecjit_codec_destroy(codec: *mut ecjit_codec);
    pub fn ecjit_codec_k(codec: *const ecjit_codec) -> c_uint;
    pub fn ecjit_codec_m(codec: *const ecjit_codec) -> c_uint;
    pub fn ecjit_codec_symbol_bytes(codec: *const ecjit_codec) -> c_uint;
    pub fn ecjit_codec_spec(codec: *const ecjit_codec) -> *const c_char;
    pub fn ecjit_encode(codec: *const ecjit_codec, data: *const *const u8, parity: *const *mut u8, len: usize) -> c_int;
    pub fn ecjit_reconstruct(codec: *const ecjit_codec, shards: *const *mut u8, present: *const c_uchar, len: usize)
        -> c_int;
    pub fn ecjit_reconstruct_data(
        codec: *const ecjit_codec,
        shards: *const *mut u8,
        present: *const c_uchar,
        len: usize,
    ) -> c_int;
    pub fn ecjit_reconstruct_some(
        codec: *const ecjit_codec,
        wanted: *const c_uint,
        wanted_count: usize,
        shards: *const *mut u8,
        present: *const c_uchar,
        len: usize,
    ) -> c_int;
    pub fn ecjit_minimum_to_decode(
        codec: *const ecjit_codec,
        wanted: *const c_uint,
        wanted_count: usize,
        available: *const c_uint,
        available_count: usize,
        out: *mut c_uint,
        out_count: *mut usize,
    ) -> c_int;
    pub fn ecjit_verify(
        codec: *const ecjit_codec,
        shards: *const *const u8,
        len: usize,
        matches: *mut c_int,
        mismatch_offset: *mut usize,
    ) -> c_int;
}
