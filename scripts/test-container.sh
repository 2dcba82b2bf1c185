#!/usr/bin/env bash
# Builds the Containerfile's image and checks that it serves: GET /health names the learned
# default and one classify_text answers. Heavy (the build stage installs every package and
# compiles the project), so it is not part of the test suite.
#   1. a Debian bookworm base image from `mmdebstrap` (this machine's apt sources), `podman import`;
#   2. `podman build --isolation chroot` on the vfs storage driver, from a clean `git archive` of
#      HEAD (plus, when this machine's cache has it, the pinned USE-lite tarball, so the build
#      need not reach the npm registry);
#   3. `podman run` is refused on some machines (crun cannot setrlimit there), so the image is
#      mounted (`podman image mount`) and its entrypoint run in a chroot, as the image's user,
#      on the host network.
# usage: sudo scripts/test-container.sh [--keep]   (--keep: leave the image and work directory)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
keep=0
[ "${1:-}" = "--keep" ] && keep=1
[ "$(id -u)" -eq 0 ] || { echo "test-container: needs root (mmdebstrap, podman, chroot)" >&2; exit 2; }
started=$(date +%s)
say() { echo "test-container [$(( $(date +%s) - started ))s]: $*" >&2; }

missing=()
for tool in podman mmdebstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
podman=(podman --storage-driver vfs)
work="$(mktemp -d /var/tmp/mcpclass-container.XXXXXX)"
base=localhost/mcpclass-base:bookworm
image=localhost/mcpclass:test
server_pid=""
mnt=""
cleanup() {
  set +e
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  if [ -n "$mnt" ]; then
    umount "$mnt/proc" 2>/dev/null
    "${podman[@]}" image unmount "$image" >/dev/null 2>&1
  fi
  if [ "$keep" -eq 0 ]; then
    "${podman[@]}" rmi -f "$image" "$base" >/dev/null 2>&1
    rm -rf "$work"
  else
    say "kept $work, $image and $base"
  fi
}
trap cleanup EXIT

sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [ -s "$f" ] && sources+=("$f")
done
say "mmdebstrap bookworm -> $work/rootfs.tar"
mmdebstrap --quiet --variant=apt --mode=root bookworm "$work/rootfs.tar" "${sources[@]}" \
  >"$work/mmdebstrap.log" 2>&1 || { tail -20 "$work/mmdebstrap.log" >&2; exit 1; }
"${podman[@]}" import "$work/rootfs.tar" "$base" >/dev/null
rm -f "$work/rootfs.tar"

mkdir -p "$work/context"
git -C "$repo" archive HEAD | tar -x -C "$work/context"
cache="${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpclass}"
# shellcheck source=/dev/null
source <(grep -E '^(PACKAGE|VERSION|SHA256)=' "$repo/models/use-lite/package.lock")
tgz="$cache/downloads/${PACKAGE//[@\/]/_}-$VERSION.tgz"
if [ -f "$tgz" ] && [ "$(sha256sum "$tgz" | cut -d' ' -f1)" = "$SHA256" ]; then
  mkdir -p "$work/context/.cache-seed/downloads"
  cp "$tgz" "$work/context/.cache-seed/downloads/"
  say "seeded the build with $(basename "$tgz")"
fi

say "podman build (log $work/build.log)"
"${podman[@]}" build --isolation chroot --network host --build-arg "BASE=$base" -t "$image" \
  -f "$work/context/Containerfile" "$work/context" >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log" >&2; say "podman build failed"; keep=1; exit 1; }
say "built $image: $("${podman[@]}" image inspect --format '{{.Size}}' "$image") bytes"

entrypoint="$("${podman[@]}" image inspect --format '{{range .Config.Entrypoint}}{{.}} {{end}}' "$image")"
user="$("${podman[@]}" image inspect --format '{{.Config.User}}' "$image")"
mapfile -t envs < <("${podman[@]}" image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image" | grep -v '^$')
if [ -z "$user" ] || [ "${user%%:*}" = 0 ] || [ "${user%%:*}" = root ]; then
  say "the image runs as '${user:-root}', not as an unprivileged user"
  exit 1
fi
mnt="$("${podman[@]}" image mount "$image")"
mount -t proc proc "$mnt/proc"
port="$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
say "running '$entrypoint' as $user in a chroot of $mnt on 127.0.0.1:$port"
# shellcheck disable=SC2086
chroot --userspec="$user" "$mnt" /usr/bin/env -i "${envs[@]}" $entrypoint serve \
  --http "127.0.0.1:$port" --stateless --config /etc/mcpclass/mcpclass.yaml >"$work/serve.log" 2>&1 &
server_pid=$!
health=""
for _ in $(seq 120); do
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log" >&2; say "the server exited"; exit 1; }
  health="$(curl -sf "http://127.0.0.1:$port/health" || true)"
  [ -n "$health" ] && break
  sleep 1
done
say "/health: $health"
grep -q '"trained_head"' <<<"$health" || { cat "$work/serve.log" >&2; say "not the learned default"; exit 1; }
answer="$(curl -sf -X POST "http://127.0.0.1:$port/mcp/tools/call" -H 'Content-Type: application/json' \
  -d '{"name":"classify_text","arguments":{"text":"Under what circumstances can a contract be voided for duress?"}}')"
say "classify_text: $answer"
grep -q '"isError":false' <<<"$answer" || { say "classify_text failed"; exit 1; }
say "PASS"
