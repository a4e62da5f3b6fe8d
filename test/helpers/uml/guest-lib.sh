# Guest-side helpers for User-Mode Linux boots (POSIX sh: the guest runs the host's /bin/sh).
# Sourced by the init script test/helpers/uml.ts writes; scenario scripts may source it too.

# The kernel gives init no environment worth keeping.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LC_ALL=C LANG=C

# proc, sys and fresh tmpfs on /run and /tmp: the root is the host's filesystem (hostfs), and the
# guest must not write into the host's /run or /tmp. Anything under those two paths stays in the guest.
# "keep-tmp": the repository itself lives under the host's /tmp, so /tmp is left as it is; guest
# programs still get a private scratch directory through TMPDIR.
proxyscope_mount_basics() {
  mount -t proc proc /proc
  mount -t sysfs sys /sys
  mount -t tmpfs tmpfs /run
  [ "${1:-}" = keep-tmp ] || mount -t tmpfs tmpfs /tmp
  mkdir -p /run/tmp
  export TMPDIR=/run/tmp
  # Keep printk off the console: the script's output is read from it between markers.
  dmesg -n 1 2>/dev/null || true
}

# proxyscope_load_modules NAME...: loads UML's own modules (/usr/lib/uml/modules/<release>), which
# modprobe only finds through a fake root whose lib/modules points there. A module that fails is
# named on the console as "@@PROXYSCOPE-MODFAIL <name>@@" and does not stop the boot.
proxyscope_load_modules() {
  release=$(uname -r)
  if [ ! -d "/usr/lib/uml/modules/$release" ]; then
    echo "@@PROXYSCOPE-MODDIR-MISSING /usr/lib/uml/modules/$release@@"
    return 1
  fi
  mkdir -p /run/mods/lib/modules
  ln -sfn "/usr/lib/uml/modules/$release" "/run/mods/lib/modules/$release"
  for m in "$@"; do
    modprobe -d /run/mods "$m" >/dev/null 2>&1 || echo "@@PROXYSCOPE-MODFAIL $m@@"
  done
}

# proxyscope_netns NAME: a network namespace with its loopback up (IPVS wants a local table before
# it accepts IPv4 real servers). Run commands in it with `ip netns exec NAME ...`.
proxyscope_netns() {
  ip netns add "$1" && ip -n "$1" link set lo up
}
