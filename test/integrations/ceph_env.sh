# ceph_env.sh: Debian's Ceph packages for the Ceph integration tests (sourced after common.sh,
# not run): fetched with `apt-get download` and unpacked with `dpkg -x` into a cache, nothing
# installed. Sets TOOL (ceph-erasure-code-tool), ECDIR (its plugins), LDP (its library path),
# CEPH_OPTS (no cluster: crash reports and sockets in the scratch dir) and S (a scratch dir,
# removed on exit unless ECJIT_CEPH_KEEP=1); calls skip when the packages cannot be had.
# Cache: ${ECJIT_CEPH_CACHE:-/var/tmp/ecjit-ceph} (debs + unpacked root, reused).
ARCH_TRIPLET=x86_64-linux-gnu
CACHE=${ECJIT_CEPH_CACHE:-/var/tmp/ecjit-ceph}

# ---- packages -> cache ----------------------------------------------------------------------
[[ $(dpkg --print-architecture 2>/dev/null) == amd64 ]] || skip "Debian amd64 only (Ceph's .debs are fetched for amd64)"
# ceph-osd: /usr/bin/ceph-erasure-code-tool; ceph-base: .../ceph/erasure-code/libec_isa.so;
# librados2: .../ceph/libceph-common.so.2 (the tool's only Ceph dependency).
CEPH_PKGS="ceph-osd ceph-base librados2"
# Shared-library dependencies of the tool and libceph-common.so.2 (librados2's Depends, and theirs);
# only those not installed on this system are fetched, and they too are only unpacked in the cache.
LIB_PKGS="libboost-thread1.74.0 libboost-iostreams1.74.0 libfmt9 libibverbs1 librdmacm1
          libnl-3-200 libnl-route-3-200 libssl3 libudev1 libblkid1 libbz2-1.0 liblzma5 libzstd1 zlib1g"
ROOT=$CACHE/root
mkdir -p "$CACHE" || skip "cannot create the cache $CACHE"
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.lock"
  flock 9
fi
if [[ ! -f $ROOT/.ready ]]; then
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || skip "apt-get / dpkg-deb not available"
  candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }'; }
  if [[ -z $(candidate ceph-osd) || $(candidate ceph-osd) == "(none)" ]] && [[ $(id -u) == 0 ]]; then
    apt-get update -qq >/dev/null 2>&1
  fi
  [[ -n $(candidate ceph-osd) && $(candidate ceph-osd) != "(none)" ]] ||
    skip "no ceph-osd package in the apt sources (apt-get update first?)"
  want=$CEPH_PKGS
  for p in $LIB_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || want="$want $p"
  done
  rm -rf "$CACHE/debs.new" "$CACHE/root.new"
  mkdir -p "$CACHE/debs.new" "$CACHE/root.new"
  say "first run: apt-get download $want"
  # (apt warns that root downloads unsandboxed; harmless, kept in the log)
  download() { (cd "$CACHE/debs.new" && apt-get download $want) >"$CACHE/download.log" 2>&1; }
  # a stale package list names versions the mirror no longer has: update once and retry
  if ! download; then
    got=0
    if [[ $(id -u) == 0 ]] && apt-get update -qq >/dev/null 2>&1; then
      rm -f "$CACHE"/debs.new/*.deb
      download && got=1
    fi
    if ((got == 0)); then
      tail -5 "$CACHE/download.log"
      rm -rf "$CACHE/debs.new" "$CACHE/root.new"
      skip "apt-get download failed (log: $CACHE/download.log)"
    fi
  fi
  for d in "$CACHE"/debs.new/*.deb; do
    dpkg-deb -x "$d" "$CACHE/root.new" || { rm -rf "$CACHE/root.new"; skip "dpkg-deb -x $d failed"; }
  done
  for d in "$CACHE"/debs.new/*.deb; do
    dpkg-deb --show --showformat='${Package} ${Version}\n' "$d"
  done >"$CACHE/root.new/.ready"
  rm -rf "$CACHE/debs" "$ROOT"
  mv "$CACHE/debs.new" "$CACHE/debs"
  mv "$CACHE/root.new" "$ROOT"
fi
command -v flock >/dev/null && exec 9>&-

TOOL=$ROOT/usr/bin/ceph-erasure-code-tool
ECDIR=$ROOT/usr/lib/$ARCH_TRIPLET/ceph/erasure-code
[[ -x $TOOL ]] || skip "the unpacked packages lack ceph-erasure-code-tool (delete $CACHE and retry)"
LDP=$ROOT/usr/lib/$ARCH_TRIPLET:$ROOT/usr/lib/$ARCH_TRIPLET/ceph:$ROOT/lib/$ARCH_TRIPLET
missing=$(LD_LIBRARY_PATH=$LDP ldd "$TOOL" 2>&1 | awk '/not found/ { print $1 }' | sort -u | paste -sd' ' -)
[[ -z $missing ]] || skip "ceph-erasure-code-tool needs libraries not found: $missing (add their packages to LIB_PKGS)"
say "Debian packages in $CACHE: $(grep -E '^(ceph-osd|ceph-base|librados2) ' "$ROOT/.ready" | paste -sd',' - | sed 's/,/, /g')"
extra=$(grep -vE '^(ceph-osd|ceph-base|librados2) ' "$ROOT/.ready" | awk '{ print $1 }' | paste -sd' ' -)
[[ -z $extra ]] || say "system libraries unpacked into the cache (not installed): $extra"

# ---- scratch, environment -------------------------------------------------------------------
S=$(mktemp -d "${TMPDIR:-/tmp}/ecjit-ceph.XXXXXX")
if [[ ${ECJIT_CEPH_KEEP:-0} == 1 ]]; then
  trap 'echo "ceph: scratch kept in $S"' EXIT
else
  trap 'rm -rf "$S"' EXIT
fi
mkdir -p "$S/crash" "$S/run"
unset CEPH_ARGS CEPH_CONF LD_PRELOAD LD_DEBUG LD_DEBUG_OUTPUT ECJIT_ISAL_COMPILE
# Crash reports and admin sockets go to the scratch dir, never to /var/lib/ceph or /var/run/ceph.
CEPH_OPTS=(-c /dev/null --erasure_code_dir="$ECDIR" --crash_dir="$S/crash" --run_dir="$S/run"
  --admin_socket= --log_file=)
