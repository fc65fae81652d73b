#!/usr/bin/env python3
"""Regenerates the GGUF test corpus: testdata/malformed/*.gguf (each file has
one defect), testdata/malformed.tsv (what the reader must say about it) and
testdata/valid/*.gguf (small files using every value type).

The bytes are built here with struct, independently of our C++ writer, so the
reader is tested against a second encoder. The output is committed; rerun
this only to add cases:  python3 engine/gguf/testdata/make_corpus.py
Files not produced here (e.g. fuzzer finds) are listed in malformed.tsv by hand
and kept when this script runs.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MALFORMED = os.path.join(HERE, "malformed")
VALID = os.path.join(HERE, "valid")
MANIFEST = os.path.join(HERE, "malformed.tsv")

# GGUF value type ids
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
# ggml tensor type ids
T_F32, T_F16, T_Q4_0, T_Q4_1, T_Q8_0, T_Q4_K = 0, 1, 2, 3, 8, 12


def u8(x): return struct.pack("<B", x)
def u16(x): return struct.pack("<H", x)
def u32(x): return struct.pack("<I", x)
def u64(x): return struct.pack("<Q", x)
def i8(x): return struct.pack("<b", x)
def i16(x): return struct.pack("<h", x)
def i32(x): return struct.pack("<i", x)
def i64(x): return struct.pack("<q", x)
def f32(x): return struct.pack("<f", x)
def f64(x): return struct.pack("<d", x)


def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return u64(len(b)) + b


def kv(key, vtype, payload):
    return gstr(key) + u32(vtype) + payload


def arr(elem_type, payloads):
    return u32(elem_type) + u64(len(payloads)) + b"".join(payloads)


def tinfo(name, dims, ttype, offset):
    return gstr(name) + u32(len(dims)) + b"".join(u64(d) for d in dims) + u32(ttype) + u64(offset)


def header(n_tensors, n_kv, version=3, magic=b"GGUF"):
    return magic + u32(version) + u64(n_tensors) + u64(n_kv)


def pad(b, alignment=32):
    return b + b"\0" * (-len(b) % alignment)


def gguf(kvs, tinfos, data=b"", version=3, alignment=32, n_kv=None, n_tensors=None):
    head = header(len(tinfos) if n_tensors is None else n_tensors,
                  len(kvs) if n_kv is None else n_kv, version)
    head += b"".join(kvs) + b"".join(tinfos)
    return pad(head, alignment) + data


ARCH = kv("general.architecture", STR, gstr("llama"))
W_INFO = tinfo("w", [8], T_F32, 0)
W_DATA = b"".join(f32(i * 0.5) for i in range(8))


def base(**kw):
    return gguf([ARCH], [W_INFO], W_DATA, **kw)


def nested(depth):
    """An array nested `depth` levels deep around a single u8."""
    payload = arr(U8, [u8(7)])
    for _ in range(depth - 1):
        payload = arr(ARR, [payload])
    return payload


def valid_tiny(version=3):
    kvs = [
        ARCH,
        kv("general.name", STR, gstr("tiny test model")),
        kv("llama.context_length", U32, u32(256)),
        kv("llama.embedding_length", U32, u32(32)),
        kv("llama.block_count", U32, u32(1)),
        kv("llama.rope.freq_base", F32, f32(10000.0)),
        kv("llama.attention.layer_norm_rms_epsilon", F32, f32(1e-5)),
        kv("t.u8", U8, u8(200)),
        kv("t.i8", I8, i8(-100)),
        kv("t.u16", U16, u16(60000)),
        kv("t.i16", I16, i16(-30000)),
        kv("t.u32", U32, u32(4000000000)),
        kv("t.i32", I32, i32(-2000000000)),
        kv("t.f32", F32, f32(1.5)),
        kv("t.bool", BOOL, u8(1)),
        kv("t.str", STR, gstr("h\u00e9llo")),
        kv("t.u64", U64, u64(2**64 - 1)),
        kv("t.i64", I64, i64(-2**63)),
        kv("t.f64", F64, f64(-0.25)),
        kv("t.empty_array", ARR, arr(I32, [])),
        kv("t.int_array", ARR, arr(I32, [i32(1), i32(-2), i32(3)])),
        kv("t.float_array", ARR, arr(F32, [f32(0.5), f32(-1.0)])),
        kv("tokenizer.ggml.model", STR, gstr("gpt2")),
        kv("tokenizer.ggml.tokens", ARR, arr(STR, [gstr("a"), gstr("b"), gstr("<s>")])),
        kv("t.nested", ARR, arr(ARR, [arr(U16, [u16(1), u16(2)]), arr(U16, [])])),
    ]
    q4 = bytes(range(20)) * 2  # two Q4_1 blocks of 32 elements
    tensors = [tinfo("a.weight", [8, 2], T_F32, 0), tinfo("b.weight", [64], T_Q4_1, 64),
               tinfo("c.weight", [4], T_F16, 128)]
    data = pad(b"".join(f32(i) for i in range(16))) + pad(q4) + pad(b"\x00\x3c" * 4)
    return gguf(kvs, tensors, data, version=version)


MALFORMED_CASES = [
    # (file, message must name an offset, substring the message must contain, bytes)
    ("bad_magic.gguf", True, "not a GGUF file", b"GGUL" + base()[4:]),
    ("version_1.gguf", True, "version 1 is not supported", base(version=1)),
    ("version_99.gguf", True, "unsupported GGUF version 99", base(version=99)),
    ("big_endian.gguf", True, "big-endian", b"GGUF" + struct.pack(">I", 3) + base()[8:]),
    ("truncated_header.gguf", True, "unexpected end of file", base()[:13]),
    ("truncated_magic.gguf", True, "unexpected end of file", b"GG"),
    ("truncated_in_kv_string.gguf", True, "bytes left", base()[:24 + 8 + 20 + 4 + 8 + 2]),
    ("truncated_in_kv_type.gguf", True, "unexpected end of file", base()[:24 + 8 + 20 + 2]),
    ("truncated_in_tensor_info.gguf", True, "unexpected end of file",
     (header(2, 1) + ARCH + tinfo("a_long_tensor_name_for_the_test", [8], T_F32, 0) +
      tinfo("a_second_long_tensor_name_here", [8], T_F32, 32))[:-5]),
    ("truncated_in_tensor_data.gguf", True, "extends past the end", base()[:-1]),
    ("empty.gguf", False, "empty", b""),
    ("huge_key_length.gguf", True, "metadata key length",
     header(0, 1) + u64(2**63) + b"general.architecture" + u32(STR) + gstr("llama")),
    ("huge_string_length.gguf", True, "string value length",
     gguf([kv("general.architecture", STR, u64(2**64 - 1) + b"llama")], [])),
    ("huge_tensor_name_length.gguf", True, "tensor name length",
     header(1, 0) + u64(2**40) + b"w" * 40),
    ("huge_n_kv.gguf", True, "metadata count", header(0, 2**62) + ARCH),
    ("huge_n_tensors.gguf", True, "tensor count", header(2**62, 1) + ARCH),
    ("huge_array_length.gguf", True, "array length",
     gguf([kv("t.a", ARR, u32(U32) + u64(2**40) + u32(1) * 4)], [])),
    ("huge_string_array_length.gguf", True, "array length",
     gguf([kv("t.a", ARR, u32(STR) + u64(9) + gstr("x") * 2)], [])),
    ("nested_array_too_deep.gguf", True, "nested deeper", gguf([kv("t.a", ARR, nested(9))], [])),
    ("unknown_value_type.gguf", True, "unknown value type 13",
     gguf([kv("t.x", 13, u32(0))], [])),
    ("unknown_array_element_type.gguf", True, "unknown array element type 77",
     gguf([kv("t.a", ARR, arr(77, [u8(0)]))], [])),
    ("unknown_tensor_type.gguf", True, "unknown type id 4",
     gguf([ARCH], [tinfo("w", [8], 4, 0)], W_DATA)),
    ("n_dims_5.gguf", True, "5 dimensions",
     gguf([ARCH], [tinfo("w", [1, 1, 1, 1, 8], T_F32, 0)], W_DATA)),
    ("n_dims_0.gguf", True, "0 dimensions", gguf([ARCH], [tinfo("w", [], T_F32, 0)], W_DATA)),
    ("shape_overflow.gguf", True, "shape overflows",
     gguf([ARCH], [tinfo("w", [2**32, 2**32, 2**32], T_F32, 0)], W_DATA)),
    ("negative_dim.gguf", True, "shape overflows",
     gguf([ARCH], [tinfo("w", [2**64 - 8], T_F32, 0)], W_DATA)),
    ("byte_size_overflow.gguf", True, "byte size overflows",
     gguf([ARCH], [tinfo("w", [2, 2**61], T_F32, 0)], W_DATA)),
    ("row_not_block_multiple.gguf", True, "block size 32",
     gguf([ARCH], [tinfo("w", [31], T_Q4_0, 0)], W_DATA)),
    ("tensor_data_past_eof.gguf", True, "extends past the end",
     gguf([ARCH], [tinfo("w", [1024], T_F32, 0)], W_DATA)),
    ("tensor_offset_past_eof.gguf", True, "extends past the end",
     gguf([ARCH], [tinfo("w", [8], T_F32, 2**63)], W_DATA)),
    ("data_section_past_eof.gguf", True, "data section",
     header(1, 0) + tinfo("w", [0], T_F32, 0)),
    ("misaligned_tensor_offset.gguf", True, "not a multiple of the alignment",
     gguf([ARCH], [tinfo("w", [4], T_F32, 4)], W_DATA)),
    ("alignment_not_power_of_two.gguf", True, "power of two",
     gguf([ARCH, kv("general.alignment", U32, u32(48))], [W_INFO], W_DATA, alignment=48)),
    ("alignment_zero.gguf", True, "power of two",
     gguf([ARCH, kv("general.alignment", U32, u32(0))], [W_INFO], W_DATA)),
    ("alignment_string.gguf", True, "power of two",
     gguf([ARCH, kv("general.alignment", STR, gstr("32"))], [W_INFO], W_DATA)),
    ("duplicate_key.gguf", True, "duplicate metadata key 'general.architecture'",
     gguf([ARCH, ARCH], [W_INFO], W_DATA)),
    ("duplicate_tensor_name.gguf", True, "duplicate tensor name 'w'",
     gguf([ARCH], [W_INFO, W_INFO], W_DATA)),
]


def main():
    os.makedirs(MALFORMED, exist_ok=True)
    os.makedirs(VALID, exist_ok=True)
    kept = []
    if os.path.exists(MANIFEST):
        generated = {c[0] for c in MALFORMED_CASES}
        with open(MANIFEST) as f:
            kept = [l for l in f.read().splitlines()[1:] if l.split("\t")[0] not in generated]
    with open(MANIFEST, "w") as manifest:
        manifest.write("file\tnames_offset\tmessage_contains\n")
        for name, offset, expect, data in MALFORMED_CASES:
            with open(os.path.join(MALFORMED, name), "wb") as f:
                f.write(data)
            manifest.write(f"{name}\t{'yes' if offset else 'no'}\t{expect}\n")
        for line in kept:
            manifest.write(line + "\n")
    for name, data in [("tiny_v3.gguf", valid_tiny(3)), ("tiny_v2.gguf", valid_tiny(2))]:
        with open(os.path.join(VALID, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
