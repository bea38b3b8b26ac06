"""The packed model file's head as tests and fuzz seeds write it by hand: the layout of
lib/exec/pack_file.h (magic "ORKPACK\\0", version 2, header of 4096 bytes, the description's
offset and length, data offset, file length, FNV-1a of the description, FNV-1a of the 56
bytes before it), written here once for every script that forges or corrupts a head. Version
2 (tensor rows of six) is what these heads say: the reader still takes it, and version 3,
what ork_pack writes now, differs only in its rows' seventh field (an int4 slice width)."""
import struct

FNV_BASIS = 14695981039346656037  # FNV-1a 64-bit offset basis (lib/exec/activation.h)
FNV_PRIME = 1099511628211
HEADER_BYTES = 4096


def fnv1a(data, basis=FNV_BASIS):
    h = basis
    for c in data:
        h = ((h ^ c) * FNV_PRIME) & (2**64 - 1)
    return h


def seal(head):
    """Recomputes the header's own checksum (bytes 56..64) in place after a change to it."""
    struct.pack_into('<Q', head, 56, fnv1a(bytes(head[:56])))


def packed_head(text):
    """A head around any description text, checksums right, the file ending at its data
    offset: what a hostile writer can make, parse_packed's whole input."""
    data_offset = (HEADER_BYTES + len(text) + 4095) // 4096 * 4096
    h = bytearray(data_offset)
    h[0:8] = b'ORKPACK\0'
    struct.pack_into('<IIQQQQQ', h, 8, 2, HEADER_BYTES, HEADER_BYTES, len(text), data_offset, data_offset,
                     fnv1a(text))
    seal(h)
    h[HEADER_BYTES:HEADER_BYTES + len(text)] = text
    return bytes(h)
