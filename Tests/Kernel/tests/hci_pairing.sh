# Pairing over hci:0 exactly as over H4: LE Secure Connections with a passkey the band shows,
# keys kept; a second run re-encrypts from the bond store (no SMP on the air).
source "$REPO/Tests/Kernel/lib.sh"
band --security authentication --io display --passkey 123456 --keystore "$TDIR/band-keys.json"
replay pair --transport hci:0 --passkey 123456 --keys "$TDIR/keys.json" --pair always
expect_eq "exit, passkey pairing" 0 "$RC"
expect_grep "passkey pairing" "^security: level 4 (authenticated secure connections), paired, passkey entry, LE Secure Connections, key size 16, keys stored" "$TDIR/pair.out"
expect_grep "all matched" "16 matched, 0 mismatched" "$TDIR/pair.out"
replay again --transport hci:0 --keys "$TDIR/keys.json" --pair always --record "$TDIR/again.btsnoop"
expect_eq "exit, re-encryption" 0 "$RC"
expect_grep "re-encrypted" "re-encrypted with the stored key" "$TDIR/again.out"
"$BLUESIFT" dump "$TDIR/again.btsnoop" >"$TDIR/again.txt"
has "$TDIR/again.txt" "SMP " && fail "SMP in the re-encrypted run's recording"
expect_grep "LE Enable Encryption sent" "LE Enable Encryption" "$TDIR/again.txt"
adapter_up 0 || fail "hci0 is not up again after pairing"
