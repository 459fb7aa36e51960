# The guest booted, attached both controllers and the kernel brought them up.
source "$REPO/Tests/Kernel/lib.sh"
adapter_up 0 || fail "hci0 is not up"
adapter_up 1 || fail "hci1 is not up"
echo "hci0 and hci1 up"
