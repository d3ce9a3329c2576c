#!/usr/bin/env bash
# Fails when the committed contract artifacts (ABI, bytecode, Go bindings)
# differ from what contracts/build.sh produces from the sources.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/contracts/build.sh" >/dev/null
cd "$root"
if ! git diff --quiet -- contracts/build chain/bindings || [ -n "$(git ls-files --others --exclude-standard contracts/build chain/bindings)" ]; then
  echo "contract artifacts are stale: run contracts/build.sh and commit the result" >&2
  git status --short -- contracts/build chain/bindings >&2
  exit 1
fi
echo "contract artifacts match the sources"
