#!/bin/sh
# Regenerates the LE Audio oracle: the Bumble unicast session capture and the vectors
# (Bumble's parse of its own encodings and of every LE Audio value in that capture).
#   make venv && Tests/LEAudio/make_oracle.sh
set -eu
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$PY -W ignore Tests/LEAudio/unicast_session.py Tests/LEAudio/le_audio_unicast.btsnoop --values "$tmp/values.json"
$PY -W ignore Tests/LEAudio/broadcast_sink.py Tests/LEAudio/le_audio_broadcast_sink.btsnoop --values "$tmp/broadcast.json"
$PY -W ignore Tests/LEAudio/broadcast_pieces.py Tests/LEAudio/le_audio_broadcast_pieces.btsnoop Tests/LEAudio/broadcast_pieces.json
$PY Tests/LEAudio/bumble_vectors.py --capture-values "$tmp/values.json" --broadcast-values "$tmp/broadcast.json" > Tests/LEAudio/oracle_vectors.json
echo "Tests/LEAudio/le_audio_unicast.btsnoop, le_audio_broadcast_sink.btsnoop, le_audio_broadcast_pieces.btsnoop, broadcast_pieces.json, oracle_vectors.json written"
