// Finds libecjit: $ECJIT_LIB_DIR, else pkg-config's ecjit (an installed ecjit), else the
// in-tree build (../../build/lib, what scripts/test.sh builds). Links it as a shared library
// and records its directory as the run path, so tests and binaries run without LD_LIBRARY_PATH.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=ECJIT_LIB_DIR");
    let dir = std::env::var("ECJIT_LIB_DIR").ok().map(PathBuf::from).or_else(pkg_config_dir).or_else(|| {
        let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build/lib");
        tree.join("libecjit.so").exists().then(|| tree.canonicalize().unwrap_or(tree))
    });
    match dir {
        Some(d) => {
            println!("cargo:rustc-link-search=native={}", d.display());
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", d.display());
            println!("cargo:lib_dir={}", d.display());
        }
        None => println!(
            "cargo:warning=libecjit not found: set ECJIT_LIB_DIR, install ecjit (pkg-config ecjit), or build it in ../build"
        ),
    }
    println!("cargo:rustc-link-lib=dylib=ecjit");
}

fn pkg_config_dir() -> Option<PathBuf> {
    let out = Command::new("pkg-config").args(["--variable=libdir", "ecjit"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let d = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    d.join("libecjit.so").exists().then_some(d)
}
