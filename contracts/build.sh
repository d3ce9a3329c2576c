#!/usr/bin/env bash
# Compiles contracts/src with the solc-js version pinned in package.json
# (installed into contracts/node_modules, which git ignores) and regenerates
# the committed artifacts: contracts/build/*.abi|bin and the Go bindings in
# chain/bindings (abigen of the go-ethereum version go.mod requires).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"

if [ ! -f "$here/node_modules/solc/package.json" ] || \
   [ "$(node -p "require('$here/node_modules/solc/package.json').version")" != "$(node -p "require('$here/package.json').dependencies.solc")" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
names=$(node "$here/build.js")

gethver=$(cd "$root" && go list -m -f '{{.Version}}' github.com/ethereum/go-ethereum)
mkdir -p "$root/chain/bindings"
for n in $names; do
  lower=$(echo "$n" | tr '[:upper:]' '[:lower:]')
  (cd "$root" && go run "github.com/ethereum/go-ethereum/cmd/abigen@$gethver" \
    --abi "contracts/build/$n.abi" --bin "contracts/build/$n.bin" \
    --pkg bindings --type "$n" --out "chain/bindings/$lower.go")
done
