#!/usr/bin/env bash
# lint-proto.sh — lints proto/ with buf, pinned by tools/buf/package-lock.json and
# installed with `npm ci` (no global install). Fails on any lint finding.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v npm >/dev/null 2>&1; then
  echo "lint-proto: npm is missing; run deploy/local/install-deps.sh" >&2
  exit 1
fi
(cd tools/buf && npm ci --no-audit --no-fund --loglevel=error)
cd proto
../tools/buf/node_modules/.bin/buf lint
echo "lint-proto: buf lint passed ($(../tools/buf/node_modules/.bin/buf --version))"
