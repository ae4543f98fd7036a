# lib-podman.sh — sourced by deploy/local/image.sh (and its test,
# tests/container/podman_probe_test.sh): tells a host where podman cannot store or run an
# image from the error text of a podman step that failed.
#
# podman_unusable_reason TEXT [CGROUP_DIR]: prints one line naming why this host cannot
# store or run a container and returns 0 when TEXT (a failed podman command's output) is
# one of the failures a host without a usable mount namespace, overlay, user namespaces or
# cgroups gives; returns 1, printing nothing, for any other text (a real failure to
# report). podman's bare "no such file or directory" counts only when CGROUP_DIR (default
# /sys/fs/cgroup, which podman reads first) is missing: /sys not mounted, a bare chroot.

podman_unusable_reason() {
  local text=$1 cgroup_dir=${2:-/sys/fs/cgroup} lower
  lower=$(printf '%s' "$text" | tr '[:upper:]' '[:lower:]')
  if [[ $lower == *"error: no such file or directory"* && ! -e $cgroup_dir ]]; then
    echo "$cgroup_dir does not exist (no /sys mounted: a bare chroot), and podman needs it"
    return 0
  fi
  case $lower in
    *"remount /, flags: 0x44000"*|*"make / private"*|*"make-rprivate"*)
      echo "the root is not a mount point (a chroot): podman cannot make its mounts private" ;;
    *"is not supported over overlayfs"*|*"overlay is not supported"*|*"kernel does not support overlay"*|*"driver not supported"*)
      echo "the overlay storage driver cannot run here (overlay on overlay, or no overlay in this kernel)" ;;
    *"user namespaces are not enabled"*|*"cannot clone: operation not permitted"*|*"cannot clone: invalid argument"*|*"unshare: operation not permitted"*|*"newuidmap"*|*"cannot set up namespace"*)
      echo "user or mount namespaces cannot be created here (a container without the privilege to nest)" ;;
    *"pivot_root"*"invalid argument"*)
      echo "the OCI runtime cannot pivot_root from this root (a chroot or ramfs root)" ;;
    *"mount proc"*"operation not permitted"*|*"mount"*"sysfs"*"operation not permitted"*|*"mount"*"permission denied"*"proc"*)
      echo "mounting /proc or /sys is refused here (a container without the privilege to nest)" ;;
    *cgroup*"read-only file system"*|*cgroup*"operation not permitted"*|*"cannot mkdir"*cgroup*)
      echo "cgroups cannot be created here (a read-only or delegated cgroup tree)" ;;
    *) return 1 ;;
  esac
  return 0
}
