#!/usr/bin/env bash
# Kernel harness: bluesift against a real Linux Bluetooth stack (docs/transport.md).
#
#   Tests/Kernel/run.sh [TEST ...]      TEST: names under Tests/Kernel/tests (default: all)
#
# Boots the installed Debian kernel under QEMU (TCG: KVM guests hang on these machines) from
# a tiny initramfs (static busybox + the 9p and Bluetooth modules, in dependency order from
# modinfo), shares the host's root into it by 9p and chroots there, so the guest runs this
# checkout's bluesift, BlueZ tools and files. The virtual controllers stay on the host
# (Tests/VirtualDevice/controllers.py: Python under TCG is too slow for the kernel's 2 s
# command timeout); QEMU's serial ports ttyS1 and ttyS2 are their H4 ports, which btattach
# makes hci0 and hci1. Each test is a bash script run inside the guest (tests/NAME.sh, with
# lib.sh), one after the other in one boot; its output, exit status and time come back
# through the shared root. A test asks the host for a band with other options (regression,
# moved handles, passkey pairing) through a request file the host's loop below answers.
#
# Environment: BLUESIFT (binary, default .build/debug/bluesift), KERNEL_VERSION (default:
# the newest in /boot), KERNEL_KEEP=1 keeps the work directory, KERNEL_TIMEOUT (s, 300),
# KERNEL_TRACE=1 leaves each test's `bash -x` trace, every line stamped with the time, in the
# work directory's results/NAME.trace (with KERNEL_KEEP=1).
# Exit: 0 all passed, 1 a test failed, 77 skipped (a line "test-kernel skipped: why").
# Everything made under /tmp is removed on exit, whatever happened.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
BLUESIFT="${BLUESIFT:-$REPO/.build/debug/bluesift}"
[ "${BLUESIFT#/}" = "$BLUESIFT" ] && BLUESIFT="$REPO/$BLUESIFT"
T0=$SECONDS

skip() { echo "test-kernel skipped: $*"; exit 77; }

for tool in qemu-system-x86_64 busybox btattach btmon modinfo cpio; do
  command -v "$tool" >/dev/null || skip "$tool not installed (apt-get install qemu-system-x86 linux-image-amd64 busybox-static bluez cpio)"
done
KVER="${KERNEL_VERSION:-$(ls /boot/vmlinuz-* 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V | tail -1)}"
[ -n "$KVER" ] && [ -r "/boot/vmlinuz-$KVER" ] || skip "no kernel in /boot (apt-get install linux-image-amd64)"
[ -d "/lib/modules/$KVER" ] || skip "no modules for kernel $KVER in /lib/modules"
# ldd fails on a static executable (and `file` may not be installed).
! ldd "$(command -v busybox)" >/dev/null 2>&1 || skip "busybox is not the static one (apt-get install busybox-static)"
[ -x "$BLUESIFT" ] || skip "no bluesift binary at $BLUESIFT (swift build)"
[ -x "$REPO/.venv/bin/python" ] || skip "no Bumble venv (make venv)"

TESTS=("$@")
# All of them by default, in an order that restarts the band (lib.sh: band) fewest times: 7
# restarts where the alphabetical order took 10. A test not listed here runs last.
ORDER=(boot hci_nonroot capture_btmon hci_signals hci_fuzz hci_replay l2cap_replay hci_pairing hci_flood hci_emulate)
if [ ${#TESTS[@]} -eq 0 ]; then
  for t in "${ORDER[@]}"; do [ -f "$HERE/tests/$t.sh" ] && TESTS+=("$t"); done
  for f in "$HERE"/tests/*.sh; do
    t=$(basename "$f" .sh); [[ " ${ORDER[*]} " == *" $t "* ]] || TESTS+=("$t")
  done
fi
for t in "${TESTS[@]}"; do [ -f "$HERE/tests/$t.sh" ] || { echo "run.sh: no test $t in $HERE/tests" >&2; exit 2; }; done

WORK=$(mktemp -d /tmp/bluesift-kernel.XXXXXX)
# hci_nonroot runs bluesift as nobody, who cannot reach a clone in a private folder (mktemp -d,
# a 0700 home) nor $WORK: it gets copies of the binary and the capture in a folder anyone reads.
PUBLIC=$(mktemp -d /tmp/bluesift-kernel-public.XXXXXX)
chmod 755 "$PUBLIC"
cp "$BLUESIFT" "$PUBLIC/bluesift" && cp "$REPO/Captures/band_mtu23.btsnoop" "$PUBLIC/" \
  && chmod 755 "$PUBLIC/bluesift" && chmod 644 "$PUBLIC/band_mtu23.btsnoop" || { rm -rf "$WORK" "$PUBLIC"; exit 2; }
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$p" 2>/dev/null
  done
  wait 2>/dev/null
  rm -rf "$PUBLIC"
  if [ "${KERNEL_KEEP:-0}" = 1 ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the kernel: its ELF image, booted at its PVH entry --------------------------------------------
# The bzImage's own decompressor, under TCG, took 5–6 s before the kernel's first line; Python's
# lzma takes ~1 s here, beside the initramfs and the rig. A kernel not xz-compressed or without
# the PVH note (CONFIG_PVH) is booted as it is.
KERNEL=/boot/vmlinuz-$KVER
"$REPO/.venv/bin/python" - "$KERNEL" "$WORK/vmlinux" <<'PY' &
import lzma, struct, sys
image = open(sys.argv[1], "rb").read()
start = image.find(b"\xfd7zXZ\x00")
if start < 0:
    sys.exit(1)
elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(image[start:])
if elf[:5] != b"\x7fELF\x02":
    sys.exit(1)
phoff, = struct.unpack_from("<Q", elf, 0x20)
phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
for i in range(phnum):  # PT_NOTE segments: a note "Xen" of type 18 (XEN_ELFNOTE_PHYS32_ENTRY)
    ptype, _, offset, _, _, size = struct.unpack_from("<IIQQQQ", elf, phoff + i * phentsize)
    at, end = offset, offset + size
    while ptype == 4 and at + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from("<III", elf, at)
        name = elf[at + 12:at + 12 + namesz]
        if name == b"Xen\x00" and ntype == 18:
            open(sys.argv[2], "wb").write(elf)
            sys.exit(0)
        at += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
sys.exit(1)
PY
UNPACK_PID=$!
PIDS+=($UNPACK_PID)

# --- initramfs: busybox, the modules (each after what it depends on), /init -------------------
# SMP needs cmac(aes), ecdh-nist-p256 and a default RNG (drbg: hmac(sha512), jitterentropy); the
# kernel cannot modprobe them itself here (its helper runs in the initramfs, which has no modprobe).
MODS=(9p 9pnet_virtio virtio_pci sha512_generic jitterentropy_rng drbg ecdh_generic cmac bluetooth hci_uart)
declare -A SEEN=()
ORDER=()
add_module() {  # depth first: dependencies before the module
  local m=$1 d deps
  [ -n "${SEEN[$m]:-}" ] && return; SEEN[$m]=1
  deps=$(modinfo -k "$KVER" -F depends "$m" 2>/dev/null) || { echo "run.sh: module $m unknown to kernel $KVER" >&2; return 1; }
  for d in ${deps//,/ }; do add_module "$d" || return 1; done
  local path; path=$(modinfo -k "$KVER" -n "$m")
  case "$path" in /*) ORDER+=("$path") ;; esac  # "(builtin)": nothing to load
}
for m in "${MODS[@]}"; do add_module "$m" || skip "kernel $KVER lacks module $m"; done
ROOTFS=$WORK/initramfs
mkdir -p "$ROOTFS"/{bin,mod,proc,sys,dev,host}
cp "$(command -v busybox)" "$ROOTFS/bin/busybox"
: >"$ROOTFS/mod/order"
for p in "${ORDER[@]}"; do
  n=$(basename "$p"); n=${n%.xz}; n=${n%.zst}
  case "$p" in *.xz) xz -dc "$p" >"$ROOTFS/mod/$n" ;; *.zst) zstd -qdc "$p" >"$ROOTFS/mod/$n" ;; *) cp "$p" "$ROOTFS/mod/$n" ;; esac
  echo "$n" >>"$ROOTFS/mod/order"
done
cat >"$ROOTFS/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in \$(cat /mod/order); do insmod /mod/\$m || echo "init: insmod \$m failed"; done
# The host's files through the page cache (binaries and libraries are read once, not at
# every process start); the work directory uncached, as the host and guest both write there.
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose host /host || { echo "init: 9p mount failed"; poweroff -f; }
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none work "/host$WORK" || { echo "init: 9p work mount failed"; poweroff -f; }
mount --bind /dev /host/dev; mount --bind /proc /host/proc; mount --bind /sys /host/sys
mount -t devpts devpts /host/dev/pts 2>/dev/null
exec chroot /host /bin/bash "$HERE/guest.sh" "$WORK"
EOF
chmod +x "$ROOTFS/init"
(cd "$ROOTFS" && find . | cpio -o -H newc --quiet) | gzip -1 >"$WORK/initramfs.gz" || skip "cannot build the initramfs"

# --- rig on the host: controllers for hci0/hci1 and the band, on free loopback ports -------------
PORTS=($("$REPO/.venv/bin/python" -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'))
PY="$REPO/.venv/bin/python"
VDEV="$REPO/Tests/VirtualDevice"
(cd "$VDEV" && exec "$PY" controllers.py "127.0.0.1:${PORTS[0]}" "127.0.0.1:${PORTS[1]}" "127.0.0.1:${PORTS[2]}" \
   --timeout 300 --watch-pid $$ </dev/null >"$WORK/controllers.log" 2>&1) &
CONTROLLERS_PID=$!
PIDS+=($CONTROLLERS_PID)
wait_ready() {  # LOG PID SECONDS
  local end=$((SECONDS + $3))
  while [ $SECONDS -le $end ]; do
    grep -q '^READY' "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
wait_ready "$WORK/controllers.log" "$CONTROLLERS_PID" 20 || { cat "$WORK/controllers.log" >&2; echo "run.sh: controllers did not start" >&2; exit 1; }

# The band, restarted with other options when a test writes $WORK/band.want (lib.sh: band).
BAND_PID=0
start_band() {
  [ "$BAND_PID" != 0 ] && { kill -TERM "$BAND_PID" 2>/dev/null; wait "$BAND_PID" 2>/dev/null; }
  # shellcheck disable=SC2086  # options are words
  (cd "$VDEV" && exec "$PY" band_peripheral.py "tcp-client:127.0.0.1:${PORTS[2]}" --timeout 300 --watch-pid $$ $1 \
     </dev/null >"$WORK/band.log" 2>&1) &
  BAND_PID=$!
  wait_ready "$WORK/band.log" "$BAND_PID" 20
}
band_loop() {
  trap 'kill -TERM $BAND_PID 2>/dev/null; exit 0' TERM
  start_band "" && echo "" >"$WORK/band.ready"
  while true; do
    if [ -f "$WORK/band.want" ]; then
      local want; want=$(cat "$WORK/band.want")
      rm -f "$WORK/band.ready"; rm -f "$WORK/band.want"  # in this order: the guest waits for ready without want
      if start_band "$want"; then echo "$want" >"$WORK/band.ready"; else echo "FAILED $want" >"$WORK/band.ready"; fi
    fi
    sleep 0.1
  done
}
band_loop &
PIDS+=($!)

# --- the guest ---------------------------------------------------------------------------------
mkdir -p "$WORK/results"
{
  echo "BLUESIFT=$BLUESIFT"; echo "REPO=$REPO"; echo "KWORK=$WORK"; echo "PUBLIC=$PUBLIC"
  echo "TESTS=\"${TESTS[*]}\""; echo "KERNEL_TRACE=${KERNEL_TRACE:-0}"
} >"$WORK/env"
wait $UNPACK_PID && KERNEL=$WORK/vmlinux
for i in "${!PIDS[@]}"; do [ "${PIDS[i]}" = "$UNPACK_PID" ] && unset 'PIDS[i]'; done  # reaped: not to be killed
echo "kernel $KVER under QEMU (TCG), ${#TESTS[@]} tests: ${TESTS[*]}"
# nodelay: QEMU writes a serial port's bytes to its socket one by one; with Nagle's algorithm
# each HCI packet's bytes after the first waited for the controller's delayed ACK, ~40 ms a
# packet (an HCI command's round trip took 45 ms, now 4 ms).
# One vCPU: with two (multi-threaded TCG) a whole run took 196–208 s where it takes 149–177 s
# with one, on the same 2-core machine under the same load; two processes side by side in the
# guest were no faster than one after the other.
timeout "${KERNEL_TIMEOUT:-300}" qemu-system-x86_64 -accel tcg -m 2048 -smp 1 -display none -no-reboot \
  -kernel "$KERNEL" -initrd "$WORK/initramfs.gz" \
  -append "console=ttyS0 ${KERNEL_APPEND:-quiet loglevel=3} panic=-1" \
  -serial mon:stdio -serial "tcp:127.0.0.1:${PORTS[0]},nodelay=on" -serial "tcp:127.0.0.1:${PORTS[1]},nodelay=on" \
  -virtfs local,path=/,mount_tag=host,security_model=none,multidevs=remap \
  -virtfs local,path="$WORK",mount_tag=work,security_model=none \
  </dev/null >"$WORK/console.log" 2>&1
qrc=$?
[ $qrc = 124 ] && echo "run.sh: the guest did not finish within ${KERNEL_TIMEOUT:-300} s" >&2

# --- results -------------------------------------------------------------------------------------
failed=0 npass=0 nfail=0 nskip=0
for t in "${TESTS[@]}"; do
  rc=$(cat "$WORK/results/$t.rc" 2>/dev/null || echo none)
  secs=$(cat "$WORK/results/$t.time" 2>/dev/null || echo "?")
  case "$rc" in
    0) echo "PASS $t (${secs} s)"; npass=$((npass + 1)) ;;
    77) echo "SKIP $t: $(tail -1 "$WORK/results/$t.log")"; nskip=$((nskip + 1)) ;;
    *) echo "FAIL $t (exit $rc, ${secs} s):"; sed 's/^/    /' "$WORK/results/$t.log" 2>/dev/null | tail -40; failed=1; nfail=$((nfail + 1)) ;;
  esac
done
if [ ! -f "$WORK/results/done" ]; then
  echo "run.sh: the guest did not finish its tests; console:" >&2; tail -30 "$WORK/console.log" >&2; failed=1
fi
# Output kept for the docs (docs/transport.md quotes it): KERNEL_OUT=DIR copies the logs there.
[ -n "${KERNEL_OUT:-}" ] && mkdir -p "$KERNEL_OUT" && cp "$WORK"/results/*.log "$KERNEL_OUT"/ 2>/dev/null
echo "test-kernel ($((SECONDS - T0)) s with boot and power-off):"
echo "test-kernel: $npass passed, $nfail failed, $nskip skipped"
exit $failed
