#!/usr/bin/env python3
"""Generates the llama.cpp conformance fixtures in tests/fixtures/.

llama.cpp (through llama-cpp-python) is the reference our tokenizer, chat
templates and dense forward pass are checked against. The product never runs
Python; this script only regenerates the committed JSON files. Use the
`make-fixtures` wrapper next to it, which prepares the virtualenv.

    python make_fixtures.py [--model PATH] [--out DIR] [--corpus PATH] [--only NAME,...]

Outputs (see README.md for the fields): pretokenizer.json, spm-vocab.gguf +
spm_tokenizer.json, tokenizer.json, chat.json, greedy.json, perplexity.json.
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
DEFAULT_MODEL = Path.home() / ".cache/powerinfer/models/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / "data" / "frankenstein.txt"
REPO = Path(__file__).resolve().parents[2]


def repo_relative(path):
    """The path as the fixtures record it: relative to the repository when inside it."""
    p = Path(path).resolve()
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p)

# Strings covering the pre-tokenizer's branches: letters, digits (split one
# by one for SmolLM), punctuation runs, whitespace runs, contractions, and
# non-Latin scripts (multi-byte UTF-8 through byte-level BPE).
TOKENIZER_STRINGS = [
    "",
    " ",
    "  ",
    "\n",
    "\n\n\n",
    "\t",
    "Hello world",
    " Hello world",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "It's a test; isn't it? We're sure they'll say I'm right, you've seen, he'd go.",
    "IT'S LOUD AND WE'RE HERE",
    "12345",
    "In 1984 there were 3.14159 apples and 1,000,000 oranges.",
    "phone: +1 (555) 123-4567",
    "   leading spaces",
    "trailing spaces   ",
    "multiple   spaces\tand\ttabs\n\nand newlines \n end",
    "line one\r\nline two\r\n",
    "!!!???...,,,;;;",
    "a-b_c.d/e\\f|g@h#i$j%k^l&m*n(o)p",
    "\"quoted\" 'single' `backtick`",
    "Emoji: 😀🎉👍🏽 and 🇫🇷 flag",
    "你好，世界！这是一个测试。",
    "日本語のテキストとカタカナ、ひらがな。",
    "한국어 문장입니다.",
    "Café naïve façade résumé über Straße",
    "Привет, мир! Как дела?",
    "Ελληνικά γράμματα",
    "مرحبا بالعالم",
    "हिन्दी पाठ",
    "Mixed: English, 中文, русский, and emoji 🚀 in one line.",
    "def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\n",
    "for (int i = 0; i < 10; ++i) { printf(\"%d\\n\", i); }",
    "<html><body class=\"main\">Hi</body></html>",
    "x = [1, 2, 3]; y = {'a': 1}",
    "https://example.com/path?query=1&b=2#frag",
    "user@example.com",
    "ĠċĊ raw byte-level symbols",
    "ﬁ ligature and ＦＵＬＬＷＩＤＴＨ",
    "<|im_start|>user\nHi<|im_end|>",
    "The year 2024 was 366 days long.",
]

# Strings also tokenized with add_bos=True.
BOS_STRINGS = ["Hello world", "12345", ""]

# Strings containing control tokens, tokenized with special=True as well.
SPECIAL_STRINGS = [
    "<|im_start|>user\nHi<|im_end|>",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "text<|im_end|>more<|endoftext|>",
    "<|im_start|><|im_start|>",
    "not special: <|im_start",
]

CONVERSATIONS = {
    "system_user": [
        {"role": "system", "content": "You are a concise assistant."},
        {"role": "user", "content": "What is the capital of France?"},
    ],
    "user_only": [
        {"role": "user", "content": "Write a haiku about the sea."},
    ],
    "multi_turn": [
        {"role": "user", "content": "Hi there!"},
        {"role": "assistant", "content": "Hello! How can I help you today?"},
        {"role": "user", "content": "Tell me a fun fact about octopuses."},
    ],
    "system_multi_turn": [
        {"role": "system", "content": "You answer in one sentence."},
        {"role": "user", "content": "Why is the sky blue?"},
        {"role": "assistant", "content": "Because air scatters blue light more than red light."},
        {"role": "user", "content": "And sunsets?"},
    ],
    "unicode": [
        {"role": "user", "content": "Traduis « bonjour » en 日本語, s'il te plaît 🙂\nMerci."},
    ],
}

RAW_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village,",
    "def add(a, b):\n",
    "1, 2, 3, 4, 5,",
    "The theory of relativity states that",
    "Water boils at",
    "Translate to French: Hello, how are you?\nFrench:",
]

CHAT_PROMPTS = [
    [{"role": "user", "content": "What is 2 + 2?"}],
    [{"role": "user", "content": "Name three colors."}],
    [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Give me a short tip for learning to cook."},
    ],
    [{"role": "user", "content": "Write one sentence about cats."}],
    [
        {"role": "user", "content": "Hi!"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "What is the largest planet?"},
    ],
]

# Random strings over characters that exercise every pre-tokenizer branch
# (fixed seed, so regenerating gives the same set).
RANDOM_POOL = (
    list("abcdeXYZ ' \t\n\r  .,;:!?()[]{}<>=+-*/\\\"$^~|_@#%&0123456789")
    + list("éüßñ你好世界日本")
    + ["😀", "🎉", "👍🏽", "🇫🇷", "\u00a0", "\u3000", "\u2028", "\u0301", "½", "²", "٣", "Ж", "ж", "Ω",
       "\u200b", "\u0085", "'s", "'T", "'re", "'LL", "'ve", "'d", "'M", "\ufffd", "\u2581", "Ġ"]
)
N_RANDOM = 400


def random_strings():
    import random

    rng = random.Random(20240601)
    return ["".join(rng.choice(RANDOM_POOL) for _ in range(rng.randint(0, 25))) for _ in range(N_RANDOM)]


# The Hugging Face pre-tokenizer regexes that llama.cpp implements for each
# `tokenizer.ggml.pre` family; stages apply in order, each splitting the
# previous stage's pieces into matches and the text between them.
GPT2_RE = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
PRE_TOKENIZER_STAGES = {
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2_RE, r"\p{N}+", r"[0-9][0-9][0-9]"],
    "gpt2": [GPT2_RE],
    "llama-bpe": [
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
        r"|\s*[\r\n]+|\s+(?!\S)|\s+"
    ],
    "qwen2": [
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
        r"|\s*[\r\n]+|\s+(?!\S)|\s+"
    ],
    "smollm": [r"\p{N}", GPT2_RE],
}

GREEDY_STEPS = 32
TOP_K = 5
PPL_CTX = 512
PPL_SUBSET_WINDOWS = 20


def load_model(model_path):
    import llama_cpp

    llm = llama_cpp.Llama(
        model_path=str(model_path),
        n_ctx=2048,
        logits_all=True,
        verbose=False,
        seed=0,
        n_threads=2,
    )
    return llm


def model_metadata(llm):
    md = dict(llm.metadata)
    keep = {
        k: md[k]
        for k in sorted(md)
        if k.startswith("tokenizer.") and k not in ("tokenizer.chat_template",)
    }
    keep["general.name"] = md.get("general.name", "")
    return keep


def to_text(b):
    return b.decode("utf-8", errors="replace")


def fnv1a64_ids(ids):
    """FNV-1a 64 over the token ids as little-endian int32 bytes."""
    h = 0xCBF29CE484222325
    for b in np.asarray(ids, dtype="<i4").tobytes():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def make_tokenizer(llm, corpus):
    cases = []
    for text in TOKENIZER_STRINGS:
        ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        cases.append(
            {
                "text": text,
                "add_bos": False,
                "special": False,
                "ids": ids,
                "pieces": [to_text(llm.detokenize([t])) for t in ids],
                "detokenized": to_text(llm.detokenize(ids)),
            }
        )
    for text in BOS_STRINGS:
        ids = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        cases.append({"text": text, "add_bos": True, "special": False, "ids": ids})
    for text in SPECIAL_STRINGS:
        for special in (False, True):
            ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)
            cases.append({"text": text, "add_bos": False, "special": special, "ids": ids})
    for text in random_strings():
        ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        cases.append({"text": text, "add_bos": False, "special": False, "ids": ids, "random": True})
    text = Path(corpus).read_text(encoding="utf-8")
    corpus_ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    return {
        "corpus": {
            "path": repo_relative(corpus),
            "bytes": len(text.encode("utf-8")),
            "n_tokens": len(corpus_ids),
            "fnv1a64": fnv1a64_ids(corpus_ids),
        },
        "procedure": "llm.tokenize(text.encode(), add_bos=ADD_BOS, special=SPECIAL); "
        "pieces = llm.detokenize([id]) per token; detokenized = llm.detokenize(ids) "
        "(control tokens render as empty text)",
        "cases": cases,
    }


def regex_split(pattern, pieces):
    import regex

    compiled = regex.compile(pattern)
    out = []
    for piece in pieces:
        last = 0
        for m in compiled.finditer(piece):
            if m.start() > last:
                out.append(piece[last : m.start()])
            out.append(m.group())
            last = m.end()
        if last < len(piece):
            out.append(piece[last:])
    return out


def make_pretokenizer():
    cases = []
    for text in TOKENIZER_STRINGS + random_strings():
        splits = {}
        for name, stages in PRE_TOKENIZER_STAGES.items():
            pieces = [text] if text else []
            for pattern in stages:
                pieces = regex_split(pattern, pieces)
            splits[name] = pieces
        cases.append({"text": text, "splits": splits})
    return {
        "procedure": "Python `regex` finditer with the Hugging Face pre-tokenizer patterns; "
        "unmatched text between matches is kept as its own piece; stages apply in order.",
        "patterns": PRE_TOKENIZER_STAGES,
        "cases": cases,
    }


SPM_MERGES = 400


def build_spm_vocab(corpus):
    """A small SentencePiece-style vocabulary trained by plain BPE on the corpus:
    <unk> <s> </s>, the 256 <0xNN> byte tokens, the corpus' letters, then merged
    pieces scored by merge order, plus one user-defined token. Characters
    outside it (CJK, emoji, ...) exercise the byte fallback."""
    from collections import Counter

    text = Path(corpus).read_text(encoding="utf-8")[:200000]
    words = Counter("\u2581" + w for w in text.split())
    chars = sorted({c for w in words for c in w if c.isascii() or c == "\u2581"})
    seqs = {w: list(w) for w in words}
    merges = []
    for _ in range(SPM_MERGES):
        pairs = Counter()
        for w, n in words.items():
            s = seqs[w]
            for a, b in zip(s, s[1:]):
                pairs[a, b] += n
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append(a + b)
        for w in words:
            s, out, i = seqs[w], [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seqs[w] = out
    tokens, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [2, 3, 3]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        scores.append(0.0)
        types.append(6)
    for c in chars:
        tokens.append(c)
        scores.append(-1000.0)
        types.append(1)
    for rank, m in enumerate(dict.fromkeys(merges)):
        if m not in tokens:
            tokens.append(m)
            scores.append(-float(rank))
            types.append(1)
    tokens.append("<tool>")
    scores.append(0.0)
    types.append(4)
    return tokens, scores, types


def write_spm_gguf(path, tokens, scores, types):
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(2048)
    w.add_embedding_length(64)
    w.add_block_count(1)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(16)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def make_spm(out_dir, corpus):
    import llama_cpp

    tokens, scores, types = build_spm_vocab(corpus)
    vocab_path = Path(out_dir) / "spm-vocab.gguf"
    write_spm_gguf(vocab_path, tokens, scores, types)
    llm = llama_cpp.Llama(model_path=str(vocab_path), vocab_only=True, verbose=False)
    text = Path(corpus).read_text(encoding="utf-8")
    excerpts = [text[i * 1009 : i * 1009 + 300] for i in range(20)]
    cases = []
    for t in TOKENIZER_STRINGS + excerpts + random_strings():
        for add_bos in (False, True):
            ids = llm.tokenize(t.encode("utf-8"), add_bos=add_bos, special=False)
            cases.append({"text": t, "add_bos": add_bos, "special": False, "ids": ids})
    for t in ["<s>hello</s> world", "<tool>call<tool> x", "a<unk>b"]:
        for special in (False, True):
            ids = llm.tokenize(t.encode("utf-8"), add_bos=True, special=special)
            cases.append({"text": t, "add_bos": True, "special": special, "ids": ids})
    return {
        "procedure": "A SentencePiece vocabulary (tokenizer.ggml.model = llama) trained by BPE on "
        "the corpus is written to spm-vocab.gguf; llama.cpp loads it with vocab_only=True and "
        "llm.tokenize(text, add_bos=ADD_BOS, special=SPECIAL) gives the ids.",
        "vocab": "spm-vocab.gguf",
        "n_vocab": len(tokens),
        "cases": cases,
    }


def chat_formatter(llm):
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    md = llm.metadata
    vocab_tokens = lambda key: llm._model.token_get_text(int(md[key])) if key in md else ""
    return Jinja2ChatFormatter(
        template=md["tokenizer.chat_template"],
        eos_token=vocab_tokens("tokenizer.ggml.eos_token_id"),
        bos_token=vocab_tokens("tokenizer.ggml.bos_token_id"),
    )


def format_chat(formatter, messages):
    # Jinja2ChatFormatter always renders with add_generation_prompt=True.
    return formatter(messages=messages).prompt


def make_chat(llm):
    formatter = chat_formatter(llm)
    cases = []
    for name, messages in CONVERSATIONS.items():
        prompt = format_chat(formatter, messages)
        ids = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        cases.append({"name": name, "messages": messages, "prompt": prompt, "prompt_ids": ids})
    return {
        "procedure": "llama_cpp.llama_chat_format.Jinja2ChatFormatter(tokenizer.chat_template, "
        "bos/eos from the vocab) with add_generation_prompt=True; prompt_ids = "
        "llm.tokenize(prompt, add_bos=False, special=True)",
        "chat_template": llm.metadata["tokenizer.chat_template"],
        "add_generation_prompt": True,
        "cases": cases,
    }


def greedy_run(llm, prompt_ids, eog):
    llm.reset()
    llm.eval(prompt_ids)
    generated, steps, stopped_at = [], [], None
    for step in range(GREEDY_STEPS):
        logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        order = np.argsort(-logits, kind="stable")[:TOP_K]
        tok = int(order[0])
        steps.append([[int(t), float(logits[t])] for t in order])
        generated.append(tok)
        if tok in eog:
            stopped_at = step
            break
        llm.eval([tok])
    return generated, steps, stopped_at


def make_greedy(llm):
    md = llm.metadata
    eos = int(md["tokenizer.ggml.eos_token_id"])
    eog = {eos}
    if "tokenizer.ggml.eot_token_id" in md:
        eog.add(int(md["tokenizer.ggml.eot_token_id"]))
    add_bos = md.get("tokenizer.ggml.add_bos_token", "false") == "true"
    formatter = chat_formatter(llm)
    cases = []
    prompts = [("raw", p, None) for p in RAW_PROMPTS]
    prompts += [("chat", format_chat(formatter, m), m) for m in CHAT_PROMPTS]
    for kind, text, messages in prompts:
        if kind == "raw":
            ids = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=False)
        else:
            ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        generated, steps, stopped_at = greedy_run(llm, ids, eog)
        case = {
            "kind": kind,
            "prompt": text,
            "prompt_ids": ids,
            "generated_ids": generated,
            "generated_text": to_text(llm.detokenize(generated)),
            "top5": steps,
            "stopped_at_eog_step": stopped_at,
        }
        if messages is not None:
            case["messages"] = messages
        cases.append(case)
    return {
        "procedure": "llm.reset(); llm.eval(prompt_ids); repeat: logits = llm.scores[n_tokens-1]; "
        "tok = argmax; record top-5 (id, logit) sorted by logit desc; stop after the EOG "
        f"token is recorded or after {GREEDY_STEPS} steps; llm.eval([tok]). Raw prompts: "
        "tokenize(add_bos=model's add_bos_token, special=False); chat prompts: formatted "
        "with the model's template, tokenize(add_bos=False, special=True).",
        "eog_ids": sorted(eog),
        "max_steps": GREEDY_STEPS,
        "cases": cases,
    }


def log_softmax_nll(logits, targets):
    logits = logits.astype(np.float64)
    m = logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(axis=1)) + m[:, 0]
    return lse - logits[np.arange(len(targets)), targets]


def make_perplexity(llm, corpus):
    md = llm.metadata
    add_bos = md.get("tokenizer.ggml.add_bos_token", "false") == "true"
    bos = int(md["tokenizer.ggml.bos_token_id"])
    text = Path(corpus).read_text(encoding="utf-8")
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=False)
    n_windows = len(tokens) // PPL_CTX
    first = PPL_CTX // 2
    window_nll = []
    t0 = time.time()
    for w in range(n_windows):
        window = list(tokens[w * PPL_CTX : (w + 1) * PPL_CTX])
        if add_bos:
            window[0] = bos
        llm.reset()
        llm.eval(window)
        logits = np.asarray(llm.scores[first : PPL_CTX - 1], dtype=np.float32)
        targets = np.asarray(window[first + 1 : PPL_CTX])
        nll = log_softmax_nll(logits, targets)
        window_nll.append(float(nll.sum()))
        if w % 20 == 0:
            print(f"  window {w}/{n_windows} ({time.time() - t0:.0f}s)", file=sys.stderr)
    per_window = PPL_CTX - 1 - first

    def summary(k):
        total = sum(window_nll[:k])
        n = k * per_window
        return {"n_windows": k, "tokens_scored": n, "mean_nll": total / n, "ppl": math.exp(total / n)}

    return {
        "procedure": "llama-perplexity style: tokens = tokenize(whole file, add_bos=model's "
        "add_bos_token, special=False); n_windows = len(tokens) // n_ctx non-overlapping windows; "
        "if add_bos the first token of each window is replaced by BOS; each window is evaluated "
        "from an empty KV cache; logits at positions n_ctx/2 .. n_ctx-2 are scored against the "
        "next token with log-softmax; ppl = exp(sum NLL / tokens scored).",
        "corpus": repo_relative(corpus),
        "corpus_bytes": len(text.encode("utf-8")),
        "n_ctx": PPL_CTX,
        "add_bos": add_bos,
        "bos_id": bos,
        "n_tokens": len(tokens),
        "first_tokens": tokens[:16],
        "tokens_per_window_scored": per_window,
        "full": summary(n_windows),
        "subset": summary(min(PPL_SUBSET_WINDOWS, n_windows)),
        "window_nll_sums": window_nll,
    }


def write_json(path, data, meta):
    data = {"generator": meta, **data}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("POWERINFER_MODEL", str(DEFAULT_MODEL)))
    ap.add_argument("--out", default=str(REPO / "tests/fixtures"))
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--only", default="pretokenizer,spm,tokenizer,chat,greedy,perplexity")
    args = ap.parse_args()

    import llama_cpp

    llm = load_model(args.model)
    meta = {
        "script": "tests/reference/make_fixtures.py",
        "llama_cpp_python": llama_cpp.__version__,
        "model": Path(args.model).name,
        "model_metadata": model_metadata(llm),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))
    if "pretokenizer" in only:
        write_json(out / "pretokenizer.json", make_pretokenizer(), {"script": meta["script"]})
    if "spm" in only:
        write_json(out / "spm_tokenizer.json", make_spm(out, args.corpus), {"script": meta["script"]})
    if "tokenizer" in only:
        write_json(out / "tokenizer.json", make_tokenizer(llm, args.corpus), meta)
    if "chat" in only:
        write_json(out / "chat.json", make_chat(llm), meta)
    if "greedy" in only:
        write_json(out / "greedy.json", make_greedy(llm), meta)
    if "perplexity" in only:
        write_json(out / "perplexity.json", make_perplexity(llm, args.corpus), meta)


if __name__ == "__main__":
    main()
