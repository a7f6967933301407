# binding_args.sh: what the language-binding tests (python_test.sh, rust_test.sh, go_test.sh)
# share, sourced: their two arguments, the source and build directories, as SRC and BUILD.
if [[ $# -ne 2 ]]; then
  echo "usage: $0 <source dir> <build dir>" >&2
  exit 2
fi
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
