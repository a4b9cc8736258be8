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


def varint(data, pos):
    """An unsigned LEB128 varint at pos: (value, position after it)."""
    v = shift = 0
    while True:
        b = data[pos]
        v |= (b & 0x7F) << shift
        pos += 1
        shift += 7
        if b < 0x80 or shift > 63:
            return v, pos


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

    def records(self, index):
        """(type, payload offset, payload length) of each record of chunk index."""
        off, size, _seq = self.chunks()[index]
        pos, end, out = off + CHUNK.size, off + CHUNK.size + size, []
        while pos < end and self.data[pos]:
            rtype = self.data[pos]
            length, pos = varint(self.data, pos + 1)
            out.append((rtype, pos, length))
            pos += length
        return out

    def set_sample_weights(self, index, weight):
        """Every SAMPLE of chunk index gets weight (1-127: its varint keeps its length);
        returns how many. The chunk's checksum is not made again (fix_chunk_crc)."""
        n = 0
        for rtype, pos, length in self.records(index):
            if rtype != 1:
                continue
            _dt, p = varint(self.data, pos)
            _stack, p = varint(self.data, p)
            if p + 1 == pos + length and self.data[p] < 0x80:
                self.data[p] = weight
                n += 1
        return n

    def fix_chunk_crc(self, index):
        """Make the checksum of chunk index again over its header and records."""
        off, size, _seq = self.chunks()[index]
        # The header's other 20 bytes (the checksum left out), then the records.
        body = (bytes(self.data[off:off + 8]) + bytes(self.data[off + 12:off + CHUNK.size]) +
                bytes(self.data[off + CHUNK.size:off + CHUNK.size + size]))
        struct.pack_into("<I", self.data, off + 8, zlib.crc32(body))

    def flip(self, offset, mask=0x10):
        self.data[offset] ^= mask

    def append(self, blob):
        self.data += blob

    def save(self, path=None):
        with open(path or self.path, "wb") as f:
            f.write(self.data)
