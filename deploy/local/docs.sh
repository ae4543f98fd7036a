#!/usr/bin/env bash
# docs.sh — builds the documentation site (mkdocs.yml at the repository root, pages in docs/)
# with MkDocs and the material theme, offline (Debian packages mkdocs, mkdocs-material).
# --strict fails the build on any warning, such as a link to a file that is not a page; MkDocs
# 1.4 only reports a page of docs/ missing from mkdocs.yml's nav, so this script fails on that
# report too. The site goes to $SITE_DIR (default build-docs/, ignored by git).
set -euo pipefail
cd "$(dirname "$0")/../.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
mkdocs build --strict --site-dir "${SITE_DIR:-build-docs}" 2>&1 | tee "$log" || status=$?
if [ "$status" -ne 0 ]; then
  echo "docs: mkdocs build --strict failed" >&2
  exit "$status"
fi
if grep -q 'not included in the "nav" configuration' "$log"; then
  echo "docs: every page of docs/ must be listed in mkdocs.yml's nav" >&2
  exit 1
fi
echo "docs: site built in ${SITE_DIR:-build-docs}/" >&2
