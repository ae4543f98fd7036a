#!/usr/bin/env bash
# breaking-proto.sh — `buf breaking` of proto/ against an earlier commit of this checkout
# (rules: proto/buf.yaml `breaking`), with the buf pinned by tools/buf/package-lock.json.
# Offline: buf reads the earlier proto/ from the local .git. Part of deploy/local/test.sh.
#
# Usage: deploy/local/breaking-proto.sh [<git ref>]   (or SMCRYPT_PROTO_AGAINST=<git ref>)
# Without a ref, the baseline is the first of:
#   1. the most recent tag reachable from HEAD (one on HEAD itself: the one before it),
#      so everything since the last release is checked against it;
#   2. when HEAD is not on main (main, else origin/main): its merge base with main, so a
#      branch is checked against where it left main;
#   3. HEAD~1 (the first parent), so each commit on main is checked against the one before.
# No baseline in this checkout (no .git, a shallow clone, a root commit, no main to merge
# from): the check is skipped, saying why, and exits 0. A ref given explicitly must exist.
# Exits 1 on a breaking change, listing each one.
set -euo pipefail
cd "$(dirname "$0")/../.."

skip() {
  echo "breaking-proto: SKIPPED, no baseline to compare proto/ with: $1"
  exit 0
}

against=${1:-${SMCRYPT_PROTO_AGAINST:-}}
if ! command -v git >/dev/null 2>&1; then
  [ -z "$against" ] || { echo "breaking-proto: git is missing" >&2; exit 1; }
  skip "git is not installed"
fi
# (A copy without .git inside some other repository is not a checkout of smcrypt either.)
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ]; then
  [ -z "$against" ] || { echo "breaking-proto: not a git checkout" >&2; exit 1; }
  skip "$(pwd) is not a git checkout (no history)"
fi

# commit_of <ref>: the full hash of the commit <ref> names, if this clone has it.
commit_of() { git rev-parse --verify --quiet "$1^{commit}" 2>/dev/null; }

shallow=""
if [ "$(git rev-parse --is-shallow-repository)" = "true" ]; then
  shallow=" (shallow clone: fetch more history, e.g. git fetch --unshallow)"
fi

if [ -n "$against" ]; then
  sha=$(commit_of "$against") || {
    echo "breaking-proto: $against is not a commit in this clone$shallow" >&2
    exit 1
  }
  why="$against (given)"
else
  head=$(git rev-parse HEAD)
  tag=""
  # Tags on HEAD itself are passed over: HEAD against HEAD checks nothing.
  if tag=$(git describe --tags --abbrev=0 HEAD 2>/dev/null) &&
     [ "$(commit_of "$tag")" = "$head" ]; then
    tag=$(git describe --tags --abbrev=0 HEAD~1 2>/dev/null) || tag=""
  fi
  main=""
  for m in refs/heads/main refs/remotes/origin/main; do
    if commit_of "$m" >/dev/null; then main=$m; break; fi
  done
  if [ -n "$tag" ]; then
    sha=$(commit_of "$tag")
    why="tag $tag, the most recent reachable from HEAD"
  elif [ -n "$main" ] && ! git merge-base --is-ancestor HEAD "$main"; then
    sha=$(git merge-base HEAD "$main") ||
      skip "HEAD and ${main#refs/*/} share no commit in this clone$shallow"
    why="merge base of HEAD with ${main#refs/*/}"
  else
    sha=$(commit_of HEAD~1) || {
      if [ -n "$shallow" ]; then skip "HEAD's parent is not in this clone$shallow"; fi
      skip "HEAD is the repository's first commit"
    }
    why="HEAD~1, the commit before HEAD"
    [ -n "$main" ] || why="$why (this clone has no main or origin/main)"
  fi
fi

git cat-file -e "$sha:proto/buf.yaml" 2>/dev/null ||
  skip "$(git rev-parse --short "$sha") ($why) has no proto/buf.yaml"

required=$(sed -n 's/.*"@bufbuild\/buf": *"\([^"]*\)".*/\1/p' tools/buf/package.json)
buf=tools/buf/node_modules/.bin/buf
if [ "$("$buf" --version 2>/dev/null)" != "$required" ]; then
  command -v npm >/dev/null 2>&1 ||
    { echo "breaking-proto: npm is missing; run deploy/local/install-deps.sh" >&2; exit 1; }
  (cd tools/buf && npm ci --no-audit --no-fund --loglevel=error)
fi

echo "breaking-proto: proto/ against $(git rev-parse --short "$sha"), $why"
# subdir=proto: the baseline's module root, so its buf.yaml (build.excludes) applies to it.
rc=0
"$buf" breaking proto --against ".git#ref=$sha,subdir=proto" || rc=$?
case $rc in
  0) echo "breaking-proto: no breaking change (buf $("$buf" --version), rules: proto/buf.yaml)" ;;
  100) echo "breaking-proto: FAILED: the changes above break clients of $(git rev-parse --short "$sha")" >&2
       exit 1 ;;
  *) echo "breaking-proto: FAILED: buf exited $rc before comparing" >&2
     exit 1 ;;
esac
