#!/usr/bin/env python3
"""Encodes 16-bit mono PCM to LC3 frames with lc3py (PyPI; its own build of Google's liblc3),
an encoder independent of bluesift's (BluesiftCodecs over Debian's liblc3), for
Tests/BluesiftCLITests/LEAudioBroadcastSourceTests.swift.

usage: lc3py_encode.py PCM_IN LC3_OUT SAMPLE_RATE FRAME_US OCTETS
PCM_IN: little-endian int16 samples; LC3_OUT: the frames, OCTETS each, one after another.
"""
import sys

import lc3


def main() -> int:
    pcm_in, out, rate, frame_us, octets = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    enc = lc3.Encoder(frame_us, rate)
    step = enc.get_frame_samples() * 2  # bytes of one frame's 16-bit samples
    with open(pcm_in, "rb") as f:
        pcm = f.read()
    with open(out, "wb") as f:
        for o in range(0, len(pcm) - step + 1, step):
            f.write(enc.encode(pcm[o:o + step], octets, bit_depth=16))
    return 0


if __name__ == "__main__":
    sys.exit(main())
