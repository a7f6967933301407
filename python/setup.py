"""Builds ecjit._ecjit, the Python binding of ecjit, against a built or installed ecjit.

Where ecjit is taken from (the first that applies):

1. ``ECJIT_PREFIX=P``: an install prefix (``cmake --install build --prefix P``): headers in
   ``P/include``, ``P/lib/libecjit.a`` (or ``lib64`` / ``lib/<multiarch>``).
2. ``ECJIT_BUILD_DIR=B``: a build tree: ``B/lib/libecjit.a``, headers from the source tree
   (``ECJIT_SOURCE_DIR``, default: the parent of this directory) ``runtime/include`` and
   ``codes/include``.
3. ``pkg-config ecjit`` (e.g. ``PKG_CONFIG_PATH=P/lib/pkgconfig``): its ``--cflags``, and
   ``libecjit.a`` in its ``libdir``.
4. The source tree's own build, ``../build`` relative to this directory (as 2).

An explicitly set variable wins over pkg-config, so that a test of one build tree is never
silently built against an ecjit installed on the system.

The static library is always linked into the module (its symbols hidden), so the module
depends only on LLVM's shared library (``-lLLVM``, found with ``ECJIT_LLVM_LIBDIR``, else
``llvm-config-19 --libdir``, else ``/usr/lib/llvm-19/lib``), the C++ runtime and libc.
"""

import os
import shlex
import shutil
import subprocess
import sysconfig

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = "libecjit.a"


class EcjitNotFound(Exception):
    pass


def _lib_in(prefix):
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for sub in ("lib", "lib64", os.path.join("lib", multiarch) if multiarch else None):
        if sub and os.path.isfile(os.path.join(prefix, sub, LIB)):
            return os.path.join(prefix, sub, LIB)
    return None


def _llvm_libdir():
    env = os.environ.get("ECJIT_LLVM_LIBDIR")
    if env:
        return env
    for tool in ("llvm-config-19", "llvm-config"):
        if shutil.which(tool):
            try:
                out = subprocess.run([tool, "--version"], capture_output=True, text=True, check=True).stdout
                if out.strip().startswith("19."):
                    return subprocess.run([tool, "--libdir"], capture_output=True, text=True,
                                          check=True).stdout.strip()
            except (OSError, subprocess.CalledProcessError):
                pass
    return "/usr/lib/llvm-19/lib"


def _llvm_flags():
    libdir = _llvm_libdir()
    if not any(os.path.exists(os.path.join(libdir, f)) for f in ("libLLVM.so", "libLLVM-19.so")):
        raise EcjitNotFound(
            "LLVM 19's shared library (libLLVM.so) is not in %s; install llvm-19-dev or set "
            "ECJIT_LLVM_LIBDIR to the directory that holds it" % libdir)
    return {"library_dirs": [libdir], "libraries": ["LLVM", "pthread"], "rpath": [libdir]}


def _from_prefix(prefix):
    prefix = os.path.abspath(prefix)
    inc = os.path.join(prefix, "include")
    lib = _lib_in(prefix)
    if not os.path.isfile(os.path.join(inc, "ecjit", "ecjit.h")) or lib is None:
        raise EcjitNotFound(
            "ECJIT_PREFIX=%s is not an ecjit install prefix: want %s/include/ecjit/ecjit.h and "
            "%s/lib/%s (cmake --install <build> --prefix %s)" % (prefix, prefix, prefix, LIB, prefix))
    cfg = {"how": "ECJIT_PREFIX=" + prefix, "include_dirs": [inc], "archive": lib, "cflags": []}
    cfg.update(_llvm_flags())
    return cfg


def _from_build(build, explicit):
    build = os.path.abspath(build)
    src = os.path.abspath(_env_path("ECJIT_SOURCE_DIR") or os.path.join(HERE, ".."))
    incs = [os.path.join(src, "runtime", "include"), os.path.join(src, "codes", "include")]
    lib = os.path.join(build, "lib", LIB)
    if not explicit and not os.path.isfile(os.path.join(incs[0], "ecjit", "ecjit.h")):
        raise EcjitNotFound("ECJIT_PREFIX and ECJIT_BUILD_DIR are not set, pkg-config knows no ecjit, "
                            "and %s is not inside ecjit's source tree (no ../runtime/include)" % HERE)
    if not os.path.isfile(os.path.join(incs[0], "ecjit", "ecjit.h")):
        raise EcjitNotFound("the ecjit headers are not in %s/runtime/include (set ECJIT_SOURCE_DIR to "
                            "ecjit's source tree)" % src)
    if not os.path.isfile(lib):
        raise EcjitNotFound(
            "%s not found%s: build ecjit first (cmake -S %s -B %s && cmake --build %s)"
            % (lib, "" if explicit else " (the default build tree; set ECJIT_BUILD_DIR, ECJIT_PREFIX "
               "or PKG_CONFIG_PATH to use another ecjit)", src, build, build))
    how = ("ECJIT_BUILD_DIR=" if explicit else "source tree build ") + build
    cfg = {"how": how, "include_dirs": incs, "archive": lib, "cflags": []}
    cfg.update(_llvm_flags())
    return cfg


def _pkg_config(*args):
    return subprocess.run(["pkg-config"] + list(args), capture_output=True, text=True, check=True).stdout.strip()


def _pkg_config_has_ecjit():
    if not shutil.which("pkg-config"):
        return False
    return subprocess.run(["pkg-config", "--exists", "ecjit"]).returncode == 0


def _from_pkg_config():
    libdir = _pkg_config("--variable=libdir", "ecjit")
    lib = os.path.join(libdir, LIB)
    if not os.path.isfile(lib):
        raise EcjitNotFound("pkg-config's ecjit (libdir %s) has no %s" % (libdir, LIB))
    cfg = {"how": "pkg-config (libdir %s)" % libdir, "include_dirs": [], "archive": lib, "cflags": [],
           "library_dirs": [], "libraries": [], "rpath": [], "ldflags": []}
    for tok in shlex.split(_pkg_config("--cflags", "ecjit")):
        if tok.startswith("-I"):
            cfg["include_dirs"].append(tok[2:])
        else:
            cfg["cflags"].append(tok)
    for tok in shlex.split(_pkg_config("--libs", "--static", "ecjit")):
        if tok == "-lecjit" or (tok.startswith("-L") and os.path.normpath(tok[2:]) == os.path.normpath(libdir)):
            continue  # the static archive is linked by path
        if tok.startswith("-L"):
            cfg["library_dirs"].append(tok[2:])
            cfg["rpath"].append(tok[2:])
        elif tok.startswith("-l"):
            cfg["libraries"].append(tok[2:])
        else:
            cfg["ldflags"].append(tok)
    if "LLVM" not in cfg["libraries"]:  # an old .pc without Libs.private
        llvm = _llvm_flags()
        cfg["library_dirs"] += llvm["library_dirs"]
        cfg["rpath"] += llvm["rpath"]
        cfg["libraries"] += llvm["libraries"]
    return cfg


def _env_path(name):
    """An environment variable's path. pip runs this file in python/, so a relative path is
    taken relative to the directory pip was started in ($PWD) when it exists there."""
    path = os.environ.get(name)
    if path and not os.path.isabs(path) and os.environ.get("PWD"):
        there = os.path.join(os.environ["PWD"], path)
        if os.path.exists(there):
            return there
    return path


def find_ecjit():
    if os.environ.get("ECJIT_PREFIX"):
        return _from_prefix(_env_path("ECJIT_PREFIX"))
    if os.environ.get("ECJIT_BUILD_DIR"):
        return _from_build(_env_path("ECJIT_BUILD_DIR"), explicit=True)
    if _pkg_config_has_ecjit():
        return _from_pkg_config()
    return _from_build(os.path.join(HERE, "..", "build"), explicit=False)


class EcjitBuildExt(build_ext):
    """Finds ecjit when the extension is built (so that sdist / egg_info need no ecjit)."""

    def build_extensions(self):
        try:
            cfg = find_ecjit()
        except (EcjitNotFound, subprocess.CalledProcessError) as e:
            raise SystemExit("\necjit not found: %s\n\nSet ECJIT_PREFIX (an install prefix), ECJIT_BUILD_DIR "
                             "(a build tree of ecjit) or PKG_CONFIG_PATH (a directory with ecjit.pc).\n" % e)
        print("ecjit: building against " + cfg["how"])
        for ext in self.extensions:
            ext.include_dirs = cfg["include_dirs"] + list(ext.include_dirs)
            ext.extra_compile_args = list(ext.extra_compile_args) + cfg["cflags"]
            ext.extra_objects = list(ext.extra_objects or []) + [cfg["archive"]]
            ext.depends = list(ext.depends) + [cfg["archive"]]
            ext.library_dirs = list(ext.library_dirs) + cfg["library_dirs"]
            ext.libraries = list(ext.libraries) + cfg["libraries"]
            ext.runtime_library_dirs = list(ext.runtime_library_dirs or []) + cfg["rpath"]
            # Keep ecjit's own symbols out of the module's dynamic symbol table, and leave the
            # library's debug info out of the module (17 MB -> 1.7 MB).
            ext.extra_link_args = list(ext.extra_link_args) + cfg.get("ldflags", []) + [
                "-Wl,--exclude-libs," + LIB, "-Wl,--strip-debug"]
        super().build_extensions()


setup(
    packages=["ecjit"],
    ext_modules=[
        Pybind11Extension(
            "ecjit._ecjit",
            ["src/ecjit_module.cpp"],
            depends=["src/docstrings.h"],
            cxx_std=17,
            # No debug info: a quick build (the library's own objects keep theirs).
            extra_compile_args=["-g0"],
        )
    ],
    cmdclass={"build_ext": EcjitBuildExt},
    zip_safe=False,
)
