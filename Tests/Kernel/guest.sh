#!/bin/bash
# Inside the guest, chrooted into the host's root (run.sh's /init execs this): attaches the
# virtual controllers as hci0 and hci1, runs each test, writes its output, exit status and
# seconds under $KWORK/results, then powers the guest off.
KWORK=$1
# shellcheck disable=SC1091
source "$KWORK/env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
export BLUESIFT REPO KWORK
R=$KWORK/results
off() { sync; busybox poweroff -f; }
trap off EXIT

for n in 1 2; do btattach -B "/dev/ttyS$n" -P h4 -S 115200 >"$KWORK/btattach$n.log" 2>&1 & done
# The kernel runs its init sequence against a new adapter, powers it up and, with no
# bluetoothd to claim it, off again after 2 s (HCI_AUTO_OFF). The tests start where a Linux
# user is: the adapter powered on through the management socket as bluetoothd does it (LE
# on, bondable; without mgmt's LE the kernel's SMP is not there for L2CAP sockets).
log() { echo "$(date +%T.%N | cut -c1-12) $*" >>"$KWORK/guest.log"; }
log "attaching"
end=$((SECONDS + 30))
while [ $SECONDS -lt $end ]; do
  for n in 0 1; do
    if [ -e /sys/class/bluetooth/hci$n ] && ! hciconfig hci$n | grep -q 'UP RUNNING'; then
      for c in "le on" "bondable on" "power on"; do btmgmt --index $n $c >>"$KWORK/guest.log" 2>&1; done
    fi
  done
  hciconfig hci0 2>/dev/null | grep -q 'UP RUNNING' && hciconfig hci1 2>/dev/null | grep -q 'UP RUNNING' && break
  sleep 0.2
done
hciconfig -a >"$R/adapters.txt" 2>&1
log "adapters: $(hciconfig | grep -c 'UP RUNNING') up"
for t in $TESTS; do
  log "test $t"
  start=$(date +%s%N)
  (cd "$REPO" && timeout 120 bash "$REPO/Tests/Kernel/tests/$t.sh") >"$R/$t.log" 2>&1 </dev/null
  echo $? >"$R/$t.rc"
  echo "$(( ($(date +%s%N) - start) / 10000000 ))" | sed 's/..$/.&/' >"$R/$t.time"
done
dmesg >"$R/dmesg.txt" 2>&1
touch "$R/done"
