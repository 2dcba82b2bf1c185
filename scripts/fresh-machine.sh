#!/usr/bin/env bash
# The fresh-machine proof: runs the README's two commands on a freshly bootstrapped Debian 12 with
# a clean clone of this repository and nothing beside it.
#   1. `./scripts/run.sh` until /health shows the learned default and one classify_text answers;
#   2. `./scripts/test.sh` to the end.
# Slow (it installs every package and builds from nothing), so it is not part of the test suite.
#
# usage: sudo scripts/fresh-machine.sh [--keep] [--ccache DIR] [--root DIR] [--commit REV]
#   --keep        leave the root in place afterwards (default: removed)
#   --ccache DIR  share a compiler cache with the root (bind-mounted as its ccache dir): saves the
#                 compile time only; every package still comes from the README's install step, and
#                 a missing header or library still fails the build
#   --root DIR    where to bootstrap (default: a new directory under /var/tmp)
#   --commit REV  what to clone (default: HEAD; uncommitted changes are not part of a clone)
# Needs root, mmdebstrap (installed when missing) and git. The root gets only what reaching the
# package registries needs from this machine: its apt sources, its resolver, and the CA files that
# SSL_CERT_FILE, NODE_EXTRA_CA_CERTS and npm's cafile name; and the /etc/hosts every installed
# Debian has (localhost).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
keep=0
ccache_dir=""
root=""
commit=HEAD
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --ccache) ccache_dir="$(realpath "$2")"; shift 2 ;;
    --root) root="$2"; shift 2 ;;
    --commit) commit="$2"; shift 2 ;;
    *) echo "fresh-machine: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine: needs root (mmdebstrap and chroot)" >&2; exit 2; }
started=$(date +%s)
say() { echo "fresh-machine [$(( ($(date +%s) - started) / 60 ))m$(( ($(date +%s) - started) % 60 ))s]: $*" >&2; }

if ! command -v mmdebstrap >/dev/null; then
  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap >/dev/null
fi
[ -n "$root" ] || root="$(mktemp -d /var/tmp/mcpclass-fresh.XXXXXX)"
root="$(realpath -m "$root")"
rmdir "$root" 2>/dev/null || true # mmdebstrap wants a missing or empty target
logs="$(mktemp -d /var/tmp/mcpclass-fresh-logs.XXXXXX)"

kill_in_root() { # kill_in_root SIGNAL: every process whose root directory is the fresh root
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill "-$1" "${p#/proc/}" 2>/dev/null
  done
  return 0
}
cleanup() {
  set +e
  kill_in_root TERM
  sleep 1
  kill_in_root KILL # anything still running inside the root holds its mounts
  for m in $(findmnt -rn -o TARGET | grep -F "$root/" | sort -r); do umount -l "$m"; done
  if [ "$keep" -eq 0 ]; then rm -rf --one-file-system "$root"; else say "kept $root"; fi
}
trap cleanup EXIT

sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [ -s "$f" ] && sources+=("$f")
done
say "bootstrapping Debian bookworm (mmdebstrap --variant=apt) into $root from ${sources[*]}"
mmdebstrap --quiet --variant=apt --mode=root bookworm "$root" "${sources[@]}" >"$logs/mmdebstrap.log" 2>&1 ||
  { tail -20 "$logs/mmdebstrap.log" >&2; exit 1; }

# The clone sits at the same path as this checkout, so a shared compiler cache hits.
clone="$root$repo"
mkdir -p "$(dirname "$clone")"
git clone --quiet --no-local "$repo" "$clone"
git -C "$clone" checkout --quiet "$(git -C "$repo" rev-parse "$commit")"
say "cloned $(git -C "$clone" rev-parse --short HEAD) into $repo (nothing beside it: $(ls "$(dirname "$clone")" | tr '\n' ' '))"

# What reaching the registries needs, and nothing else.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# No package ships /etc/hosts: the installer (or a container runtime) writes it, and a bare
# bootstrap has none, so `localhost` would not resolve. This is the installer's.
[ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
mkdir -p "$root/etc/mcpclass-fresh"
env_in=(HOME=/root "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" LANG=C.UTF-8
        TERM=dumb CI=true)
carry_ca() { # carry_ca NAME FILE VAR...: FILE into the root, each VAR naming it there
  local name="$1" file="$2"
  shift 2
  [ -n "$file" ] && [ -f "$file" ] || return 0
  cp -L "$file" "$root/etc/mcpclass-fresh/$name.crt"
  for var in "$@"; do env_in+=("$var=/etc/mcpclass-fresh/$name.crt"); done
}
carry_ca ssl-cert-file "${SSL_CERT_FILE:-}" SSL_CERT_FILE
carry_ca node-extra-ca "${NODE_EXTRA_CA_CERTS:-}" NODE_EXTRA_CA_CERTS
npm_cafile="$(npm config get cafile 2>/dev/null | grep -v '^null$' || true)"
carry_ca npm-cafile "$npm_cafile" npm_config_cafile
if [ -n "$ccache_dir" ]; then
  mkdir -p "$ccache_dir" "$root/var/cache/mcpclass-ccache"
  mount --bind "$ccache_dir" "$root/var/cache/mcpclass-ccache"
  # the root's compilers are the same packages with other mtimes
  env_in+=(CCACHE_DIR=/var/cache/mcpclass-ccache CCACHE_COMPILERCHECK=content)
fi
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
in_root() { chroot "$root" /usr/bin/env -i "${env_in[@]}" /bin/bash -c "cd '$repo' && $1"; }

port="$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
say "README command 1: ./scripts/run.sh --http 127.0.0.1:$port (log $logs/run.log)"
in_root "./scripts/run.sh --http 127.0.0.1:$port" >"$logs/run.log" 2>&1 &
server_pid=$!
health=""
while [ -z "$health" ]; do
  kill -0 "$server_pid" 2>/dev/null || { tail -30 "$logs/run.log" >&2; say "run.sh exited before serving"; exit 1; }
  [ $(( $(date +%s) - started )) -lt 10800 ] || { tail -30 "$logs/run.log" >&2; say "run.sh served nothing in 3 h"; exit 1; }
  sleep 10
  health="$(curl -sf "http://127.0.0.1:$port/health" || true)"
done
say "/health: $health"
grep -q '"trained_head"' <<<"$health" || { say "run.sh does not serve the learned default"; exit 1; }
answer="$(curl -sf -X POST "http://127.0.0.1:$port/mcp/tools/call" -H 'Content-Type: application/json' \
  -d '{"name":"classify_text","arguments":{"text":"Under what circumstances can a contract be voided for duress?"}}')"
say "classify_text: $answer"
grep -q '"class"' <<<"$answer" || { say "classify_text gave no class"; exit 1; }
grep -E '^run: ' "$logs/run.log" >&2 || true
kill_in_root TERM
wait "$server_pid" 2>/dev/null || true

say "README command 2: ./scripts/test.sh (log $logs/test.log)"
set +e
in_root './scripts/test.sh' >"$logs/test.log" 2>&1
rc=$?
set -e
system_node="$(chroot "$root" /usr/bin/node --version 2>/dev/null || echo none)"
say "summary: test.sh exit $rc"
{
  echo "  system node: $system_node; $(grep -m1 '^test: node' "$logs/test.log" || echo 'test: system node used')"
  grep -E '^check-deb-closure: ' "$logs/test.log" | sed 's/^/  /'
  grep -E 'tests passed|tests failed out of|Total Test time' "$logs/test.log" | sed 's/^/  /'
  sed -n '/^=== mcpclass_tests under AddressSanitizer/,$p' "$logs/test.log" |
    grep -E '^\[doctest\] (test cases|Status)' | sed 's/^/  ASan+UBSan: /'
  skipped="$(grep -hiE 'Not Run|\*\*\*Skipped|did not run|is skipped|SKIPPED:' "$logs/run.log" "$logs/test.log" || true)"
  echo "  skipped: ${skipped:-none}"
  echo "  logs: $logs"
} >&2
[ "$rc" -eq 0 ] && [ -z "$skipped" ] || exit 1
say "PASS: both README commands work on a fresh Debian 12"
