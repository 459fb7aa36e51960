#!/usr/bin/env python3
"""The part of bluetoothd's agent the kernel's SMP needs for Just Works: on the management
socket (HCI_CHANNEL_CONTROL), every User Confirmation Request is answered yes (bluetoothd
auto-accepts Just Works, confirm_hint 1). Prints one line per request; runs until killed.
Root (the control channel needs CAP_NET_ADMIN)."""
import ctypes
import os
import socket
import struct
import sys

AF_BLUETOOTH, BTPROTO_HCI, HCI_DEV_NONE, HCI_CHANNEL_CONTROL = 31, 1, 0xFFFF, 3
EV_USER_CONFIRM_REQUEST, OP_USER_CONFIRM_REPLY = 0x000F, 0x001C

libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, BTPROTO_HCI)
addr = struct.pack('<HHH', AF_BLUETOOTH, HCI_DEV_NONE, HCI_CHANNEL_CONTROL)
if libc.bind(s.fileno(), addr, len(addr)) != 0:
    sys.exit(f'mgmt_agent: bind: {os.strerror(ctypes.get_errno())}')
print('READY', flush=True)
while True:
    data = os.read(s.fileno(), 1024)
    if len(data) < 6:
        continue
    op, index, _ = struct.unpack_from('<HHH', data)
    if op == EV_USER_CONFIRM_REQUEST and len(data) >= 6 + 12:
        address, hint, value = data[6:13], data[13], struct.unpack_from('<I', data, 14)[0]
        os.write(s.fileno(), struct.pack('<HHH', OP_USER_CONFIRM_REPLY, index, 7) + address)
        print(f'confirmed hci{index} {":".join(f"{b:02x}" for b in reversed(address[:6]))} hint {hint} value {value}', flush=True)
