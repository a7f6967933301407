// The run path of libecjit for this crate's own tests, examples and doc tests (ecjit-sys found
// the library: its `links` metadata). A program that depends on ecjit finds the library as
// any shared library: installed on the loader's path, or with LD_LIBRARY_PATH / its own rpath.
fn main() {
    if let Ok(dir) = std::env::var("DEP_ECJIT_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
}
