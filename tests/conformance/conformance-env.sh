# Sourced by run-conformance.sh and run-client-conformance.sh: finds the pinned conformance
# runner, makes a work directory (removed on exit unless KEEP_RESULTS=1) and sets NODE_ARGS.
# Needs HERE (the calling script's folder); sets DIR, BIN, WORK and NODE_ARGS.
DIR="${MCP_CONFORMANCE_DIR:-$HERE}"
BIN="$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -f "$BIN" ] || { echo "conformance not installed under $DIR (npm install @modelcontextprotocol/conformance)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpconf.XXXXXX")"
cleanup() { [ "${KEEP_RESULTS:-0}" = 1 ] || rm -rf "$WORK"; }
trap cleanup EXIT

# conformance >= 0.1.14 does `import { globSync } from "fs"` (Node >= 22 only). On older Node,
# register a resolve hook that serves it an fs module with a minimal globSync.
NODE_ARGS=()
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  mkdir -p "$WORK/shim"
  cat > "$WORK/shim/register.mjs" <<'EOF'
import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
EOF
  cat > "$WORK/shim/hooks.mjs" <<'EOF'
const SHIM = new URL('./fs-shim.mjs', import.meta.url).href;
export async function resolve(s, ctx, next) {
  if ((s === 'fs' || s === 'node:fs') && ctx.parentURL?.includes('/@modelcontextprotocol/conformance/'))
    return { url: SHIM, shortCircuit: true };
  return next(s, ctx);
}
EOF
  cat > "$WORK/shim/fs-shim.mjs" <<'EOF'
import fs from 'node:fs'; import path from 'node:path';
export * from 'node:fs'; export default fs;
export function globSync(pattern, opts = {}) { // only "**/<name>" is used (tier-check)
  const cwd = opts.cwd ?? process.cwd(), base = pattern.replace(/^\*\*\//, ''), out = [];
  const walk = (rel) => { for (const e of fs.readdirSync(path.join(cwd, rel), { withFileTypes: true })) {
    const r = rel ? path.join(rel, e.name) : e.name; if (e.isDirectory()) walk(r); else if (e.name === base) out.push(r); } };
  walk(''); return out;
}
EOF
  NODE_ARGS=(--import "$WORK/shim/register.mjs")
fi
