#!/usr/bin/env python3
"""Generates the llama.cpp fixtures for the tiny random-weight Qwen3.5 models
(tests/fixtures/qwen35_greedy.json).

The engine's own GGUF writer makes them (calibrate/synth_model: presets
tiny-qwen35 and tiny-qwen35moe: 4 layers alternating Gated DeltaNet and gated
full attention (full_attention_interval 2), n_embd 256, 4 value / 2 key heads
of 64 in the delta rule, a 4-tap convolution, 4/2 attention heads of 64 with 16
rotated dimensions, K-quant weights; qwen35moe with 8 experts of 256, top-2
and a shared expert of 256; the bytes are the same on every platform) through
`bench_moe --write PRESET FILE`, and llama.cpp (llama-cpp-python 0.3.36, whose
vendored llama.cpp 0c1e570 runs qwen35/qwen35moe, loaded as
make_gemma_fixtures.load_model does: weight repacking off, micro-batches of 4
tokens, n_ctx 2048, 2 threads) runs them:

    ~/.cache/powerinfer/ref-venv/bin/python tests/reference/make_qwen35_fixtures.py \\
        [--bench-moe build/bench/bench_moe] [--presets tiny-qwen35,tiny-qwen35moe]

The file has the layout of moe_greedy.json (make_moe_fixtures.py): per model
the preset, the file's size and FNV-1a 64 hash, its metadata, and per prompt
(BOS plus seeded random ids, lengths 1 to 13 so that prefill crosses
micro-batch boundaries) the greedy continuation of 16 tokens with the top-5
logits of every step; and what powerinfer-cli must print for a text prompt
("cli": the prompt's ids, the greedy continuation and its bytes).
"""

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402
import make_moe_fixtures as mm  # noqa: E402

PRESETS = ["tiny-qwen35", "tiny-qwen35moe"]


CLI_PROMPT = "Hello world"


def cli_case(path):
    """What `powerinfer-cli -m FILE -p CLI_PROMPT -n 16 --temp 0` must print: the
    prompt tokenized as llama.cpp does (BOS, no special tokens), its greedy
    continuation, detokenized (the bytes in hex: random weights make invalid UTF-8)."""
    import numpy as np

    llm = mm.mg.load_model(path)
    ids = llm.tokenize(CLI_PROMPT.encode(), add_bos=True, special=False)
    llm.reset()
    llm.eval(ids)
    out = []
    for _ in range(mm.STEPS):
        tok = int(np.argmax(np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)))
        out.append(tok)
        llm.eval([tok])
    text = llm.detokenize(out)
    del llm
    return {"prompt": CLI_PROMPT, "prompt_ids": ids, "generated_ids": out, "generated_hex": text.hex()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench-moe", default=str(mf.REPO / "build/bench/bench_moe"))
    ap.add_argument("--out", default=str(mf.REPO / "tests/fixtures"))
    ap.add_argument("--presets", default=",".join(PRESETS))
    args = ap.parse_args()

    import llama_cpp

    with tempfile.TemporaryDirectory() as workdir:
        models = []
        for preset in args.presets.split(","):
            model = mm.make_model(preset, args.bench_moe, workdir)
            model["cli"] = cli_case(Path(workdir) / f"{preset}.gguf")
            models.append(model)
    meta = {
        "script": "tests/reference/make_qwen35_fixtures.py",
        "llama_cpp_python": llama_cpp.__version__,
        "model": "synthetic (bench_moe --write PRESET)",
    }
    data = {
        "procedure": "bench_moe --write PRESET FILE; llama.cpp with weight repacking off and micro-batches "
        "of 4 tokens (make_gemma_fixtures.load_model: n_ctx 2048, n_batch 4, n_ubatch 4, 2 threads); per "
        "prompt: llm.reset(); llm.eval(prompt_ids); repeat STEPS times: logits = llm.scores[n_tokens-1]; "
        "tok = argmax; record top-5 (id, logit) sorted by logit desc (stable); llm.eval([tok]). EOG does not "
        "stop a run. Prompt ids: 1 (BOS) then ids from random.Random(preset).randrange(3, n_vocab).",
        "steps": mm.STEPS,
        "models": models,
    }
    mf.write_json(Path(args.out) / "qwen35_greedy.json", data, meta)


if __name__ == "__main__":
    main()
