// ecjit-aot: `ecjit aot` alone, linked without libecjit, so the build can run it to make the kernels libecjit itself contains.
#include <cstdio>
#include <cstring>

#include "tools/commands.h"

int main(int argc, char **argv) {
  if (argc < 2 || std::strcmp(argv[1], "aot") != 0) {
    std::fprintf(stderr,
                 "usage: ecjit-aot aot [options]    (the `ecjit aot` command; ecjit-aot aot --help)\n"
                 "\nthe build's own ahead-of-time compiler: it links the JIT layers but not libecjit, so\n"
                 "libecjit and the ISA-L drop-in can contain kernels it writes\n");
    return 2;
  }
  return ecjit::tools::cmd_aot(argc - 2, argv + 2);
}
