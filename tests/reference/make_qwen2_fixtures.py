#!/usr/bin/env python3
"""Generates the llama.cpp conformance fixtures for Qwen2.5-Coder-0.5B-Instruct
(qwen2, Q4_K_M: Q5_0, Q8_0, Q4_K and Q6_K weights, q/k/v biases, NEOX RoPE,
tied output). Same reference and conventions as make_gemma_fixtures.py (whose
loader, without weight repacking and with micro-batches of 4, it reuses); run
it through the wrapper:

    tests/reference/make-fixtures --qwen2 [--only tokenizer,greedy,perplexity]

Outputs in tests/fixtures/:
  qwen2_tokenizer.json   ids for the default model's strings, Gemma's
                         multilingual/code strings and 400 random strings;
                         the corpus' token count and hash
  qwen2_greedy.json      greedy ids and top-5 logits, 7 raw + 3 chat prompts
                         x 16 steps (the chat prompts rendered with the
                         model's own template)
  qwen2_perplexity.json  llama-perplexity style NLL of the first windows of
                         512 tokens of the corpus, per window

--compare-repack also prints, without writing anything, how many of the
greedy steps llama.cpp's default loader (weights repacked for its AVX2 /
AVX-512 kernels, micro-batches of 512) takes the same token as the fixture.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402
import make_gemma_fixtures as mg  # noqa: E402

DEFAULT_MODEL = Path.home() / ".cache/powerinfer/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
GREEDY_STEPS = 16
PPL_WINDOWS = 4


def make_greedy(llm):
    eog = set(mg.eog_ids(llm))
    formatter = mf.chat_formatter(llm)
    prompts = [("raw", p, None) for p in mf.RAW_PROMPTS]
    prompts += [("chat", mf.format_chat(formatter, m), m) for m in mf.CHAT_PROMPTS[:3]]
    mf.GREEDY_STEPS = GREEDY_STEPS  # greedy_run reads it
    cases = []
    for kind, text, messages in prompts:
        # Qwen2 adds no BOS (tokenizer.ggml.add_bos_token is false).
        ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=kind == "chat")
        generated, steps, stopped_at = mf.greedy_run(llm, ids, eog)
        case = {
            "kind": kind,
            "prompt": text,
            "prompt_ids": ids,
            "generated_ids": generated,
            "generated_text": mf.to_text(mg.detokenize_bytes(llm, generated, False)),
            "top5": steps,
            "stopped_at_eog_step": stopped_at,
        }
        if messages is not None:
            case["messages"] = messages
        cases.append(case)
    return {
        "procedure": "llama.cpp with weight repacking off and micro-batches of 4 tokens "
        "(make_gemma_fixtures.load_model); llm.reset(); llm.eval(prompt_ids); repeat: logits = "
        "llm.scores[n_tokens-1]; tok = argmax; record top-5 (id, logit) sorted by logit desc; stop "
        f"after an EOG token is recorded or after {GREEDY_STEPS} steps; llm.eval([tok]). Raw prompts: "
        "tokenize(add_bos=False, special=False); chat prompts: rendered with the model's own "
        "template (add_generation_prompt=True), tokenize(add_bos=False, special=True).",
        "eog_ids": sorted(eog),
        "max_steps": GREEDY_STEPS,
        "cases": cases,
    }


def make_perplexity(llm, corpus):
    text = Path(corpus).read_text(encoding="utf-8")
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    ctx, first = mf.PPL_CTX, mf.PPL_CTX // 2
    sums = []
    for w in range(PPL_WINDOWS):
        window = list(tokens[w * ctx : (w + 1) * ctx])
        llm.reset()
        llm.eval(window)
        logits = np.asarray(llm.scores[first : ctx - 1], dtype=np.float32)
        sums.append(float(mf.log_softmax_nll(logits, np.asarray(window[first + 1 : ctx])).sum()))
    scored = PPL_WINDOWS * (ctx - 1 - first)
    return {
        "procedure": "as perplexity.json (make_fixtures.make_perplexity) without BOS, over the first "
        f"{PPL_WINDOWS} windows of {ctx} tokens, loaded as the greedy fixture (no repacking, "
        "micro-batches of 4)",
        "corpus": mf.repo_relative(corpus),
        "n_ctx": ctx,
        "n_tokens": len(tokens),
        "tokens_per_window_scored": ctx - 1 - first,
        "window_nll_sums": sums,
        "ppl": float(np.exp(sum(sums) / scored)),
    }


def compare_repack(model, fixture):
    import llama_cpp

    llm = llama_cpp.Llama(model_path=str(model), n_ctx=2048, logits_all=True, verbose=False,
                          seed=0, n_threads=2)
    agree = steps = 0
    for case in fixture["cases"]:
        llm.reset()
        llm.eval(case["prompt_ids"])
        for want in case["generated_ids"]:
            logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)
            agree += int(np.argmax(logits)) == want
            steps += 1
            llm.eval([want])
    print(f"default loader (repacked weights): {agree}/{steps} teacher-forced greedy steps agree")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("POWERINFER_QWEN_MODEL", str(DEFAULT_MODEL)))
    ap.add_argument("--out", default=str(mf.REPO / "tests/fixtures"))
    ap.add_argument("--corpus", default=str(mf.DEFAULT_CORPUS))
    ap.add_argument("--only", default="tokenizer,greedy,perplexity")
    ap.add_argument("--compare-repack", action="store_true")
    args = ap.parse_args()

    import llama_cpp

    out = Path(args.out)
    if args.compare_repack:
        compare_repack(args.model, json.loads((out / "qwen2_greedy.json").read_text(encoding="utf-8")))
        return
    out.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))
    llm = mg.load_model(args.model)
    meta = {
        "script": "tests/reference/make_qwen2_fixtures.py",
        "llama_cpp_python": llama_cpp.__version__,
        "model": Path(args.model).name,
        "model_metadata": mf.model_metadata(llm),
    }
    if "tokenizer" in only:
        mf.write_json(out / "qwen2_tokenizer.json", mg.make_tokenizer(llm, args.corpus), meta)
    if "greedy" in only:
        mf.write_json(out / "qwen2_greedy.json", make_greedy(llm), meta)
    if "perplexity" in only:
        mf.write_json(out / "qwen2_perplexity.json", make_perplexity(llm, args.corpus), meta)


if __name__ == "__main__":
    main()
