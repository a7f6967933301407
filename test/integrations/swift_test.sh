#!/usr/bin/env bash
# swift_test: an OpenStack Swift all-in-one (Debian 12's Swift 2.30) whose erasure-coding policy
# runs on ecjit's libisal.so.2.
#
#   swift_test.sh <drop-in dir, e.g. build/isal-compat>
#
# On 127.0.0.1: memcached, a proxy (tempauth), an account, a container and six object servers,
# each started directly (`swift-*-server <conf> -v`, workers = 0, one process each, own process
# group), rings built here. Policy 0 is a 1-replica replication policy, policy 1 ("ec42") is
# ec_type = isa_l_rs_vand, 4 data + 2 parity fragments, 1 MiB segments, one fragment per object
# server. liberasurecode dlopen()s "libisal.so.2", so LD_LIBRARY_PATH=<drop-in dir> puts ecjit
# under every encode (proxy PUT), decode (proxy GET) and rebuild (object reconstructor).
#
# What it proves:
#   - the drop-in is mapped in every server that maps a libisal (proxy and object servers at
#     least), the system /usr/lib/x86_64-linux-gnu/libisal.so.2 is not (/proc/PID/maps);
#   - ecjit really ran: a small preloaded probe prints ecjit_isal_get_stats() at process exit
#     (proxy, reconstructors); needs a C compiler, otherwise skipped with a SKIP line;
#   - PUT and GET of 0 B .. 20 MiB random objects (md5 of the GET and the PUT's ETag);
#     6 fragment archives #0..#5 per object, one per object server;
#   - GET of three objects after deleting two fragment files of each on disk (ISA-L decode);
#   - swift-object-reconstructor (once, per object-server config) rebuilds the six deleted
#     fragment files, byte-identical to the originals (the deleted files' suffixes are first
#     invalidated with Swift's own diskfile.invalidate_hash, as Swift does when it removes a
#     file itself: a file deleted behind its back is otherwise invisible to a partition whose
#     suffix hashes are already cached in hashes.pkl);
#   - all servers restarted without LD_LIBRARY_PATH (system ISA-L in the maps, ecjit absent):
#     every object still reads back, also with two fragments deleted again (system ISA-L
#     decoding ecjit-encoded fragments), and the same bytes PUT again produce fragment archives
#     byte-identical to the ecjit ones.
#
# swift.conf: Swift's servers read /etc/swift/swift.conf, with no option to look elsewhere. The
# script re-runs itself in a private mount namespace (unshare -m) and bind-mounts its scratch
# config dir over /etc/swift there, so /etc is never written. Without unshare (or with
# ECJIT_SWIFT_NO_NS=1) it writes /etc/swift/swift.conf and restores the original on exit (says
# so; two such runs at once would clash). Needs root (SKIP otherwise).
#
# Packages (installed with apt-get when missing, else SKIP): swift swift-proxy swift-account
# swift-container swift-object python3-swift python3-pyeclib liberasurecode1 libisal2, memcached
# (tempauth keeps its tokens in memcache) and curl (the client). Server logs (-v: to stderr) and
# everything else live in the scratch dir (mktemp -d, removed on exit; ECJIT_SWIFT_KEEP=1 keeps
# it); a failed check prints the relevant log's tail. Exit 0 pass, 1 with FAIL lines, 0 with
# "SKIP: why" when Swift cannot run here. ECJIT_ISAL_* variables are passed to the servers.
set -u -o pipefail

T0=${ECJIT_SWIFT_T0:-$(date +%s.%N)}
SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
IT_NAME=swift
source "$(dirname "$SELF")/common.sh"
it_start "$@"
ARCH_TRIPLET=x86_64-linux-gnu
SYS_DIR=/usr/lib/$ARCH_TRIPLET
PY=/usr/bin/python3

# ---- packages ---------------------------------------------------------------------------------
PKGS="swift swift-proxy swift-account swift-container swift-object python3-swift python3-pyeclib
      liberasurecode1 libisal2 memcached curl"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=
for p in $PKGS; do installed "$p" || missing="$missing $p"; done
if [[ -n $missing ]]; then
  [[ $(id -u) == 0 ]] || skip "Swift packages missing ($missing) and not root to install them"
  command -v apt-get >/dev/null || skip "Swift packages missing ($missing) and no apt-get"
  say "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends $missing >/tmp/ecjit-swift-apt.log 2>&1; then
    apt-get update -qq >/dev/null 2>&1
    apt-get install -y --no-install-recommends $missing >/tmp/ecjit-swift-apt.log 2>&1 ||
      { tail -5 /tmp/ecjit-swift-apt.log; skip "apt-get install$missing failed (log: /tmp/ecjit-swift-apt.log)"; }
  fi
fi
for b in swift-proxy-server swift-account-server swift-container-server swift-object-server \
  swift-object-reconstructor swift-ring-builder memcached curl; do
  command -v "$b" >/dev/null || skip "$b not found"
done
[[ -x $PY ]] || skip "$PY not found"
[[ -f $SYS_DIR/libisal.so.2 ]] || skip "no system ISA-L at $SYS_DIR/libisal.so.2"
SYS_REAL=$(readlink -f "$SYS_DIR/libisal.so.2")
$PY -c 'import swift, pyeclib.ec_iface' 2>/dev/null || skip "$PY cannot import swift and pyeclib"

# ---- swift.conf: a private mount namespace, /etc/swift bind-mounted from the scratch dir ------
# Root only: in a user namespace (unshare -r) the servers would run as uid 0 and Swift's daemons
# then call setgroups(), which a user namespace denies (the reconstructor dies on EPERM).
[[ $(id -u) == 0 ]] || skip "needs root (Swift reads /etc/swift/swift.conf only; the test mounts its own over it)"
if [[ ${ECJIT_SWIFT_NS:-} != 1 && ${ECJIT_SWIFT_NO_NS:-0} != 1 && -d /etc/swift ]] &&
  unshare --mount --propagation private true 2>/dev/null; then
  ECJIT_SWIFT_NS=1 ECJIT_SWIFT_T0=$T0 exec unshare --mount --propagation private /bin/bash "$SELF" "$@"
fi
NS=${ECJIT_SWIFT_NS:-0}
unset ECJIT_SWIFT_NS ECJIT_SWIFT_T0

# ---- scratch (xattrs needed: Swift keeps object metadata in user.swift.metadata*) -------------
xattr_ok() {
  $PY - "$1" <<'EOF' 2>/dev/null
import os, sys
p = os.path.join(sys.argv[1], '.xattr-probe')
open(p, 'w').close()
try:
    for i in range(8):   # Swift splits metadata into 254-byte xattrs
        os.setxattr(p, 'user.swift.metadata%s' % (i or ''), b'x' * 254)
    sys.exit(0 if len(os.getxattr(p, 'user.swift.metadata7')) == 254 else 1)
finally:
    os.unlink(p)
EOF
}
S=$(mktemp -d "${TMPDIR:-/tmp}/ecjit-swift.XXXXXX") || skip "mktemp -d failed"
if ! xattr_ok "$S"; then
  rmdir "$S"
  S=$(mktemp -d /var/tmp/ecjit-swift.XXXXXX) || skip "mktemp -d in /var/tmp failed"
  xattr_ok "$S" || { rmdir "$S"; skip "no user xattrs on ${TMPDIR:-/tmp} nor /var/tmp (Swift needs them)"; }
  say "NOTE: ${TMPDIR:-/tmp} has no user xattrs, scratch is $S"
fi

PGIDS=()    # process groups of everything started here (each server is its own group leader)
ETC_MODE=
ETC_BACKUP=
ETC_MADE=0
cleanup() {
  local rc=$?
  local g
  for g in "${PGIDS[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
  for _ in $(seq 50); do
    local alive=0
    for g in "${PGIDS[@]}"; do kill -0 -- "-$g" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for g in "${PGIDS[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
  if [[ $ETC_MODE == bind ]]; then
    umount /etc/swift 2>/dev/null
  elif [[ $ETC_MODE == write ]]; then
    if [[ -n $ETC_BACKUP && -f $ETC_BACKUP ]]; then
      cp -p "$ETC_BACKUP" /etc/swift/swift.conf
    else
      rm -f /etc/swift/swift.conf
      ((ETC_MADE)) && rmdir /etc/swift 2>/dev/null
    fi
  fi
  if [[ ${ECJIT_SWIFT_KEEP:-0} == 1 ]]; then
    echo "swift: scratch kept in $S"
  else
    rm -rf "$S"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

unset LD_PRELOAD LD_LIBRARY_PATH LD_DEBUG LD_DEBUG_OUTPUT PYTHONPATH PYTHONHOME PYTHONSTARTUP
ETC=$S/etc LOG=$S/log DATA=$S/data SAVED=$S/saved STATS=$S/stats
mkdir -p "$ETC" "$LOG" "$DATA" "$SAVED" "$STATS" "$S/cache" "$S/srv"

# ---- ports: 10 consecutive free loopback ports ------------------------------------------------
# Below the kernel's ephemeral range: a port in it can be taken between this check and the
# server's bind by any outgoing connection on the machine (one CI run lost its proxy port so).
BASE=$($PY - <<'EOF'
import random, socket
try:
    low = int(open('/proc/sys/net/ipv4/ip_local_port_range').read().split()[0])
except (OSError, ValueError, IndexError):
    low = 32768
top = max(low - 10, 12000)
for _ in range(50):
    base = random.randrange(10000, top, 10)
    socks = []
    try:
        for p in range(base, base + 10):
            s = socket.socket()
            s.bind(('127.0.0.1', p))
            socks.append(s)
        print(base)
        break
    except OSError:
        pass
    finally:
        for s in socks:
            s.close()
EOF
)
[[ -n $BASE ]] || skip "no 10 free consecutive loopback ports"
P_PROXY=$BASE P_ACCT=$((BASE + 1)) P_CONT=$((BASE + 2)) P_MEMC=$((BASE + 3))
P_OBJ=()
for i in 1 2 3 4 5 6; do P_OBJ[i]=$((BASE + 3 + i)); done

# ---- configuration ----------------------------------------------------------------------------
cat >"$ETC/swift.conf" <<EOF
[swift-hash]
swift_hash_path_suffix = ecjit-swift-test-suffix
swift_hash_path_prefix = ecjit-swift-test-prefix

[storage-policy:0]
name = rep1
default = yes

[storage-policy:1]
name = ec42
policy_type = erasure_coding
ec_type = isa_l_rs_vand
ec_num_data_fragments = 4
ec_num_parity_fragments = 2
ec_object_segment_size = 1048576
EOF

if ((NS)); then
  mount --bind "$ETC" /etc/swift || { echo "FAIL mount --bind $ETC /etc/swift in the mount namespace"; exit 1; }
  ETC_MODE=bind
  say "swift.conf: $ETC bind-mounted on /etc/swift in a private mount namespace (/etc untouched)"
else
  if [[ -f /etc/swift/swift.conf ]]; then
    ETC_BACKUP=$S/swift.conf.orig
    cp -p /etc/swift/swift.conf "$ETC_BACKUP" || { echo "FAIL cannot back up /etc/swift/swift.conf"; exit 1; }
  fi
  [[ -d /etc/swift ]] || { mkdir /etc/swift && ETC_MADE=1; }
  ETC_MODE=write
  cp "$ETC/swift.conf" /etc/swift/swift.conf
  say "NOTE: no mount namespace (unshare unavailable, or ECJIT_SWIFT_NO_NS=1): wrote /etc/swift/swift.conf, restored on exit"
fi

say "drop-in $LIB_REAL; system ISA-L $SYS_REAL; scratch $S; ports $BASE..$((BASE + 9))"
say "$(dpkg-query -W -f='${Package} ${Version}\n' swift python3-pyeclib liberasurecode1 libisal2 | paste -sd',' - | sed 's/,/, /g')"

# common [DEFAULT] of a server: <port> <devices dir> <log name>. `user`: Swift drops privileges to
# it (default "swift", who cannot enter the 0700 scratch dir); here the servers stay who we are.
RUN_USER=$(id -un)
server_default() {
  cat <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $1
workers = 0
devices = $2
mount_check = false
swift_dir = $ETC
recon_cache_path = $S/cache
user = $RUN_USER
log_name = $3
log_level = INFO
EOF
}

{
  server_default "$P_PROXY" "$S/srv" proxy-server
  cat <<EOF

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache tempauth proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
allow_account_management = true
conn_timeout = 2
node_timeout = 20

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:$P_MEMC

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:gatekeeper]
use = egg:swift#gatekeeper

[filter:healthcheck]
use = egg:swift#healthcheck

[filter:proxy-logging]
use = egg:swift#proxy_logging
EOF
} >"$ETC/proxy-server.conf"

for kind in account container; do
  port=$P_ACCT
  [[ $kind == container ]] && port=$P_CONT
  mkdir -p "$S/srv/$kind/$kind-d1"
  {
    server_default "$port" "$S/srv/$kind" "$kind-server"
    cat <<EOF

[pipeline:main]
pipeline = healthcheck $kind-server

[app:$kind-server]
use = egg:swift#$kind

[filter:healthcheck]
use = egg:swift#healthcheck
EOF
  } >"$ETC/$kind-server.conf"
done

for i in 1 2 3 4 5 6; do
  mkdir -p "$S/srv/obj$i/d$i"
  {
    server_default "${P_OBJ[i]}" "$S/srv/obj$i" "object-server-$i"
    cat <<EOF

[pipeline:main]
pipeline = healthcheck object-server

[app:object-server]
use = egg:swift#object

[filter:healthcheck]
use = egg:swift#healthcheck

[object-reconstructor]
log_name = object-reconstructor-$i
http_timeout = 20
node_timeout = 20
EOF
  } >"$ETC/object-server-$i.conf"
done

# ---- rings ------------------------------------------------------------------------------------
ring() { # <builder> <replicas> <devices...>
  local b=$ETC/$1.builder
  shift
  local r=$1
  shift
  swift-ring-builder "$b" create 4 "$r" 1 >>"$LOG/rings.log" 2>&1 || return 1
  local d
  for d in "$@"; do swift-ring-builder "$b" add "$d" 100 >>"$LOG/rings.log" 2>&1 || return 1; done
  swift-ring-builder "$b" rebalance >>"$LOG/rings.log" 2>&1
  (($? < 2)) && [[ -f $ETC/$(basename "$b" .builder).ring.gz ]]
}
obj_devs=()
for i in 1 2 3 4 5 6; do obj_devs+=("r1z$i-127.0.0.1:${P_OBJ[i]}/d$i"); done
if ring account 1 "r1z1-127.0.0.1:$P_ACCT/account-d1" &&
  ring container 1 "r1z1-127.0.0.1:$P_CONT/container-d1" &&
  ring object 1 "r1z1-127.0.0.1:${P_OBJ[1]}/d1" &&
  ring object-1 6 "${obj_devs[@]}"; then
  ok "rings: account, container (1 replica), object (policy 0, 1 replica), object-1 (ec42, 6 devices = 6 fragments, part power 4)"
else
  fail "swift-ring-builder (log below)"
  tail -20 "$LOG/rings.log"
  exit 1
fi

# ---- the stats probe (common.sh: ecjit_isal_get_stats() of the process's libisal.so.2, at exit)
it_build_probe "$S" "$LOG/probe.log"

# ---- servers ----------------------------------------------------------------------------------
declare -A PID=()      # name -> pid (= its process group)
SERVERS="proxy account container obj1 obj2 obj3 obj4 obj5 obj6"
conf_of() {
  case $1 in
    proxy) echo "$ETC/proxy-server.conf" ;;
    account | container) echo "$ETC/$1-server.conf" ;;
    obj*) echo "$ETC/object-server-${1#obj}.conf" ;;
  esac
}
bin_of() {
  case $1 in
    proxy) echo swift-proxy-server ;;
    account | container) echo "swift-$1-server" ;;
    obj*) echo swift-object-server ;;
  esac
}
port_of() {
  case $1 in
    proxy) echo "$P_PROXY" ;;
    account) echo "$P_ACCT" ;;
    container) echo "$P_CONT" ;;
    obj*) echo "${P_OBJ[${1#obj}]}" ;;
  esac
}

# A background job of a non-interactive shell starts with SIGINT ignored, and Python then never
# raises KeyboardInterrupt: give the servers SIGINT back so that they can exit normally.
ENV=(env)
env --default-signal=INT true 2>/dev/null && ENV=(env --default-signal=INT)

# start_all <phase: ecjit|system>
start_all() {
  local phase=$1 n
  for n in $SERVERS; do
    local env=("${ENV[@]}")
    [[ $phase == ecjit ]] && env+=("LD_LIBRARY_PATH=$DROPIN")
    if [[ -n $PROBE && $n == proxy ]]; then
      env+=("LD_PRELOAD=$PROBE" "ECJIT_STATS_FILE=$STATS/proxy-$phase")
    fi
    setsid "${env[@]}" "$(bin_of "$n")" "$(conf_of "$n")" -v >>"$LOG/$n.log" 2>&1 </dev/null &
    PID[$n]=$!
    PGIDS+=("$!")
  done
  # ready: every /healthcheck answers (60 s for all)
  local deadline=$((SECONDS + 60)) pending=$SERVERS
  while [[ -n ${pending// /} ]] && ((SECONDS < deadline)); do
    local still=
    for n in $pending; do
      if ! kill -0 "${PID[$n]}" 2>/dev/null; then
        fail "$phase: $n server exited at start-up (log $n.log):"
        tail -15 "$LOG/$n.log"
        return 1
      fi
      [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$(port_of "$n")/healthcheck") == 200 ]] ||
        still="$still $n"
    done
    pending=$still
    [[ -n ${pending// /} ]] && sleep 0.3
  done
  if [[ -n ${pending// /} ]]; then
    fail "$phase: servers not answering /healthcheck after 60 s:$pending"
    for n in $pending; do tail -10 "$LOG/$n.log"; done
    return 1
  fi
  return 0
}

# stop_all: SIGINT first (eventlet's wsgi.server returns on KeyboardInterrupt, so the process
# exits normally and the probe's destructor runs), then SIGTERM to the group, then SIGKILL.
stop_all() {
  local n
  for n in $SERVERS; do [[ -n ${PID[$n]:-} ]] && kill -INT "${PID[$n]}" 2>/dev/null; done
  local deadline=$((SECONDS + 10))
  for n in $SERVERS; do
    [[ -n ${PID[$n]:-} ]] || continue
    while kill -0 "${PID[$n]}" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    kill -TERM -- "-${PID[$n]}" 2>/dev/null # the rest of its group, if any (workers > 0)
  done
  sleep 0.2
  for n in $SERVERS; do
    [[ -n ${PID[$n]:-} ]] || continue
    kill -0 "${PID[$n]}" 2>/dev/null && { sleep 1; kill -KILL -- "-${PID[$n]}" 2>/dev/null; }
    wait "${PID[$n]}" 2>/dev/null
    PID[$n]=
  done
}

# isal_maps <pid>: the libisal files mapped in the process (real paths), space separated
isal_maps() { grep -o '/[^ ]*libisal[^ ]*' "/proc/$1/maps" 2>/dev/null | sort -u | paste -sd' ' -; }

# check_maps <phase>: proxy and object servers must map the phase's library; nobody the other one
check_maps() {
  local phase=$1 want=$LIB_REAL other=$SYS_REAL n m bad=0 mapped=
  [[ $phase == system ]] && want=$SYS_REAL other=$LIB_REAL
  for n in $SERVERS; do
    m=$(isal_maps "${PID[$n]}")
    if [[ " $m " == *" $other "* ]]; then
      fail "$phase: $n (pid ${PID[$n]}) maps $other: $m"
      bad=1
    elif [[ " $m " == *" $want "* ]]; then
      mapped="$mapped $n"
    elif [[ $n == proxy || $n == obj* ]]; then
      fail "$phase: $n (pid ${PID[$n]}) does not map $want (libisal mappings: ${m:-none})"
      bad=1
    fi
  done
  ((bad)) || ok "$phase: /proc/PID/maps of${mapped} show $want and not $other"
}

# ---- client -----------------------------------------------------------------------------------
TOKEN= STORAGE=
auth() {
  local h=$S/auth.hdr
  curl -sS --max-time 20 -o /dev/null -D "$h" -H "X-Auth-User: test:tester" -H "X-Auth-Key: testing" \
    "http://127.0.0.1:$P_PROXY/auth/v1.0" 2>>"$LOG/curl.log" || return 1
  TOKEN=$(awk 'tolower($1) == "x-auth-token:" { print $2 }' "$h" | tr -d '\r')
  STORAGE=$(awk 'tolower($1) == "x-storage-url:" { print $2 }' "$h" | tr -d '\r')
  [[ -n $TOKEN && -n $STORAGE ]]
}
# http <method> <path below the storage URL> <curl args...>: prints the status code
http() {
  local m=$1 p=$2
  shift 2
  curl -sS --max-time 120 -X "$m" -H "X-Auth-Token: $TOKEN" -w '%{http_code}' "$@" "$STORAGE/$p" 2>>"$LOG/curl.log"
}
get_obj() { http GET "$1" -o "$2"; }

# objects: name -> size (0 B .. 20 MiB, odd sizes, 1- and multi-segment)
SIZES="0 1 4095 65539 1048576 3145745 20971520"
CONT=ec
obj_name() { echo "o-$1"; }
declare -A HASH=()  # object name -> Swift's hash of /account/container/object (the dir name)
hash_all() {          # <object names...>: one python run for all
  local name h
  while read -r name h; do HASH[$name]=$h; done < <($PY -c '
import sys
from swift.common.utils import hash_path
for o in sys.argv[3:]:
    print(o, hash_path(sys.argv[1], sys.argv[2], o))' "${STORAGE##*/}" "$CONT" "$@")
}
obj_hash() { [[ -n ${HASH[$1]:-} ]] && echo "${HASH[$1]}"; }
# frag_files <object name>: its .data files under the EC policy's dirs, one per line
frag_files() {
  local h
  h=$(obj_hash "$1") || return 1
  find "$S/srv" -path "*/objects-1/*/$h/*.data" 2>/dev/null | sort
}
frag_index() { local b=${1##*/}; b=${b#*#}; echo "${b%%#*}"; } # <ts>#<idx>#d.data -> idx
frag_of() { frag_files "$1" | while read -r f; do [[ $(frag_index "$f") == "$2" ]] && echo "$f"; done; }

read_back() { # <phase> <label>: GET every object, compare bytes
  local phase=$1 label=$2 sz bad=0 code
  for sz in $SIZES; do
    code=$(get_obj "$CONT/$(obj_name "$sz")" "$DATA/got")
    if [[ $code != 200 ]]; then
      fail "$phase: GET $(obj_name "$sz") ($label): HTTP $code"
      bad=1
    elif ! cmp -s "$DATA/got" "$DATA/$sz"; then
      fail "$phase: GET $(obj_name "$sz") ($label): bytes differ (got $(stat -c %s "$DATA/got") B)"
      bad=1
    fi
  done
  ((bad == 0))
}

probe_line() { [[ -f $1 ]] && cat "$1"; }

# ============================== phase 1: ecjit's libisal.so.2 ==================================
settings=$(env | grep '^ECJIT_ISAL_' | sort | paste -sd' ' -)
[[ -z $settings ]] || say "passed to the servers: $settings"
[[ -n $PROBE ]] || skip_part "ecjit_isal_get_stats probe: no C compiler or ecjit_isal_compat.h (ecjit-ran checks skipped; maps checks still run)"

setsid memcached -u root -l 127.0.0.1 -p "$P_MEMC" -U 0 -m 16 -t 1 >"$LOG/memcached.log" 2>&1 </dev/null &
PGIDS+=("$!")
wait_dropin
start_all ecjit || exit 1
ok "ecjit: memcached, proxy, account, container and 6 object servers up (LD_LIBRARY_PATH=$DROPIN) in $(elapsed) s"
check_maps ecjit

auth || { fail "tempauth: no token (proxy and memcached logs below)"; tail -20 "$LOG/proxy.log" "$LOG/memcached.log"; exit 1; }
code=$(http PUT "$CONT" -o /dev/null -H "X-Storage-Policy: ec42")
pol=$(curl -sS --max-time 20 -I -H "X-Auth-Token: $TOKEN" "$STORAGE/$CONT" 2>>"$LOG/curl.log" |
  awk 'tolower($1) == "x-storage-policy:" { print $2 }' | tr -d '\r')
if [[ $code =~ ^20[12]$ && $pol == ec42 ]]; then
  ok "ecjit: container $CONT with X-Storage-Policy: ec42 (isa_l_rs_vand 4+2)"
else
  fail "ecjit: PUT container $CONT: HTTP $code, X-Storage-Policy '${pol}' (want ec42)"
  tail -20 "$LOG/proxy.log"
  exit 1
fi

names=()
for sz in $SIZES; do names+=("$(obj_name "$sz")" "$(obj_name "$sz")-sys"); done
hash_all "${names[@]}"
[[ ${#HASH[@]} == $((2 * $(echo "$SIZES" | wc -w))) ]] || { fail "hash_path of the object names"; exit 1; }

# PUT / GET
bad=0
for sz in $SIZES; do
  head -c "$sz" /dev/urandom >"$DATA/$sz"
  md5=$(md5sum <"$DATA/$sz" | cut -d' ' -f1)
  code=$(http PUT "$CONT/$(obj_name "$sz")" -T "$DATA/$sz" -D "$DATA/put.hdr" -o /dev/null)
  etag=$(awk 'tolower($1) == "etag:" { print $2 }' "$DATA/put.hdr" 2>/dev/null | tr -d '\r"')
  if [[ $code != 201 || $etag != "$md5" ]]; then
    fail "ecjit: PUT $(obj_name "$sz") ($sz B): HTTP $code, ETag '$etag' (md5 $md5)"
    bad=1
    continue
  fi
  code=$(get_obj "$CONT/$(obj_name "$sz")" "$DATA/got")
  if [[ $code != 200 ]] || [[ $(md5sum <"$DATA/got" | cut -d' ' -f1) != "$md5" ]]; then
    fail "ecjit: GET $(obj_name "$sz") ($sz B): HTTP $code, md5 $(md5sum <"$DATA/got" | cut -d' ' -f1) (want $md5)"
    bad=1
  fi
  n=$(frag_files "$(obj_name "$sz")" | wc -l)
  idx=$(frag_files "$(obj_name "$sz")" | while read -r f; do frag_index "$f"; done | sort -n | paste -sd, -)
  srv=$(frag_files "$(obj_name "$sz")" | sed -n 's|.*/srv/\(obj[0-9]\)/.*|\1|p' | sort -u | wc -l)
  if [[ $n != 6 || $idx != 0,1,2,3,4,5 || $srv != 6 ]]; then
    fail "ecjit: $(obj_name "$sz"): $n fragment archives, indexes $idx, on $srv object servers (want #0..#5 on 6)"
    bad=1
  fi
done
((bad)) && tail -20 "$LOG/proxy.log"
((bad)) || ok "ecjit: PUT+GET of $(echo "$SIZES" | wc -w) objects ($(echo "$SIZES" | sed 's/ / B, /g') B): ETag = md5, GET bytes equal, fragment archives #0..#5 on the 6 object servers"

# keep every fragment archive of the ecjit era (compared with the system ISA-L's later)
for sz in $SIZES; do
  mkdir -p "$SAVED/all/$sz"
  frag_files "$(obj_name "$sz")" | while read -r f; do cp -p "$f" "$SAVED/all/$sz/$(frag_index "$f")"; done
done

# degraded reads: two fragment files deleted per object
declare -A DELETE=([65539]="1 4" [3145745]="0 2" [20971520]="2 3") # data+parity, two data, two data
DELETED=()  # "path|saved copy"
bad=0
for sz in "${!DELETE[@]}"; do
  for i in ${DELETE[$sz]}; do
    f=$(frag_of "$(obj_name "$sz")" "$i")
    if [[ -z $f ]]; then
      fail "ecjit: $(obj_name "$sz"): no fragment #$i to delete"
      bad=1
      continue
    fi
    cp -p "$f" "$SAVED/$sz-$i"
    rm -f "$f"
    DELETED+=("$f|$SAVED/$sz-$i")
  done
  [[ $(frag_files "$(obj_name "$sz")" | wc -l) == 4 ]] || { fail "ecjit: $(obj_name "$sz"): not 4 fragments left after deleting 2"; bad=1; }
  code=$(get_obj "$CONT/$(obj_name "$sz")" "$DATA/got")
  if [[ $code != 200 ]] || ! cmp -s "$DATA/got" "$DATA/$sz"; then
    fail "ecjit: degraded GET $(obj_name "$sz") without fragments ${DELETE[$sz]}: HTTP $code, bytes $(cmp -s "$DATA/got" "$DATA/$sz" && echo equal || echo differ)"
    bad=1
  fi
done
((bad)) || ok "ecjit: degraded GETs with 2 of 6 fragment files deleted (o-65539: #1 #4, o-3145745: #0 #2, o-20971520: #2 #3) return the objects' bytes"

# reconstructor: Swift caches each partition's suffix hashes (hashes.pkl); a file deleted behind
# its back is noticed once the suffix is invalidated, which Swift itself does whenever it
# changes or quarantines a file there. Invalidate the suffixes of the deleted files, as that would.
for e in "${DELETED[@]}"; do
  f=${e%%|*}
  $PY -c 'import sys; from swift.obj.diskfile import invalidate_hash; invalidate_hash(sys.argv[1])' \
    "$(dirname "$(dirname "$f")")" 2>>"$LOG/invalidate.log" || fail "invalidate_hash $(dirname "$(dirname "$f")") (log invalidate.log)"
done
t_rec=$(date +%s.%N)
wait_dropin
for i in 1 2 3 4 5 6; do
  env=(env "LD_LIBRARY_PATH=$DROPIN")
  [[ -n $PROBE ]] && env+=("LD_PRELOAD=$PROBE" "ECJIT_STATS_FILE=$STATS/reconstructor-$i")
  setsid timeout 90 "${env[@]}" swift-object-reconstructor "$ETC/object-server-$i.conf" once -v \
    >"$LOG/reconstructor-$i.log" 2>&1 </dev/null &
  rp=$!
  PGIDS+=("$rp")
  wait "$rp"
  rc=$?
  ((rc == 0)) || { fail "ecjit: swift-object-reconstructor object-server-$i.conf once: exit $rc (log below)"; tail -15 "$LOG/reconstructor-$i.log"; }
done
t_rec=$(awk -v a="$t_rec" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
bad=0 rebuilt=0
for e in "${DELETED[@]}"; do
  f=${e%%|*} c=${e##*|}
  if [[ ! -f $f ]]; then
    now=$(find "$(dirname "$f")" -name '*.data' 2>/dev/null | paste -sd' ' -)
    fail "ecjit: reconstructor did not rebuild ${f#"$S"/} (in its dir now: ${now:-nothing})"
    bad=1
  elif ! cmp -s "$f" "$c"; then
    fail "ecjit: rebuilt ${f#"$S"/} differs from the deleted one ($(stat -c %s "$f") vs $(stat -c %s "$c") B, $(cmp "$f" "$c" 2>&1 | head -1))"
    bad=1
  else
    rebuilt=$((rebuilt + 1))
  fi
done
if ((bad)); then
  for i in 1 2 3 4 5 6; do grep -hiE 'error|exception|trace' "$LOG/reconstructor-$i.log" | head -5; done
else
  ok "ecjit: swift-object-reconstructor once x 6 ($t_rec s) rebuilt the $rebuilt deleted fragment files, byte-identical to the originals"
fi
read_back ecjit "after the rebuild" && ok "ecjit: all objects read back after the rebuild"

if [[ -n $PROBE ]]; then
  sum=0 lines=
  for i in 1 2 3 4 5 6; do
    l=$(probe_line "$STATS/reconstructor-$i")
    c=$(stat_field calls "$STATS/reconstructor-$i")
    sum=$((sum + ${c:-0}))
    [[ $l == *ecjit=present* ]] || { fail "ecjit: reconstructor $i: probe says '${l:-no stats file}' (want ecjit present)"; }
    lines="$lines $i:${c:-?}"
  done
  ((sum > 0)) && ok "ecjit: reconstructors ran on ecjit (ecjit_isal_get_stats calls per run:$lines)" ||
    fail "ecjit: no ecjit calls in the reconstructors (calls per run:$lines)"
fi

stop_all
if [[ -n $PROBE ]]; then
  l=$(probe_line "$STATS/proxy-ecjit")
  c=$(stat_field calls "$STATS/proxy-ecjit")
  if [[ $l == *ecjit=present* && ${c:-0} -gt 0 && $l != *failures=[1-9]* ]]; then
    ok "ecjit: the proxy's encodes/decodes ran on ecjit: $l"
  else
    fail "ecjit: proxy stats at exit: '${l:-no stats file (did the proxy exit normally on SIGINT?)}'"
  fi
fi

# ============================== phase 2: the system ISA-L =====================================
start_all system || exit 1
ok "system: the 9 servers restarted without LD_LIBRARY_PATH"
check_maps system
auth || { fail "system: tempauth: no token"; exit 1; }
read_back system "fragments written through ecjit" &&
  ok "system: all $(echo "$SIZES" | wc -w) objects written on ecjit read back byte for byte"

# degraded read on the system library of ecjit-encoded fragments
bad=0
for i in 0 3; do
  f=$(frag_of "$(obj_name 20971520)" "$i")
  [[ -n $f ]] && rm -f "$f" || { fail "system: no fragment #$i of o-20971520"; bad=1; }
done
code=$(get_obj "$CONT/$(obj_name 20971520)" "$DATA/got")
if [[ $code == 200 ]] && cmp -s "$DATA/got" "$DATA/20971520"; then
  ((bad)) || ok "system: degraded GET of o-20971520 without #0 #3 (system ISA-L decoding ecjit's fragments)"
else
  fail "system: degraded GET of o-20971520 without #0 #3: HTTP $code"
fi

# same bytes, encoded by the system ISA-L: fragment archives byte-identical to ecjit's
bad=0 nf=0
for sz in $SIZES; do
  name=$(obj_name "$sz")-sys
  code=$(http PUT "$CONT/$name" -T "$DATA/$sz" -o /dev/null)
  [[ $code == 201 ]] || { fail "system: PUT $name: HTTP $code"; bad=1; continue; }
  while read -r f; do
    i=$(frag_index "$f")
    nf=$((nf + 1))
    cmp -s "$f" "$SAVED/all/$sz/$i" || { fail "system: $name fragment #$i differs from ecjit's (${f#"$S"/})"; bad=1; }
  done < <(frag_files "$name")
  [[ $(frag_files "$name" | wc -l) == 6 ]] || { fail "system: $name: not 6 fragment archives"; bad=1; }
done
((bad)) || ok "system: the same $(echo "$SIZES" | wc -w) objects PUT on the system ISA-L give $nf fragment archives byte-identical to ecjit's"

stop_all
if [[ -n $PROBE ]]; then
  l=$(probe_line "$STATS/proxy-system")
  [[ $l == *ecjit=absent* && $l == isal=loaded* ]] && ok "system: the proxy ran ISA-L without ecjit (probe: $l)" ||
    fail "system: proxy probe says '${l:-no stats file}' (want isal=loaded ecjit=absent)"
fi

echo "swift: $PASSED passed, $FAILED failed, $SKIPPED skipped in $(elapsed) s"
((FAILED == 0)) || exit 1
exit 0
