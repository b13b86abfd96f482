#!/usr/bin/env python3
"""Lists the device code a shared library carries, without cuobjdump.

    fatbin_archs.py LIB        prints one line per entry: "elf sm_90", "ptx sm_90"

Reads the ELF section .nv_fatbin: a sequence of fat binaries (header: magic
0xBA55ED50, version, header size, size of the entries), each entry a header
(kind 1 = PTX, 2 = ELF cubin; its header size, padded payload size, and the
SM version at byte 28) followed by its payload. Exit 1 when there is none.
"""
import struct
import sys


def section(data, name):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    names = header(shstrndx)
    for i in range(shnum):
        h = header(i)
        start = names[4] + h[0]
        end = data.index(b"\0", start)
        if data[start:end].decode() == name:
            return data[h[4]:h[4] + h[5]]
    return b""


def entries(blob):
    pos = 0
    while pos + 16 <= len(blob):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != 0xBA55ED50:
            pos += 8  # sections are padded between fat binaries
            continue
        entry = pos + header_size
        end = entry + fat_size
        while entry + 32 <= end:
            kind, _v, ehead, padded = struct.unpack_from("<HHII", blob, entry)
            sm, = struct.unpack_from("<I", blob, entry + 28)
            yield {1: "ptx", 2: "elf"}.get(kind, "kind%d" % kind), "sm_%d" % sm
            entry += ehead + padded
        pos = end


def main():
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    found = sorted(set(entries(section(data, ".nv_fatbin"))))
    for kind, arch in found:
        print(kind, arch)
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
