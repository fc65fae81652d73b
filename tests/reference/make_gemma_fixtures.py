#!/usr/bin/env python3
"""Generates the llama.cpp conformance fixtures for Gemma 3 270M (Q4_K_M).

Same reference and conventions as make_fixtures.py (whose strings, prompts and
helpers it reuses); run it through the wrapper:

    tests/reference/make-fixtures --gemma [--only tokenizer,greedy,layers]

Outputs in tests/fixtures/ (fields in README.md):
  gemma3_tokenizer.json  ids, pieces and detokenized text for ~90 strings (the
                         default model's strings plus multilingual, emoji,
                         whitespace runs, code, HTML and Gemma's special
                         tokens), 400 random strings, the corpus' hash, the
                         end-of-generation set
  gemma3_greedy.json     greedy ids and top-5 logits, 8 prompts x 24 steps
  gemma3_layers.json     every named tensor of one 6-token prompt's graph
                         (llama.cpp's eval callback): shape, first values,
                         L2 norm, mean
"""

import argparse
import ctypes
import json
import math
import os
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402

DEFAULT_MODEL = Path.home() / ".cache/powerinfer/models/gemma-3-270m-q4_k_m.gguf"
# Gemma 3's chat template (the 270M base GGUF carries none); the committed copy.
CHAT_TEMPLATE = mf.REPO / "tests/fixtures/chat_templates/google-gemma-3-it.jinja"

GEMMA_STRINGS = [
    # whitespace runs: Gemma has user-defined tokens for runs of spaces, tabs, newlines
    "a  b   c    d",
    " " * 40 + "x",
    "\t\t\tindented\n\t\tless\n",
    "\n" * 35 + "end",
    "  \n \t \n\n  ",
    "trailing\n\n\n",
    # multilingual and scripts with byte fallback
    "Ich möchte ein Stück Käse, bitte. Größe: XL.",
    "¿Dónde está la biblioteca? ¡Aquí!",
    "Tiếng Việt có dấu thanh điệu.",
    "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "עברית נכתבת מימין לשמאל",
    "Türkçe: ğüşöçı İstanbul",
    "ქართული ენა",
    "አማርኛ ቋንቋ",
    "ᚠᛇᚻ᛫ᛒᛦᚦ runes 𐍈 gothic 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    # emoji, ZWJ sequences, combining marks
    "👨‍👩‍👧‍👦 family, 🏳️‍🌈 flag, ✋🏿 hand",
    "e\u0301 vs \u00e9, n\u0303, Å vs A\u030a",
    "zero\u200bwidth\u200djoiner\ufeffbom",
    # code
    "#include <stdio.h>\nint main(void) {\n\treturn 0;\n}\n",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name;",
    "const f = (x) => x ** 2; // arrow\nconsole.log(`${f(3)}`);",
    '{"key": [1, 2.5, true, null], "nested": {"a": "b"}}',
    "<table><tr><td>cell</td></tr></table> <h1>Title</h1> <code>x</code>",
    # Gemma's control and user-defined tokens written as text
    "<start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\n",
    "<bos><eos><pad><unk><mask>",
    "</s> and <s> and [multimodal] and <start_of_image>",
    "<unused0><unused98> <start_of_turn",
    "▁already▁escaped ▁",
]

# Tokenized with special=False and special=True (and with BOS).
GEMMA_SPECIAL_STRINGS = [
    "<start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\n",
    "<bos>Hi<eos>",
    "text<end_of_turn>more</s>tail",
    "<start_of_turn><start_of_turn>",
    "not special: <start_of_turn",
    "<unused0><mask>[multimodal]<start_of_image><end_of_image>",
    "<table><tr><td>x</td></tr></table>",
]

GEMMA_BOS_STRINGS = ["Hello world", " Hello", "12345", "", "<start_of_turn>user\nHi<end_of_turn>"]

GREEDY_RAW_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village,",
    "def add(a, b):\n",
    "1, 2, 3, 4, 5,",
    "The theory of relativity states that",
    "Die Hauptstadt von Deutschland ist",
]
GREEDY_CHAT_PROMPTS = [
    [{"role": "user", "content": "What is 2 + 2?"}],
    [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Name three colors."},
    ],
]
GREEDY_STEPS = 24
LAYER_PROMPT = "The capital of France is"  # BOS + 5 tokens
LAYER_VALUES = 8  # first values kept per tensor


def load_model(model_path, **extra):
    """llama.cpp with weight repacking off (llama-cli --no-repack) and micro-batches
    of 4 tokens (--ubatch-size 4): its repacked Q4_K kernels (the default on
    AVX2/AVX-512 CPUs) and its K-quant products over micro-batches of 8+ rows
    sum in another order than ggml's standard dot products (about 1e-5 relative
    per product; with them 184 resp. 189 of the 192 greedy steps agree), and the
    engine reproduces the standard ones bit for bit."""
    import llama_cpp

    default_model_params = llama_cpp.llama_cpp.llama_model_default_params

    def without_repack():
        p = default_model_params()
        p.use_extra_bufts = False
        return p

    llama_cpp.llama_cpp.llama_model_default_params = without_repack
    try:
        extra.setdefault("n_batch", 4)
        extra.setdefault("n_ubatch", 4)
        return llama_cpp.Llama(
            model_path=str(model_path), n_ctx=2048, logits_all=True, verbose=False, seed=0, n_threads=2, **extra
        )
    finally:
        llama_cpp.llama_cpp.llama_model_default_params = default_model_params


def vocab_of(llm):
    return llm._model.vocab


def piece_bytes(llm, token, special):
    import llama_cpp

    buf = ctypes.create_string_buffer(256)
    n = llama_cpp.llama_token_to_piece(vocab_of(llm), token, buf, len(buf), 0, special)
    assert 0 <= n <= len(buf)
    return buf.raw[:n]


def detokenize_bytes(llm, ids, special):
    """llama.cpp's llama_detokenize(remove_special=False, unparse_special=special)."""
    import llama_cpp

    arr = (llama_cpp.llama_token * max(len(ids), 1))(*ids)
    size = 64 + 64 * len(ids)
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_detokenize(vocab_of(llm), arr, len(ids), buf, size, False, special)
    assert 0 <= n <= size
    return buf.raw[:n]


def eog_ids(llm):
    import llama_cpp

    v = vocab_of(llm)
    return [t for t in range(llm.n_vocab()) if llama_cpp.llama_vocab_is_eog(v, t)]


def token_case(llm, text, add_bos, special, detail):
    ids = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special)
    case = {"text": text, "add_bos": add_bos, "special": special, "ids": ids}
    if detail:
        pieces = [piece_bytes(llm, t, False) for t in ids]
        case["pieces"] = [mf.to_text(p) for p in pieces]
        case["pieces_hex"] = [p.hex() for p in pieces]
        case["detokenized"] = mf.to_text(detokenize_bytes(llm, ids, False))
        case["detokenized_special"] = mf.to_text(detokenize_bytes(llm, ids, True))
    return case


def make_tokenizer(llm, corpus):
    cases = []
    for text in mf.TOKENIZER_STRINGS + GEMMA_STRINGS:
        cases.append(token_case(llm, text, False, False, True))
    for text in GEMMA_BOS_STRINGS:
        cases.append(token_case(llm, text, True, False, True))
    for text in GEMMA_SPECIAL_STRINGS:
        for special in (False, True):
            cases.append(token_case(llm, text, False, special, True))
        cases.append(token_case(llm, text, True, True, True))
    for text in mf.random_strings():
        case = token_case(llm, text, False, False, False)
        case["random"] = True
        cases.append(case)
    text = Path(corpus).read_text(encoding="utf-8")
    corpus_ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    return {
        "procedure": "ids = llm.tokenize(text.encode(), add_bos=ADD_BOS, special=SPECIAL) (llama_tokenize); "
        "pieces = llama_token_to_piece(id, lstrip=0, special=False) per token (pieces_hex: its exact "
        "bytes, pieces: as text, invalid UTF-8 replaced); detokenized / detokenized_special = "
        "llama_detokenize(ids, remove_special=False, unparse_special=False / True). Gemma 3 sets "
        "tokenizer.ggml.add_space_prefix = false: no space is added or removed.",
        "n_vocab": llm.n_vocab(),
        "bos_id": int(llm.metadata["tokenizer.ggml.bos_token_id"]),
        "eos_id": int(llm.metadata["tokenizer.ggml.eos_token_id"]),
        "eog_ids": eog_ids(llm),
        "corpus": {
            "path": mf.repo_relative(corpus),
            "bytes": len(text.encode("utf-8")),
            "n_tokens": len(corpus_ids),
            "first_tokens": corpus_ids[:16],
            "fnv1a64": mf.fnv1a64_ids(corpus_ids),
        },
        "cases": cases,
    }


def gemma_chat_formatter():
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    return Jinja2ChatFormatter(template=CHAT_TEMPLATE.read_text(encoding="utf-8"), eos_token="<eos>", bos_token="<bos>")


def make_greedy(llm):
    eog = set(eog_ids(llm))
    add_bos = llm.metadata.get("tokenizer.ggml.add_bos_token", "false") == "true"
    formatter = gemma_chat_formatter()
    prompts = [("raw", p, None) for p in GREEDY_RAW_PROMPTS]
    prompts += [("chat", formatter(messages=m).prompt, m) for m in GREEDY_CHAT_PROMPTS]
    cases = []
    mf.GREEDY_STEPS = GREEDY_STEPS  # greedy_run reads it
    for kind, text, messages in prompts:
        if kind == "raw":
            ids = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=False)
        else:
            ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        generated, steps, stopped_at = mf.greedy_run(llm, ids, eog)
        case = {
            "kind": kind,
            "prompt": text,
            "prompt_ids": ids,
            "generated_ids": generated,
            "generated_text": mf.to_text(detokenize_bytes(llm, generated, False)),
            "top5": steps,
            "stopped_at_eog_step": stopped_at,
        }
        if messages is not None:
            case["messages"] = messages
        cases.append(case)
    return {
        "procedure": "llama.cpp with weight repacking off and micro-batches of 4 tokens (load_model); llm.reset(); llm.eval(prompt_ids); repeat: logits = llm.scores[n_tokens-1]; "
        "tok = argmax; record top-5 (id, logit) sorted by logit desc; stop after an EOG token "
        f"(llama_vocab_is_eog) is recorded or after {GREEDY_STEPS} steps; llm.eval([tok]). Raw prompts: "
        "tokenize(add_bos=model's add_bos_token (true), special=False); chat prompts: rendered with "
        f"{mf.repo_relative(CHAT_TEMPLATE)} (Jinja2ChatFormatter, bos <bos>, eos <eos>, "
        "add_generation_prompt=True; the 270M base GGUF has no template), tokenize(add_bos=False, "
        "special=True). generated_text = llama_detokenize(generated_ids, remove_special=False, "
        "unparse_special=False).",
        "eog_ids": sorted(eog),
        "max_steps": GREEDY_STEPS,
        "cases": cases,
    }


class TensorRecorder:
    """llama.cpp's eval callback (cb_eval): asks for every graph node and, once
    computed, keeps a summary of each F32/F16 tensor."""

    def __init__(self):
        import llama_cpp

        libdir = Path(llama_cpp.__file__).parent / "lib"
        self.ggml = ctypes.CDLL(str(libdir / "libggml-base.so"))
        self.ggml.ggml_get_name.restype = ctypes.c_char_p
        self.ggml.ggml_get_name.argtypes = [ctypes.c_void_p]
        self.ggml.ggml_op_desc.restype = ctypes.c_char_p
        self.ggml.ggml_op_desc.argtypes = [ctypes.c_void_p]
        self.ggml.ggml_nbytes.restype = ctypes.c_size_t
        self.ggml.ggml_nbytes.argtypes = [ctypes.c_void_p]
        self.ggml.ggml_backend_tensor_get.restype = None
        self.ggml.ggml_backend_tensor_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t]
        self.records = []
        self.active = False
        self.callback = llama_cpp.ggml_backend_sched_eval_callback(self._on_tensor)

    def _on_tensor(self, t, ask, _user):
        if ask:
            return True
        if not self.active:
            return True
        try:
            self._record(t)
        except Exception as e:  # never let an exception cross into C
            print(f"eval callback: {e}", file=sys.stderr)
        return True

    def _record(self, t):
        # struct ggml_tensor: enum ggml_type type; (pad); buffer*; int64_t ne[4]; size_t nb[4]; ...
        ggml_type = ctypes.c_int32.from_address(t).value
        ne = list((ctypes.c_int64 * 4).from_address(t + 16))
        nb = list((ctypes.c_size_t * 4).from_address(t + 48))
        name = self.ggml.ggml_get_name(t).decode()
        op = self.ggml.ggml_op_desc(t).decode()
        dtype = {0: np.float32, 1: np.float16}.get(ggml_type)
        rec = {"index": len(self.records), "name": name, "op": op, "shape": ne, "type": ggml_type}
        # "attn_norm-3", "Kcur-3 (view)", "cache_k_l3 (view)": layer 3; "result_norm": none.
        layer = re.match(r"^[^ ]*?(?:-|_l)(\d+)(?: |$)", name)
        rec["layer"] = int(layer.group(1)) if layer else None
        if dtype is not None:
            nbytes = self.ggml.ggml_nbytes(t)
            raw = (ctypes.c_uint8 * nbytes)()
            self.ggml.ggml_backend_tensor_get(t, raw, 0, nbytes)
            flat = np.frombuffer(raw, dtype=np.uint8)
            # Logical order: ne0 fastest, through the strides (views may be permuted).
            arr = np.lib.stride_tricks.as_strided(
                flat.view(dtype),
                shape=tuple(reversed(ne)),
                strides=tuple(reversed(nb)),
            ).astype(np.float64)
            values = arr.reshape(-1)
            rec["contiguous"] = bool(nb[0] == np.dtype(dtype).itemsize and all(
                nb[i] == nb[i - 1] * ne[i - 1] for i in range(1, 4)))
            rec["first"] = [float(x) for x in values[:LAYER_VALUES].astype(np.float32)]
            rec["l2"] = float(math.sqrt(float(np.sum(values * values))))
            rec["mean"] = float(values.mean()) if values.size else 0.0
            rec["n"] = int(values.size)
            finite = np.isfinite(values)
            if not finite.all():
                rec["non_finite"] = int((~finite).sum())
                rec["l2"] = float(math.sqrt(float(np.sum(values[finite] ** 2))))
                rec["mean"] = float(values[finite].mean()) if finite.any() else 0.0
        self.records.append(rec)


def make_layers(model_path):
    import llama_cpp

    recorder = TensorRecorder()
    default_params = llama_cpp.llama_context_default_params

    def params_with_callback():
        p = default_params()
        p.cb_eval = recorder.callback
        p.cb_eval_user_data = None
        return p

    # Llama() builds its context from llama_context_default_params(): hand it one with the callback.
    llama_cpp.llama_cpp.llama_context_default_params = params_with_callback
    try:
        llm = load_model(model_path, n_batch=512)
    finally:
        llama_cpp.llama_cpp.llama_context_default_params = default_params
    ids = llm.tokenize(LAYER_PROMPT.encode("utf-8"), add_bos=True, special=False)
    llm.reset()
    recorder.active = True
    llm.eval(ids)
    recorder.active = False
    logits = np.asarray(llm.scores[: len(ids)], dtype=np.float32)
    top5 = []
    for row in logits:
        order = np.argsort(-row, kind="stable")[:5]
        top5.append([[int(t), float(row[t])] for t in order])
    md = dict(llm.metadata)
    hparams = {k: md[k] for k in sorted(md) if k.startswith("gemma3.")}
    return {
        "procedure": "Llama(model, n_ctx=2048, n_batch=512, logits_all=True, n_threads=2, flash_attn off, weight repacking off; the 6 tokens are one micro-batch) "
        "with context_params.cb_eval set; llm.eval(prompt_ids) runs the prompt as one batch; the "
        "callback asks for every node and records each computed tensor in graph order: name "
        "(llama.cpp's cb name, '-L' = layer L), op (ggml_op_desc), shape (ne0..ne3, ne0 fastest), "
        "ggml type; for F32/F16 tensors also first (the first values in logical order, ne0 "
        "fastest, through the strides), l2 (sqrt of the sum of squares, float64), mean, n "
        "(elements) and contiguous. logits_top5: per prompt position, llm.scores top-5.",
        "prompt": LAYER_PROMPT,
        "prompt_ids": ids,
        "hparams": hparams,
        "n_values": LAYER_VALUES,
        "logits_top5": top5,
        "tensors": recorder.records,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("POWERINFER_GEMMA_MODEL", str(DEFAULT_MODEL)))
    ap.add_argument("--out", default=str(mf.REPO / "tests/fixtures"))
    ap.add_argument("--corpus", default=str(mf.DEFAULT_CORPUS))
    ap.add_argument("--only", default="tokenizer,greedy,layers")
    args = ap.parse_args()

    import llama_cpp

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))
    llm = load_model(args.model)
    meta = {
        "script": "tests/reference/make_gemma_fixtures.py",
        "llama_cpp_python": llama_cpp.__version__,
        "model": Path(args.model).name,
        "model_metadata": mf.model_metadata(llm),
    }
    if "tokenizer" in only:
        mf.write_json(out / "gemma3_tokenizer.json", make_tokenizer(llm, args.corpus), meta)
    if "greedy" in only:
        mf.write_json(out / "gemma3_greedy.json", make_greedy(llm), meta)
    del llm
    if "layers" in only:
        mf.write_json(out / "gemma3_layers.json", make_layers(args.model), meta)


if __name__ == "__main__":
    main()
