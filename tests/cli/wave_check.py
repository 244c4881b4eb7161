#!/usr/bin/env python3
"""wave_check.py FILE [--var NAME ...]: checks that FILE (.fst or .vcd) is a well-formed waveform that a viewer
(GTKWave) can open, from its header and definitions, without GTKWave:

  VCD: $timescale, at least one $scope and $var, $enddefinitions, then at least one timestamp and value change.
  FST: the header block (block type 0, length 329, the endianness test double e, start < end time, scope / var
       counts), every block's type and length up to the end of the file, one hierarchy block (gzip or LZ4,
       decompressed here: the LZ4 block decoder is below) whose scopes and vars are parsed, and at least one
       value-change block.

Each --var NAME must name a declared variable: its last path component ("x_i", "w_act[3][5]" for an array
element in an FST) or the end of its dotted path ("u_array.ps_o"). Prints a one-line summary;
exit status 1 with the reason on any failure."""
import gzip
import re
import struct
import sys
import zlib


def fail(msg):
    print("wave_check: " + msg)
    sys.exit(1)


def lz4_block(src, size):
    """Decodes one raw LZ4 block (the format of LZ4_compress_default) of `size` decompressed bytes."""
    out = bytearray()
    i = 0
    while i < len(src):
        token = src[i]
        i += 1
        lit = token >> 4
        if lit == 15:
            while True:
                b = src[i]
                i += 1
                lit += b
                if b != 255:
                    break
        out += src[i:i + lit]
        i += lit
        if i >= len(src):
            break  # the last sequence has literals only
        off = src[i] | (src[i + 1] << 8)
        i += 2
        if off == 0 or off > len(out):
            fail("LZ4 hierarchy: bad match offset %d" % off)
        mlen = token & 15
        if mlen == 15:
            while True:
                b = src[i]
                i += 1
                mlen += b
                if b != 255:
                    break
        mlen += 4
        start = len(out) - off
        for k in range(mlen):  # byte by byte: matches may overlap their own output
            out.append(out[start + k])
    if len(out) != size:
        fail("LZ4 hierarchy: %d bytes decoded, header says %d" % (len(out), size))
    return bytes(out)


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def cstring(buf, i):
    j = buf.index(b"\0", i)
    return buf[i:j].decode("latin-1"), j + 1


def parse_fst_hier(h):
    """Scopes and vars of an FST hierarchy (fstapi.c token stream)."""
    scopes, names, path, i = 0, [], [], 0
    while i < len(h):
        tag = h[i]
        i += 1
        if tag == 254:  # FST_ST_VCD_SCOPE: type, name, component
            i += 1
            scope, i = cstring(h, i)
            _, i = cstring(h, i)
            scopes += 1
            path.append(scope)
        elif tag == 255:  # FST_ST_VCD_UPSCOPE
            if not path:
                fail("FST hierarchy: upscope without scope")
            path.pop()
        elif tag == 252:  # FST_ST_GEN_ATTRBEGIN: type, subtype, name, varint arg
            i += 2
            _, i = cstring(h, i)
            _, i = varint(h, i)
        elif tag == 253:  # FST_ST_GEN_ATTREND
            pass
        elif tag <= 29:  # a variable: vartype, direction, name, length, alias
            i += 1
            name, i = cstring(h, i)
            _, i = varint(h, i)
            _, i = varint(h, i)
            names.append(".".join(path + [name.split(" ")[0]]))
        else:
            fail("FST hierarchy: unknown token %d at byte %d" % (tag, i - 1))
    if path:
        fail("FST hierarchy: %d scopes left open" % len(path))
    return scopes, names


def check_fst(path, d):
    if len(d) < 330 or d[0] != 0 or struct.unpack(">Q", d[1:9])[0] != 329:
        fail(path + ": no FST header block (type 0, length 329)")
    start, end, endian = struct.unpack(">QQd", d[9:33])
    little = struct.unpack("<d", d[25:33])[0]  # written in host byte order
    if abs(endian - 2.718281828459045) > 1e-12 and abs(little - 2.718281828459045) > 1e-12:
        fail(path + ": FST header: endianness test value is not e")
    n_scopes, n_vars, n_handles, n_vc = struct.unpack(">QQQQ", d[41:73])
    version = d[74:202].split(b"\0")[0].decode("latin-1")
    if n_vars == 0 or n_scopes == 0:
        fail(path + ": FST header: %d scopes, %d vars" % (n_scopes, n_vars))
    if end <= start:
        fail(path + ": FST header: end time %d not after start time %d" % (end, start))
    i, blocks, hier, vc = 0, [], None, 0
    while i < len(d):
        if i + 9 > len(d):
            fail(path + ": truncated block header at byte %d" % i)
        t, n = d[i], struct.unpack(">Q", d[i + 1:i + 9])[0]
        if n < 8 or i + 1 + n > len(d):
            fail(path + ": block type %d at byte %d: length %d runs past the end of the file" % (t, i, n))
        body = d[i + 9:i + 1 + n]
        if t in (1, 5, 8):
            vc += 1
        elif t == 4:  # FST_BL_HIER: gzip
            ulen = struct.unpack(">Q", body[:8])[0]
            hier = gzip.decompress(body[8:])
            if len(hier) != ulen:
                fail(path + ": gzip hierarchy of %d bytes, header says %d" % (len(hier), ulen))
        elif t == 6:  # FST_BL_HIER_LZ4
            ulen = struct.unpack(">Q", body[:8])[0]
            hier = lz4_block(body[8:], ulen)
        elif t == 7:  # FST_BL_HIER_LZ4DUO: LZ4 of LZ4
            ulen, clen = struct.unpack(">QQ", body[:16])
            hier = lz4_block(lz4_block(body[16:], clen), ulen)
        elif t not in (0, 2, 3, 254, 255):
            fail(path + ": unknown FST block type %d at byte %d" % (t, i))
        blocks.append(t)
        i += 1 + n
    if hier is None:
        fail(path + ": no hierarchy block")
    if vc == 0:
        fail(path + ": no value-change block")
    scopes, names = parse_fst_hier(hier)
    if scopes != n_scopes or len(names) != n_vars:
        fail(path + ": hierarchy has %d scopes and %d vars, header says %d and %d" % (scopes, len(names), n_scopes, n_vars))
    return "FST (%s): %d scopes, %d vars, time %d..%d, %d value-change blocks" % (
        version, scopes, len(names), start, end, vc), names


def check_vcd(path, d):
    text = d.decode("latin-1")
    head, sep, body = text.partition("$enddefinitions")
    if not sep:
        fail(path + ": no $enddefinitions")
    if not re.search(r"\$timescale\s+\d+\s*[munpf]?s\s+\$end", head):
        fail(path + ": no $timescale")
    scopes, vars_, where = 0, [], []
    for m in re.finditer(r"\$scope\s+\w+\s+(\S+)\s+\$end|\$upscope\s+\$end|"
                         r"\$var\s+\w+\s+\d+\s+\S+\s+(\S+)(?:\s+\[[^\]]*\])?\s+\$end", head):
        if m.group(1) is not None:
            scopes += 1
            where.append(m.group(1))
        elif m.group(2) is not None:
            vars_.append(".".join(where + [m.group(2)]))
        elif not where:
            fail(path + ": $upscope without $scope")
        else:
            where.pop()
    if not scopes or not vars_:
        fail(path + ": %d $scope, %d $var" % (scopes, len(vars_)))
    if where or head.count("$scope") != head.count("$upscope"):
        fail(path + ": $scope and $upscope do not pair")
    times = re.findall(r"^#(\d+)\s*$", body, re.M)
    changes = re.findall(r"^(?:[01xzXZ]\S+|[bBrR]\S+\s+\S+)\s*$", body, re.M)
    if not times or not changes:
        fail(path + ": %d timestamps, %d value changes after $enddefinitions" % (len(times), len(changes)))
    return "VCD: %d scopes, %d vars, %d timestamps up to #%s, %d value changes" % (
        scopes, len(vars_), len(times), times[-1], len(changes)), vars_


def main():
    args = sys.argv[1:]
    if not args:
        fail("usage: wave_check.py FILE [--var NAME ...]")
    path, want = args[0], []
    rest = args[1:]
    while rest:
        if rest[0] != "--var" or len(rest) < 2:
            fail("usage: wave_check.py FILE [--var NAME ...]")
        want.append(rest[1])
        rest = rest[2:]
    try:
        d = open(path, "rb").read()
    except OSError as e:
        fail("%s: %s" % (path, e))
    if path.endswith(".fst"):
        summary, names = check_fst(path, d)
    elif path.endswith(".vcd"):
        summary, names = check_vcd(path, d)
    else:
        fail(path + ": not .fst or .vcd")
    leaf = {n.split(".")[-1] for n in names}
    missing = [w for w in want if w not in leaf and not any(n.endswith("." + w) for n in names)]
    if missing:
        fail("%s: no variable named %s" % (path, ", ".join(missing)))
    print("%s: %s" % (path, summary))


if __name__ == "__main__":
    main()
