#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/../.."
exec mkdocs build --strict --site-dir "${SITE_DIR:-build-docs}" "$@"
