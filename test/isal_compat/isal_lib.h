// IsalLib: one libisal.so.2 (the system's or ecjit's) opened by path with dlopen, its functions by name.
#pragma once

#include <dlfcn.h>

#include <string>

namespace ecjit_test {

using u8 = unsigned char;
using EncFn = void (*)(int, int, int, u8 *, u8 **, u8 **);
using UpdFn = void (*)(int, int, int, int, u8 *, u8 *, u8 **);
using Dot1Fn = void (*)(int, int, u8 *, u8 **, u8 *);
using DotNFn = void (*)(int, int, u8 *, u8 **, u8 **);
using Mad1Fn = void (*)(int, int, int, u8 *, u8 *, u8 *);
using MadNFn = void (*)(int, int, int, u8 *, u8 *, u8 **);
using MulFn = int (*)(int, u8 *, void *, void *);
using RaidFn = int (*)(int, int, void **);
using InitFn = void (*)(int, int, u8 *, u8 *);
using MulInitFn = void (*)(u8, u8 *);
using GfMulFn = u8 (*)(u8, u8);
using GfInvFn = u8 (*)(u8);
using GenFn = void (*)(u8 *, int, int);
using InvertFn = int (*)(u8 *, u8 *, int);

// The Debian ISA-L and ecjit's drop-in, both by absolute path.
constexpr const char *kSystemIsal = "/usr/lib/x86_64-linux-gnu/libisal.so.2";

class IsalLib {
 public:
  // RTLD_LOCAL: two libraries with one SONAME live side by side when opened by path; ecjit's
  // is linked -Bsymbolic so its internal calls never reach the other one.
  explicit IsalLib(const std::string &path) : path_(path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) error_ = dlerror();
  }
  ~IsalLib() = default;  // never dlclose: ecjit's library keeps JIT state for the process
  bool ok() const { return handle_ != nullptr; }
  const std::string &error() const { return error_; }
  const std::string &path() const { return path_; }
  void *raw(const char *name) const { return handle_ ? dlsym(handle_, name) : nullptr; }
  template <typename F>
  F fn(const std::string &name) const {
    return reinterpret_cast<F>(raw(name.c_str()));
  }

 private:
  std::string path_;
  void *handle_ = nullptr;
  std::string error_;
};

}  // namespace ecjit_test
