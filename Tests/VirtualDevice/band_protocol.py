"""The band's vendor protocol, shared by the peripheral and the recording central.

Frame: A5 LEN CMD PAYLOAD XOR. LEN counts the whole frame (A5 and XOR included);
XOR is the xor of every byte before it. Replies set bit 7 of the command.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

SYNC = 0xA5
CMD_DEVICE_INFO = 0x01
CMD_SET_TIME = 0x02
CMD_SPORT_COUNT = 0x03
CMD_SPORT_DATA = 0x04
CMD_SET_USER_NAME = 0x05
CMD_PING = 0x06
EVT_LIVE_STEPS = 0x90
NACK = 0xEE

# The nack is a bare frame, A5 04 EE 4F, whatever was wrong (checksum, length, command).
NACK_FRAME = bytes([SYNC, 0x04, 0xEE, SYNC ^ 0x04 ^ 0xEE])

SERVICE_UUID = 'FEE7'
WRITE_UUID = '36F5'
NOTIFY_UUID = '36F6'


def xor(data: bytes) -> int:
    x = 0
    for b in data:
        x ^= b
    return x


def frame(cmd: int, payload: bytes = b'') -> bytes:
    body = bytes([SYNC, len(payload) + 4, cmd]) + payload
    return body + bytes([xor(body)])


def sport_count(month: int, day: int) -> int:
    return (month * 31 + day) % 50 + 3


def sport_samples(month: int, day: int, index: int) -> list[tuple[int, int]]:
    """8 deterministic (steps, heart_rate) samples."""
    base = (month * 100 + day * 7 + index * 13) % 400
    return [(base + 10 * i, 60 + (base + i * 3) % 60) for i in range(8)]


@dataclass
class Reassembler:
    """Joins writes into frames by the LEN byte; drops bytes that cannot start a frame."""
    buffer: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes) -> list[bytes]:
        self.buffer += data
        frames = []
        while self.buffer:
            if self.buffer[0] != SYNC:
                del self.buffer[0]
                continue
            if len(self.buffer) < 2:
                break
            length = self.buffer[1]
            if length < 4:  # cannot hold A5 LEN CMD XOR: drop the sync byte, resync
                frames.append(bytes(self.buffer[:2]))
                del self.buffer[:2]
                continue
            if len(self.buffer) < length:
                break
            frames.append(bytes(self.buffer[:length]))
            del self.buffer[:length]
        return frames


@dataclass
class BandState:
    """Answers frames; the firmware regression and counters live here."""
    fw_major: int = 1
    fw_minor: int = 4
    battery: int = 87
    regression: set[int] = field(default_factory=set)
    ping_counter: int = 0
    user_name: bytes = b''

    def answer(self, data: bytes, uptime_s: int) -> bytes:
        if len(data) < 4 or data[1] != len(data):
            return NACK_FRAME
        if xor(data[:-1]) != data[-1]:
            return NACK_FRAME
        cmd, payload = data[2], data[3:-1]
        reply = cmd | 0x80
        if cmd == CMD_DEVICE_INFO and not payload:
            battery = self.battery - 1 if cmd in self.regression else self.battery
            return frame(reply, bytes([self.fw_major, self.fw_minor, battery]))
        if cmd == CMD_SET_TIME and len(payload) == 7:
            return frame(reply, b'\x00')
        if cmd == CMD_SPORT_COUNT and len(payload) == 2:
            count = sport_count(payload[0], payload[1])
            if cmd in self.regression:
                count += 1  # the "firmware regression": one record too many
            return frame(reply, struct.pack('<H', count))
        if cmd == CMD_SPORT_DATA and len(payload) == 4:
            month, day, index = payload[0], payload[1], struct.unpack_from('<H', payload, 2)[0]
            samples = sport_samples(month, day, index)
            if cmd in self.regression:
                samples[3] = (samples[3][0] + 1, samples[3][1])
            body = struct.pack('<H', index) + b''.join(struct.pack('<HB', s, h) for s, h in samples)
            return frame(reply, body)
        if cmd == CMD_SET_USER_NAME:
            self.user_name = bytes(payload)
            return frame(reply, b'\x00')
        if cmd == CMD_PING and not payload:
            self.ping_counter += 1
            return frame(reply, struct.pack('<II', self.ping_counter, uptime_s))
        return NACK_FRAME
