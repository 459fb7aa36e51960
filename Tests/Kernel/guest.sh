#!/bin/bash
# Inside the guest, chrooted into the host's root (run.sh's /init execs this): attaches the
# virtual controllers as hci0 and hci1, runs each test, writes its output, exit status and
# seconds under $KWORK/results, then powers the guest off. With KERNEL_TRACE=1 (run.sh) each
# test also leaves NAME.trace there: its `bash -x` lines, each stamped with the time.
KWORK=$1
# shellcheck disable=SC1091
source "$KWORK/env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
export BLUESIFT REPO KWORK PUBLIC
# The guest runs in the host's root as root: without this, bluesift's plugin index would land in
# the host's /root/.cache (make test leaves nothing behind; $KWORK is removed after the run).
export BLUESIFT_CACHE_DIR=$KWORK/cache
R=$KWORK/results
off() { sync; busybox poweroff -f; }
trap off EXIT
# Seconds since the epoch in hundredths (bash's clock: no date process).
now() { local t=${EPOCHREALTIME/./}; echo $((t / 10000)); }
log() { local t=$EPOCHREALTIME; printf '%(%T)T.%s %s\n' "${t%.*}" "${t:${#t}-6:3}" "$*" >>"$KWORK/guest.log"; }
# lib.sh's nap: a FIFO on the guest's own /dev that nobody writes to.
export NAP_FIFO=/dev/kernel-harness-nap
mkfifo "$NAP_FIFO"
exec {NAP_FD}<>"$NAP_FIFO"

for n in 1 2; do btattach -B "/dev/ttyS$n" -P h4 -S 115200 >"$KWORK/btattach$n.log" 2>&1 & done
dirs=(); for t in $TESTS; do dirs+=("$KWORK/t-$t"); done
mkdir -p "${dirs[@]}"
# The kernel runs its init sequence against a new adapter, powers it up and, with no
# bluetoothd to claim it, off again after 2 s (HCI_AUTO_OFF). The tests start where a Linux
# user is: the adapter powered on through the management socket as bluetoothd does it (LE
# on, bondable; without mgmt's LE the kernel's SMP is not there for L2CAP sockets).
log "attaching"
up() { [[ $(hciconfig "hci$1" 2>/dev/null) == *"UP RUNNING"* ]]; }
end=$((SECONDS + 30))
while [ $SECONDS -lt $end ]; do
  for n in 0 1; do
    if [ -e /sys/class/bluetooth/hci$n ] && ! up $n; then
      for c in "le on" "bondable on" "power on"; do btmgmt --index $n $c >>"$KWORK/guest.log" 2>&1; done
    fi
  done
  up 0 && up 1 && break
  read -r -t 0.2 -u "$NAP_FD" _
done
hciconfig -a >"$R/adapters.txt" 2>&1
ups=0; for n in 0 1; do up $n && ups=$((ups + 1)); done
log "adapters: $ups up"
for t in $TESTS; do
  log "test $t"
  start=$(now)
  if [ "${KERNEL_TRACE:-0}" = 1 ]; then
    (exec 9>"$R/$t.trace"; cd "$REPO" && BASH_XTRACEFD=9 timeout 120 \
       bash -c 'PS4="+ \$EPOCHREALTIME "; set -x; . "$0"' "$REPO/Tests/Kernel/tests/$t.sh") >"$R/$t.log" 2>&1 </dev/null
  else
    (cd "$REPO" && timeout 120 bash "$REPO/Tests/Kernel/tests/$t.sh") >"$R/$t.log" 2>&1 </dev/null
  fi
  echo $? >"$R/$t.rc"
  d=$(($(now) - start)); printf '%d.%02d\n' $((d / 100)) $((d % 100)) >"$R/$t.time"
done
dmesg >"$R/dmesg.txt" 2>&1
touch "$R/done"
