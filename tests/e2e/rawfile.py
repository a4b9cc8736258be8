# SPDX-License-Identifier: MIT
"""Byte-level access to raw streams for corruption tests: header fields, chunk offsets, the
checksums of format version 2 (docs/raw-format.md). zlib.crc32 is the CRC-32 the format uses."""
import struct
import zlib

HEADER = struct.Struct("<8sIHHiiiIQQQII64sQII")  # 144 bytes, little-endian (x86)
FIELDS = ("magic", "byte_order", "version", "header_size", "pid", "tid", "rank", "clock_id",
          "origin_ns", "origin_realtime_ns", "interval_ns", "sample_clock", "generation",
          "host", "stream_id", "kind", "header_crc")
CHUNK = struct.Struct("<IIIIq")  # magic, size, crc, seq, base_ns
CHUNK_MAGIC = 0x4B484350
CHUNK_OPEN = 0xFFFFFFFF


class RawFile:
    """One stream file in memory; save() writes it back."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = bytearray(f.read())

    def header(self):
        return dict(zip(FIELDS, HEADER.unpack_from(self.data, 0)))

    def set_header(self, recompute_crc=False, **fields):
        h = self.header()
        h.update(fields)
        HEADER.pack_into(self.data, 0, *[h[k] for k in FIELDS])
        if recompute_crc:
            self.fix_header_crc()

    def fix_header_crc(self):
        size = self.header()["header_size"]
        body = bytes(self.data[:140]) + b"\0\0\0\0" + bytes(self.data[144:size])
        struct.pack_into("<I", self.data, 140, zlib.crc32(body))

    def chunks(self):
        """(offset, size, seq) of every chunk, walking sizes and skipping zero padding."""
        out = []
        pos = self.header()["header_size"]
        while pos + CHUNK.size <= len(self.data):
            if self.data[pos] == 0:
                pos += 1
                continue
            magic, size, _crc, seq, _base = CHUNK.unpack_from(self.data, pos)
            if magic != CHUNK_MAGIC or size == CHUNK_OPEN:
                break
            out.append((pos, size, seq))
            pos += CHUNK.size + size
        return out

    def chunk_bytes(self, index):
        off, size, _seq = self.chunks()[index]
        return bytes(self.data[off:off + CHUNK.size + size])

    def flip(self, offset, mask=0x10):
        self.data[offset] ^= mask

    def append(self, blob):
        self.data += blob

    def save(self, path=None):
        with open(path or self.path, "wb") as f:
            f.write(self.data)
