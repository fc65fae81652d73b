#!/usr/bin/env python3
"""Generates the dot-product fixtures engine/tensor/testdata/dot_<type>.bin.

llama.cpp's CPU library (libggml-cpu, as llama-cpp-python ships it or as
scripts/build-llama-bench builds it) is the oracle: for every weight type the
kernels implement, this quantizes random activations with ggml's
quantize_row_q8_0 / q8_1 / q8_K and computes each row's dot with
ggml_vec_dot_<type>_<activation type> through ctypes. tst_matmul
(kernelsGiveGgmlBits) checks that quantize_activations gives ggml's bytes and
that every x86 SIMD level's one-row dot, prompt tiles (9 tokens: the tile
kernels and, for Q4_0 and Q5_0, the rewrite as Q8_0) and row panels give
ggml's dot products bit for bit. The product and the tests never run Python.

    python make_dot_fixtures.py --ggml-cpu PATH/libggml-cpu.so [--out DIR] [--seed N]

Without --ggml-cpu the library next to the installed llama_cpp package is used
(the reference virtualenv, tests/reference/make-fixtures --dots). ggml's x86
dots use FMA wherever its build has it, so the library should come from an
AVX2 (or better) build; the fixtures hold the bits of the build that made them.

File format (little endian), one file per weight type, dot_<type>.bin:
    char[4] "PIDF", u32 version (1), u32 ggml weight type id, u32 activation
    type id, u32 elements per row n, u32 rows, u32 tokens, then the weight
    rows (rows x row bytes), the activations (tokens x n float32), ggml's
    quantized activations (tokens x activation row bytes), then the dots
    (tokens x rows float32, token-major).
"""

import argparse
import ctypes
import struct
from pathlib import Path

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

from make_quant_fixtures import random_blocks, random_floats

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "engine" / "tensor" / "testdata"

T = GGMLQuantizationType

# Weight type -> the activation type ggml's vec_dot takes.
PAIRS = [
    (T.Q4_0, T.Q8_0),
    (T.Q4_1, T.Q8_1),
    (T.Q5_0, T.Q8_0),
    (T.Q5_1, T.Q8_1),
    (T.Q8_0, T.Q8_0),
    (T.Q4_K, T.Q8_K),
    (T.Q5_K, T.Q8_K),
    (T.Q6_K, T.Q8_K),
]


def ggml_name(qtype) -> str:
    """ggml's spelling in symbol names: q4_0, q8_K."""
    return qtype.name.lower().replace("_k", "_K")


def row_bytes(qtype, n: int) -> int:
    elems, size = GGML_QUANT_SIZES[qtype]
    if qtype == T.Q8_1:
        size = 36  # ggml's block_q8_1 has fp16 d and s (gguf's table still says float)
    return n // elems * size


def find_library() -> Path:
    import llama_cpp  # the reference virtualenv's package

    lib = Path(llama_cpp.__file__).parent / "lib"
    for name in ("libggml-cpu.so", "libggml-cpu.dylib", "ggml-cpu.dll"):
        if (lib / name).exists():
            return lib / name
    raise SystemExit(f"no libggml-cpu in {lib}: pass --ggml-cpu")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ggml-cpu", type=Path, help="path of libggml-cpu.so")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--n", type=int, default=512, help="elements per row (a multiple of 256)")
    ap.add_argument("--rows", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=9)
    args = ap.parse_args()
    lib = ctypes.CDLL(str(args.ggml_cpu or find_library()))
    lib.ggml_cpu_init()  # fills the fp16 tables the dots read
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    n = args.n
    for wt, at in PAIRS:
        quantize = getattr(lib, f"quantize_row_{ggml_name(at)}")
        quantize.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        quantize.restype = None
        dot = getattr(lib, f"ggml_vec_dot_{ggml_name(wt)}_{ggml_name(at)}")
        dot.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                        ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        dot.restype = None
        elems = GGML_QUANT_SIZES[wt][0]
        w = np.ascontiguousarray(random_blocks(rng, wt, args.rows * (n // elems)), dtype=np.uint8)
        w = w.reshape(args.rows, row_bytes(wt, n))
        # Activations of several magnitudes (random_floats' block kinds).
        x = np.stack([random_floats(rng, n) for _ in range(args.tokens)]).astype(np.float32)
        xq = np.zeros((args.tokens, row_bytes(at, n)), dtype=np.uint8)
        dots = np.zeros((args.tokens, args.rows), dtype=np.float32)
        for t in range(args.tokens):
            quantize(x[t].ctypes.data, xq[t].ctypes.data, n)
            for r in range(args.rows):
                s = ctypes.c_float()
                dot(n, ctypes.addressof(s), 0, w[r].ctypes.data, 0, xq[t].ctypes.data, 0, 1)
                dots[t, r] = s.value
        name = f"dot_{wt.name.lower()}"
        with open(args.out / f"{name}.bin", "wb") as f:
            f.write(b"PIDF")
            f.write(struct.pack("<IIIIII", 1, int(wt), int(at), n, args.rows, args.tokens))
            f.write(w.tobytes())
            f.write(x.astype("<f4").tobytes())
            f.write(xq.tobytes())
            f.write(dots.astype("<f4").tobytes())
        print(f"{name}: {args.rows} rows x {n}, {args.tokens} tokens")


if __name__ == "__main__":
    main()
