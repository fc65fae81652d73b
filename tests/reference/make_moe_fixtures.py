#!/usr/bin/env python3
"""Generates the llama.cpp fixtures for the tiny random-weight mixture-of-experts
models (tests/fixtures/moe_greedy.json).

No small real MoE GGUF exists on PyPI, so the engine's own GGUF writer makes
them (calibrate/synth_model: presets tiny-qwen3moe, tiny-mixtral and
tiny-qwen2moe, 4 layers, 8 experts, top-2, n_embd 256, F32 router, K-quant
weights, qwen2moe with a shared expert; the bytes are the
same on every platform) through `bench_moe --write PRESET FILE`, and
llama.cpp (llama-cpp-python 0.3.36, loaded as make_gemma_fixtures.load_model
does: weight repacking off, micro-batches of 4 tokens, n_ctx 2048, 2 threads)
runs them:

    ~/.cache/powerinfer/ref-venv/bin/python tests/reference/make_moe_fixtures.py \
        [--bench-moe build/bench/bench_moe]

For each model the file records the preset, the file's size and FNV-1a 64 hash
(the test regenerates the model and checks it is the same file), its
mixture-of-experts metadata, and per prompt (token ids: BOS plus seeded random
ids, lengths 1 to 13 so that prefill crosses micro-batch boundaries) the greedy
continuation of STEPS tokens with the top-5 logits of every step. EOG tokens do
not stop a run (the weights are random).
"""

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402
import make_gemma_fixtures as mg  # noqa: E402

PRESETS = ["tiny-qwen3moe", "tiny-mixtral", "tiny-qwen2moe"]
PROMPT_LENGTHS = [1, 4, 5, 9, 13]
STEPS = 16


def fnv1a64_bytes(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def greedy(llm, ids):
    llm.reset()
    llm.eval(ids)
    generated, steps = [], []
    for _ in range(STEPS):
        logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        order = np.argsort(-logits, kind="stable")[: mf.TOP_K]
        tok = int(order[0])
        steps.append([[int(t), float(logits[t])] for t in order])
        generated.append(tok)
        llm.eval([tok])
    return generated, steps


def make_model(preset, bench_moe, workdir):
    path = Path(workdir) / f"{preset}.gguf"
    subprocess.run([str(bench_moe), "--write", preset, str(path)], check=True)
    data = path.read_bytes()
    llm = mg.load_model(path)
    md = dict(llm.metadata)
    arch = md["general.architecture"]
    rng = random.Random(preset)
    cases = []
    for n in PROMPT_LENGTHS:
        ids = [1] + [rng.randrange(3, llm.n_vocab()) for _ in range(n - 1)]
        generated, steps = greedy(llm, ids)
        cases.append({"prompt_ids": ids, "generated_ids": generated, "top5": steps})
    del llm
    return {
        "preset": preset,
        "arch": arch,
        "file_bytes": len(data),
        "fnv1a64": fnv1a64_bytes(data),
        "hparams": {k: md[k] for k in sorted(md) if k.startswith(arch + ".")},
        "cases": cases,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench-moe", default=str(mf.REPO / "build/bench/bench_moe"))
    ap.add_argument("--out", default=str(mf.REPO / "tests/fixtures"))
    args = ap.parse_args()

    import llama_cpp

    with tempfile.TemporaryDirectory() as workdir:
        models = [make_model(p, args.bench_moe, workdir) for p in PRESETS]
    meta = {
        "script": "tests/reference/make_moe_fixtures.py",
        "llama_cpp_python": llama_cpp.__version__,
        "model": "synthetic (bench_moe --write PRESET)",
    }
    data = {
        "procedure": "bench_moe --write PRESET FILE; llama.cpp with weight repacking off and micro-batches "
        "of 4 tokens (make_gemma_fixtures.load_model: n_ctx 2048, n_batch 4, n_ubatch 4, 2 threads); per "
        "prompt: llm.reset(); llm.eval(prompt_ids); repeat STEPS times: logits = llm.scores[n_tokens-1]; "
        "tok = argmax; record top-5 (id, logit) sorted by logit desc (stable); llm.eval([tok]). EOG does not "
        "stop a run. Prompt ids: 1 (BOS) then ids from random.Random(preset).randrange(3, n_vocab).",
        "steps": STEPS,
        "models": models,
    }
    mf.write_json(Path(args.out) / "moe_greedy.json", data, meta)


if __name__ == "__main__":
    main()
