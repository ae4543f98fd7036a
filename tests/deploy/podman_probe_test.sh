#!/usr/bin/env bash
# podman_probe_test.sh SRC_ROOT — deploy/local/image.sh's host check (label deploy, < 1 s).
#
# 1. podman_unusable_reason (deploy/local/lib-podman.sh) on the error texts of
#    tests/deploy/podman_errors/: chroot-import.txt and bare-chroot-info.txt are the
#    output of `image.sh --probe` in a debootstrap chroot of Debian 12 with podman installed
#    (with /proc, /sys, /dev mounted: `podman import` fails to remount /; with /proc only:
#    `podman info` finds no /sys/fs/cgroup); overlay-on-overlay.txt, no-userns.txt and
#    proc-mount-refused.txt are podman's messages for those hosts. Each must name a reason;
#    every not-host-*.txt (a missing image, a failed build, a bare "no such file or
#    directory" where /sys/fs/cgroup exists) must not.
# 2. image.sh --probe with a podman on PATH that fails with one of those texts: exit 77 and
#    the reason for a host one, exit 1 and the error for the others, exit 0 when it works.
set -euo pipefail
src=$1
errors=$src/tests/deploy/podman_errors
# shellcheck source=deploy/local/lib-podman.sh
source "$src/deploy/local/lib-podman.sh"
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/cgroup"

for f in "$errors"/*.txt; do
  name=$(basename "$f" .txt)
  # The bare chroot's case depends on /sys/fs/cgroup: missing for it, present for the other.
  cgroup=$tmp/cgroup
  [[ $name == bare-chroot-info ]] && cgroup=$tmp/no-cgroup
  if reason=$(podman_unusable_reason "$(cat "$f")" "$cgroup"); then
    if [[ $name == not-host-* ]]; then
      echo "FAIL: $name: classified as a host that cannot run podman: $reason"; fail=1
    else
      echo "ok: $name -> $reason"
    fi
  else
    if [[ $name == not-host-* ]]; then
      echo "ok: $name -> a real failure"
    else
      echo "FAIL: $name: not classified"; fail=1
    fi
  fi
done

# image.sh --probe against a podman that prints FILE and exits 125 on the step named by
# FAIL_AT (info, import or run), and succeeds on the others.
mkdir "$tmp/bin"
cat >"$tmp/bin/podman" <<'FAKE'
#!/usr/bin/env bash
for a in "$@"; do
  if [[ $a == "$FAIL_AT" ]]; then cat "$ERROR_FILE" >&2; exit 125; fi
done
[[ " $* " == *" import "* ]] && cat >/dev/null
exit 0
FAKE
chmod +x "$tmp/bin/podman"
[[ -x $tmp/bin/runc ]] || printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/runc"
chmod +x "$tmp/bin/runc"
probe() {  # probe STEP FILE WANT_RC
  local rc=0 out
  out=$(PATH="$tmp/bin:$PATH" SMCRYPT_PODMAN_DIR=$tmp/conf FAIL_AT=$1 ERROR_FILE=$2 \
        "$src/deploy/local/image.sh" --probe 2>&1) || rc=$?
  if [[ $rc -ne $3 ]]; then
    echo "FAIL: image.sh --probe, $1 failing with $(basename "$2"): exit $rc, want $3: $out"; fail=1
  elif [[ $3 -eq 77 && $out != *"SKIP: podman cannot store or run an image on this host: "* ]]; then
    echo "FAIL: image.sh --probe gave no reason: $out"; fail=1
  else
    echo "ok: image.sh --probe, $1 failing with $(basename "$2"): exit $rc"
  fi
}
probe import "$errors/chroot-import.txt" 77
probe run "$errors/proc-mount-refused.txt" 77
probe info "$errors/overlay-on-overlay.txt" 77
probe import "$errors/not-host-build-failed.txt" 1
probe run "$errors/not-host-image-unknown.txt" 1
probe no-step /dev/null 0
exit $fail
