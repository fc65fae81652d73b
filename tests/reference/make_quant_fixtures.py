#!/usr/bin/env python3
"""Generates the quantization fixtures in engine/tensor/testdata/.

The `gguf` Python package (numpy reference (de)quantizers maintained with
llama.cpp) is the oracle for our block formats. For every type this writes a
few blocks and gguf's float dequantization of them; tst_quant reads the files
and checks that dequantize_row_ref and every SIMD dequantize_row give the same
floats bit for bit. Where gguf can quantize (F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
Q8_0) the blocks are gguf's quantization of random floats, which are stored
too, so the test also checks that quantize_row_ref produces the same bytes.
For the K-quants (gguf has no quantizer for them) the blocks are random bytes
with sane fp16 scales. The product and the tests never run Python.

    python make_quant_fixtures.py [--out DIR] [--seed N]

Needs numpy and gguf (e.g. the reference virtualenv
~/.cache/powerinfer/ref-venv, or `pip install gguf numpy`).

File format (little endian), one file per case, <name>.bin:
    char[4] "PIQF", u32 version (1), u32 ggml type id, u32 element count n,
    u32 has_source (0/1), then the blocks (row bytes for n elements),
    then n float32 dequantized values, then n float32 source values if
    has_source.
"""

import argparse
import struct
from pathlib import Path

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf import quants

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "engine" / "tensor" / "testdata"

T = GGMLQuantizationType


def write_case(out: Path, name: str, qtype, blocks: np.ndarray, source: np.ndarray | None) -> None:
    blocks = np.ascontiguousarray(blocks, dtype=np.uint8).reshape(-1)
    block_elems, block_bytes = GGML_QUANT_SIZES[qtype]
    assert blocks.size % block_bytes == 0
    n = blocks.size // block_bytes * block_elems
    deq = quants.dequantize(blocks.reshape(1, -1), qtype).astype(np.float32).reshape(-1)
    assert deq.size == n
    with open(out / f"{name}.bin", "wb") as f:
        f.write(b"PIQF")
        f.write(struct.pack("<IIII", 1, int(qtype), n, 1 if source is not None else 0))
        f.write(blocks.tobytes())
        f.write(deq.astype("<f4").tobytes())
        if source is not None:
            f.write(source.astype("<f4").reshape(-1).tobytes())
    print(f"{name}: {n} elements, {blocks.size} bytes")


def random_floats(rng: np.random.Generator, n: int) -> np.ndarray:
    """Blocks of 32 with varied magnitudes, signs, offsets and edge cases."""
    x = rng.standard_normal(n).astype(np.float32)
    blocks = x.reshape(-1, 32)
    for i in range(blocks.shape[0]):
        kind = i % 6
        if kind == 0:
            blocks[i] *= 0.02  # typical weight scale
        elif kind == 1:
            blocks[i] = blocks[i] * 3.0 + 1.5  # offset, all positive mostly
        elif kind == 2:
            blocks[i] = 0.0  # all zero: d = 0
        elif kind == 3:
            blocks[i] = np.round(blocks[i] * 4) / 4  # many exact ties
        elif kind == 4:
            blocks[i] = -np.abs(blocks[i]) * 1e-3  # all negative, small
        else:
            blocks[i] *= 100.0
    return x


def random_fp16_bytes(rng: np.random.Generator, count: int, lo: float, hi: float) -> np.ndarray:
    v = rng.uniform(lo, hi, count).astype(np.float16)
    return v.view(np.uint8).reshape(count, 2)


def random_blocks(rng: np.random.Generator, qtype, n_blocks: int) -> np.ndarray:
    """Random bytes with the fp16 scale fields replaced by sane values."""
    _, block_bytes = GGML_QUANT_SIZES[qtype]
    b = rng.integers(0, 256, size=(n_blocks, block_bytes), dtype=np.uint8)
    # Byte offsets of fp16 fields: (offset, low, high); negative scales too.
    fields = {
        T.Q4_0: [(0, -0.1, 0.1)],
        T.Q4_1: [(0, 0.0, 0.1), (2, -1.0, 1.0)],
        T.Q5_0: [(0, -0.1, 0.1)],
        T.Q5_1: [(0, 0.0, 0.1), (2, -1.0, 1.0)],
        T.Q8_0: [(0, -0.01, 0.01)],
        T.Q4_K: [(0, 0.0, 0.01), (2, 0.0, 0.01)],
        T.Q5_K: [(0, 0.0, 0.01), (2, 0.0, 0.01)],
        T.Q6_K: [(208, -0.01, 0.01)],
    }[qtype]
    for off, lo, hi in fields:
        b[:, off:off + 2] = random_fp16_bytes(rng, n_blocks, lo, hi)
    return b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--seed", type=int, default=20240611)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)

    # Quantized by gguf from random floats (checks our quantizer as well).
    for qtype in (T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0):
        src = random_floats(rng, 12 * 32)
        if qtype == T.F16:
            blocks = src.astype(np.float16).view(np.uint8)
        else:
            blocks = quants.quantize(src.reshape(1, -1), qtype).reshape(-1)
        write_case(args.out, f"{qtype.name.lower()}_quantized", qtype, blocks, src)

    # Random valid blocks: bit patterns a quantizer would rarely produce.
    for qtype in (T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0):
        write_case(args.out, f"{qtype.name.lower()}_random", qtype, random_blocks(rng, qtype, 8), None)
    for qtype in (T.Q4_K, T.Q5_K, T.Q6_K):
        write_case(args.out, f"{qtype.name.lower()}_random", qtype, random_blocks(rng, qtype, 4), None)

    # fp16 specials: zeros, subnormals, infinities, the largest finite values.
    specials = np.array([0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                         0x3C00, 0xBC00, 0x3555, 0x0200, 0x8001, 0x7BFE, 0x1234], dtype=np.uint16)
    write_case(args.out, "f16_specials", T.F16, specials.view(np.uint8), None)


if __name__ == "__main__":
    main()
