#!/usr/bin/env bash
# podman.sh ARGS... — runs podman with the settings smcrypt's image build and container
# tests use on a Debian 12 host (podman 4.3):
#   - CONTAINERS_CONF: a containers.conf of smcrypt's own (written on first use to
#     ${SMCRYPT_PODMAN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/smcrypt-podman}/containers.conf,
#     /var/tmp/.cache/... without HOME)
#     with no default ulimits and the cgroupfs cgroup manager (not systemd's), with which
#     containers start on the CI machine;
#   - --runtime runc when runc is installed (crun refuses the CI machine's cgroups);
#     SMCRYPT_PODMAN_RUNTIME=PATH chooses another OCI runtime.
# The host's own /etc/containers configuration is left as it is.
set -euo pipefail
dir=${SMCRYPT_PODMAN_DIR:-${XDG_CACHE_HOME:-${HOME:-/var/tmp}/.cache}/smcrypt-podman}
conf="$dir/containers.conf"
if [[ ! -f "$conf" ]]; then
  mkdir -p "$dir"
  printf '%s\n' '[containers]' 'default_ulimits = []' '' '[engine]' 'cgroup_manager = "cgroupfs"' \
    >"$conf.tmp"
  mv "$conf.tmp" "$conf"
fi
runtime=${SMCRYPT_PODMAN_RUNTIME:-$(command -v runc || true)}
export CONTAINERS_CONF="$conf"
if [[ -n "$runtime" ]]; then
  exec podman --runtime "$runtime" "$@"
fi
exec podman "$@"
