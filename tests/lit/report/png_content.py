#!/usr/bin/env python3
"""png_content.py PNG MIN_INK MIN_COLOURS: a screenshot is not blank.

Decodes PNG with the standard library alone (zlib + struct: 8-bit greyscale,
RGB or RGBA, not interlaced, every row filter), takes the most common colour
as the background, and requires at least MIN_INK (a fraction, 0 to 1) of the
pixels to differ from it and at least MIN_COLOURS distinct colours, each
covering at least 50 pixels (anti-aliasing alone makes many rare ones).
Prints the figures for FileCheck."""
import collections
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("png_content.py: %s is not a PNG" % path)
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        sys.exit("png_content.py: unsupported PNG (depth %d, colour type %d, interlace %d)" % (depth, colour, interlace))
    raw, stride, bpp = zlib.decompress(idat), width * channels, channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def main():
    path, min_ink, min_colours = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    width, height, channels, rows = decode(path)
    counts = collections.Counter()
    for line in rows:
        for x in range(0, len(line), channels):
            counts[line[x:x + min(channels, 3)]] += 1
    background, bg = counts.most_common(1)[0]
    ink = 1 - bg / (width * height)
    colours = sum(1 for n in counts.values() if n >= 50)
    print("%dx%d, background #%s, ink %.3f, %d colours of 50+ pixels" % (width, height, background.hex(), ink, colours))
    if ink < min_ink:
        sys.exit("png_content.py: only %.3f of the pixels differ from the background (want %.3f)" % (ink, min_ink))
    if colours < min_colours:
        sys.exit("png_content.py: only %d colours of 50+ pixels (want %d)" % (colours, min_colours))
    print("not blank")


if __name__ == "__main__":
    main()
