"""Feeding a sans-I/O codec: a byte stream cut into chunks, and the events the chunks decode to."""

from __future__ import annotations


def cut(stream: bytes, cuts: list[int]) -> list[bytes]:
    """``stream`` split at the offsets ``cuts`` (taken modulo its length + 1, in order)."""
    chunks, last = [], 0
    for c in sorted(c % (len(stream) + 1) for c in cuts):
        chunks.append(stream[last:c])
        last = c
    chunks.append(stream[last:])
    return chunks


def feed(codec, chunks) -> list:
    """Every event ``codec`` yields as the chunks arrive one by one."""
    out = []
    for chunk in chunks:
        codec.receive_data(chunk)
        out += codec.events()
    return out
