#!/usr/bin/env python3
"""Renders every chat template in tests/fixtures/chat_templates/ with every
conversation below through Python's jinja2, configured exactly the way
Hugging Face transformers' `apply_chat_template` configures it, and writes
the results to tests/fixtures/chat_templates.json. The C++ Jinja interpreter
(engine/chat/jinja.*) must reproduce every output byte for byte, and must
raise wherever jinja2 raises (tst_jinja checks both; it needs no Python).

    python make_chat_fixtures.py [--templates DIR] [--out FILE]

Needs jinja2 only (the reference virtualenv has it:
~/.cache/powerinfer/ref-venv/bin/python tests/reference/make_chat_fixtures.py).

The environment, as in transformers.utils.chat_template_utils
(_compile_jinja_template / render_jinja_template):
  ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                extensions=[AssistantTracker, jinja2.ext.loopcontrols])
  filters["tojson"] = json.dumps(x, ensure_ascii=False, indent=indent,
                                 separators=separators, sort_keys=sort_keys)
  globals["raise_exception"] raises TemplateError(message)
  globals["strftime_now"](fmt) = now.strftime(fmt), with `now` FIXED here
  render(messages=..., tools=... or None, documents=None,
         add_generation_prompt=..., bos_token=..., eos_token=...)
"""

import argparse
import datetime
import json
import sys
from pathlib import Path

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

REPO = Path(__file__).resolve().parents[2]

# strftime_now() returns this time, so that outputs are reproducible; the C++
# test passes the same one (jinja::Options::now).
NOW = datetime.datetime(2025, 6, 15, 10, 30, 0)

# Special tokens per template file (what the model's tokenizer_config.json
# says); templates not listed get empty strings.
TOKENS = {
    "ByteDance-Seed-OSS": ("<seed:bos>", "<seed:eos>"),
    "CohereForAI-c4ai-command-r-plus-tool_use": ("<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": ("<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    "HuggingFaceTB-SmolLM2-135M-Instruct": ("<|im_start|>", "<|im_end|>"),
    "Mistral-Small-3.2-24B-Instruct-2506": ("<s>", "</s>"),
    "NVIDIA-Nemotron-Nano-v2": ("<SPECIAL_10>", "<SPECIAL_11>"),
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use": ("<|begin_of_text|>", "<|im_end|>"),
    "Qwen-QwQ-32B": ("", "<|im_end|>"),
    "Qwen-Qwen2.5-7B-Instruct": ("", "<|im_end|>"),
    "Qwen-Qwen3-0.6B": ("", "<|im_end|>"),
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B": (
        "<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"),
    "deepseek-ai-DeepSeek-V3.1": (
        "<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"),
    "deepseek-ai-deepseek-coder-33b-instruct": (
        "<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<|EOT|>"),
    "google-gemma-2-2b-it": ("<bos>", "<eos>"),
    "google-gemma-3-it": ("<bos>", "<eos>"),
    "google-gemma-7b-it": ("<bos>", "<eos>"),
    "ibm-granite-granite-3.3-2B-Instruct": ("<|end_of_text|>", "<|end_of_text|>"),
    "llama-cpp-microsoft-Phi-4-mini-instruct": ("<|endoftext|>", "<|endoftext|>"),
    "meetkai-functionary-medium-v3.2": ("<|begin_of_text|>", "<|eot_id|>"),
    "meta-llama-Llama-3.1-8B-Instruct": ("<|begin_of_text|>", "<|eot_id|>"),
    "meta-llama-Llama-3.2-3B-Instruct": ("<|begin_of_text|>", "<|eot_id|>"),
    "microsoft-Phi-3.5-mini-instruct": ("<s>", "<|endoftext|>"),
    "microsoft-phi-4": ("<|endoftext|>", "<|im_end|>"),
    "mistralai-Mistral-7B-Instruct-v0.2": ("<s>", "</s>"),
    "mistralai-Mistral-Nemo-Instruct-2407": ("<s>", "</s>"),
    "moonshotai-Kimi-K2": ("[BOS]", "[EOS]"),
    "openai-gpt-oss-120b": ("<|startoftext|>", "<|return|>"),
    "openchat-openchat-3.5-0106": ("<s>", "<|end_of_turn|>"),
    "unsloth-mistral-Devstral-Small-2507": ("<s>", "</s>"),
}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city, e.g. Paris"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                             "description": "Temperature unit"},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers",
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "number", "description": "First operand"},
                    "b": {"type": "number", "description": "Second operand", "default": 1.5},
                    "precise": {"type": "boolean", "default": False},
                },
                "required": ["a"],
            },
        },
    },
]

SYSTEM = "You are a helpful assistant."

CONVERSATIONS = {
    "hello": {"messages": [{"role": "user", "content": "Hello"}]},
    "system": {
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "What is the capital of France?"},
        ]
    },
    # llama.cpp's test-chat-template conversation: note the spaces around the
    # second answer, which some templates trim.
    "multi_turn": {
        "messages": [
            {"role": "system", "content": "You are a helpful assistant"},
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there"},
            {"role": "user", "content": "Who are you"},
            {"role": "assistant", "content": "   I am an assistant   "},
            {"role": "user", "content": "Another question"},
        ]
    },
    "no_system": {
        "messages": [
            {"role": "user", "content": "Hi!"},
            {"role": "assistant", "content": "Hello! How can I help?"},
            {"role": "user", "content": "Tell me a joke."},
        ]
    },
    "unicode": {
        "messages": [
            {"role": "system", "content": "R\u00e9ponds en fran\u00e7ais. \u65e5\u672c\u8a9e\u3082 OK \u2713"},
            {"role": "user", "content": "Quote \"this\", 'that' and \\ a backslash\nnew line\ttab  "},
            {"role": "assistant", "content": "\u00c7a va \U0001F600 </s> {{ not a tag }}"},
            {"role": "user", "content": "  Et toi ?\n\n"},
        ]
    },
    "tool_call": {
        "tools": TOOLS,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "What's the weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call12345",
                        "type": "function",
                        "function": {"name": "get_weather",
                                     "arguments": {"city": "Paris", "unit": "celsius"}},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call12345", "name": "get_weather",
             "content": "{\"temperature\": 22, \"condition\": \"sunny\"}"},
            {"role": "assistant", "content": "It is 22 \u00b0C and sunny in Paris."},
            {"role": "user", "content": "Thanks! And what is 2 + 3?"},
        ],
    },
    "tool_call_string_args": {
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "Add 2 and 3."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call67890",
                        "type": "function",
                        "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call67890", "name": "add", "content": "5"},
        ],
    },
    "tools_available": {
        "tools": TOOLS,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "Is it raining in Tokyo?"},
        ],
    },
    "thinking": {
        "messages": [
            {"role": "user", "content": "What is 1+1?"},
            {"role": "assistant", "content": "<think>\nThe user wants a sum.\n</think>\n\n1+1 = 2."},
            {"role": "user", "content": "And 2+2?"},
        ]
    },
    "content_parts": {
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": [{"type": "text", "text": "Hello "},
                                         {"type": "text", "text": "world"}]},
        ]
    },
}

# Language features, each rendered alone with FEATURE_VARS (expected output
# or the fact that jinja2 raises): tests/fixtures/jinja_features.json.
FEATURE_VARS = {
    "d": {"a": 1, "items": 2},
    "l": [1, 2, 3, 4],
    "s": "h\u00e9llo",
    "users": [{"name": "a", "age": 3, "x": {"y": 1}}, {"name": "b", "age": 5}, {"name": "c"}],
    "messages": [{"role": "system", "content": " sys "}, {"role": "user", "content": "hi"},
                 {"role": "assistant", "content": "yo"}],
}

FEATURES = [
    # whitespace control, trim_blocks, lstrip_blocks, comments, raw, newlines
    "  {% if true %}\n  x\n  {% endif %}\n  y",
    "{%- if true -%}  a  {%- endif -%}  b",
    "a {# c #}\n b",
    "a\n  {# c #}\n b",
    "a\n  {#- c -#}  \n b",
    "{%+ if true %}x{% endif %}",
    "  {%+ if true %}x{% endif %}",
    "\t{% if true %}x{% endif %}",
    "{{ 'a' }}  {% if true %}b{% endif %}",
    "\n    {%- if true %}a{% endif %}",
    "  {# c #}x",
    "{% raw %}{{ x }}{% endraw %}",
    "  {% raw %}\n a {% endraw %}\nz",
    "{%- raw -%}  {{ y }}  {%- endraw -%}  z",
    "a\n{{ 'b' }}\nc\n",
    "a\n\n",
    "{% for i in [1,2] %}\n{{ i }}\n{% endfor %}\n",
    "x {{- ' y ' -}} z",
    "a\r\nb\rc\r\n",
    "{% if true %}\n\n{% endif %}x",
    "{% for i in [1, 2] -%}\n   {{ i }}  \n{%- endfor %}",
    "  {% for i in [1] %}\n    {{ i }}\n  {% endfor %}\n",
    # literals
    "{{ 'a\\nb\\tc\\\\d\\'e\\\"f' }}",
    "{{ '\\x41\\u00e9\\U0001F600\\101\\d' }}",
    "{{ \"it's\" }}|{{ 'say \"hi\"' }}",
    "{{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1_000 }} {{ 1.5e3 }} {{ 1e-5 }} {{ 2.50 }}",
    "{{ [1, 2.0, 'x', none, true, false, [], {}] }}",
    "{{ (1,) }} {{ () }} {{ (1, 2) }} {{ 1, 2 }}",
    "{{ {'a': 1, 'b': [1, 'x']} }}",
    "{{ True }} {{ none }} {{ None }} {{ False }}",
    "{{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e15 }} {{ 1/3 }} {{ 2.0 }} {{ -0.0 }} {{ 1e300*1e300 }} {{ 3.0e-5 }} {{ 123456789.123 }}",
    "{{ 1.0 }} {{ 100.0 }} {{ 1e22 }} {{ 1.5e-7 }} {{ 12345678901234567.0 }} {{ 0.0001 }}",
    "{{ 'a' 'b' \"c\" }}",
    "{{ {1: 'a', 1.0: 'b', true: 'c'} }}",
    "{{ ['it\\'s', \"q\\\"\", 'both\\'\"', 'back\\\\slash', 'nl\\n', '\u00e9', '\\x00', '\\x7f', '\\u200b', '\\t'] }}",
    # arithmetic and precedence
    "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -7 % 3 }} {{ 7.5 % 2 }} {{ -7.5 // 2 }} {{ 2 ** 10 }} {{ 2 ** -2 }}",
    "{{ 10 / 4 }} {{ 4 / 2 }} {{ true + 1 }} {{ 'ab' * 3 }} {{ 3 * 'c' }} {{ [1] * 3 }} {{ 'a' + 'b' }} {{ [1] + [2] }} {{ (1,) + (2,) }}",
    "{{ -(3) }} {{ +3 }} {{ 1 - 0.5 }} {{ 2 + 3 * 4 ** 2 }} {{ -2 ** 2 }} {{ 10 // 3 * 3 + 10 % 3 }}",
    "{{ 'a' * 0 }}|{{ 'a' * -1 }}|{{ [1,2] * 0 }}",
    "{{ -1|abs }} {{ 'a' ~ 'b'|upper }} {{ not true|string }} {{ 1 + 1 is odd }}",
    "{{ 'a' ~ 1 ~ none ~ true ~ x ~ 1.5 }}",
    "{{ 1 / 0 }}",
    "{{ 'a' + 1 }}",
    "{{ 1 + 'a' }}",
    "{{ none + 'a' }}",
    "{{ x + 1 }}",
    "{{ [1] + (2,) }}",
    "{{ 'a' - 'b' }}",
    "{{ 'abc' ~ 1 + 2 }}",
    "{{ 5 % 0 }}",
    # comparisons and logic
    "{{ 1 == 1.0 }} {{ 'a' == 'a' }} {{ [1] == [1] }} {{ [1] == (1,) }} {{ none == none }} {{ x == none }} {{ x == x }}",
    "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'b' > 'a' }} {{ [1,2] < [1,3] }} {{ 1 != 2 }} {{ 2 >= 2 }} {{ 1.5 <= 1 }}",
    "{{ 'a' in 'cat' }} {{ 1 in [1,2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }} {{ 'x' in y }} {{ (1, 2) in [(1, 2)] }}",
    "{{ 1 < 'a' }}",
    "{{ 1 in 'abc' }}",
    "{{ 'a' in none }}",
    "{{ x < 1 }}",
    "{{ 1 and 2 }} {{ 0 and 2 }} {{ 0 or 'x' }} {{ '' or none }} {{ not 0 }} {{ not [] }} {{ none or x or 'd' }}",
    "{{ 'a' if true }}{{ 'b' if false }}|{{ 'c' if false else 'd' }}|{{ 1 if 0 else 2 if 0 else 3 }}",
    "{% if 1 %}a{% elif 2 %}b{% else %}c{% endif %}{% if 0 %}a{% elif 2 %}b{% else %}c{% endif %}{% if 0 %}a{% elif 0 %}b{% else %}c{% endif %}",
    # tests
    "{{ x is defined }} {{ x is undefined }} {{ none is none }} {{ 1 is number }} {{ 1.5 is float }} {{ true is boolean }} {{ true is number }} {{ 1 is integer }} {{ true is integer }}",
    "{{ 'a' is string }} {{ {} is mapping }} {{ [] is iterable }} {{ 'a' is iterable }} {{ 1 is iterable }} {{ x is iterable }} {{ [] is sequence }} {{ {} is sequence }} {{ (1,2) is sequence }}",
    "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'aB' is lower }}",
    "{{ 1 is eq 1 }} {{ 2 is gt 1 }} {{ 2 is lt 1 }} {{ 1 is in [1] }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ none is sameas none }}",
    "{{ 'trim' is filter }} {{ 'odd' is test }} {{ x is not defined }} {{ range is callable }} {{ 1 is callable }} {{ 1 is ne 2 }} {{ 2 is ge 2 }}",
    "{{ x is defined and x }}|{{ 'a' if x is defined else 'b' }}",
    # attributes, items and slices
    "{{ d.a }} {{ d['a'] }} {{ d.missing }} {{ d['missing'] }} {{ l[0] }} {{ l[-1] }} {{ l[9] }} {{ l.0 }} {{ none.x }} {{ none[0] }}",
    "{{ s[1] }} {{ s[-1] }} {{ s[1:3] }} {{ s[::-1] }} {{ l[1:] }} {{ l[:-1] }} {{ l[::2] }} {{ l[::-1] }} {{ l[5:1:-1] }} {{ l[-100:100] }} {{ (1,2,3)[1:] }}",
    "{{ d['items'] }} {{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 5) }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }} {{ d.items() }}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k }}{% endfor %}",
    "{{ l.index(3) }} {{ l.count(1) }} {{ l.append }}|{{ [1, 2][0] }} {{ {'a': {'b': 1}}.a.b }} {{ 'abc'.upper()[0] }}",
    "{{ d.missing is defined }}{{ d.missing|default('z') }}",
    "{{ x.y }}",
    "{{ x[0] }}",
    "{{ d.missing.x }}",
    "{{ l[::0] }}",
    "{{ l.append(1) }}",
    "{{ d.update({}) }}",
    # str methods
    "{{ '  a b  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '  a'.lstrip() }}|{{ 'a  '.rstrip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a b c'.rsplit(' ', 1) }}|{{ ' a b c '.split(none, 1) }}",
    "{{ 'a-b'.replace('-', '+') }}|{{ 'aaa'.replace('a', 'b', 2) }}|{{ 'ab'.replace('', '-') }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}|{{ 'abc'.startswith('b', 1) }}",
    "{{ 'abc'.upper() }}|{{ 'ABC'.lower() }}|{{ 'hello world-x'.title() }}|{{ 'hELLO'.capitalize() }}|{{ 'Hello'.swapcase() }}|{{ 'stra\u00dfe \u00e9\u00e0\u00fc'.upper() }}|{{ '\u00c9\u00c0\u00dc'.lower() }}",
    "{{ 'abcabc'.find('c') }}|{{ 'abcabc'.rfind('c') }}|{{ 'abc'.find('z') }}|{{ 'h\u00e9llo'.find('l') }}|{{ '-'.join(['a','b']) }}|{{ 'abc'.count('b') }}|{{ 'ab'.center(7, '*') }}|{{ 'x'.ljust(3) }}|{{ 'x'.rjust(3, '0') }}|{{ '5'.zfill(3) }}|{{ '-5'.zfill(4) }}",
    "{{ 'a\\nb\\r\\nc\\n'.splitlines() }}|{{ 'abc'.isalpha() }}|{{ '123'.isdigit() }}|{{ ' '.isspace() }}|{{ ''.isspace() }}|{{ 'a=b=c'.partition('=') }}|{{ 'a=b=c'.rpartition('=') }}|{{ 'ab'.removeprefix('a') }}|{{ 'ab'.removesuffix('b') }}",
    "{{ '{} and {}'.format(1, 'b') }}|{{ '{0}{0}'.format('x') }}|{{ '{a}-{b}'.format(a=1, b=2) }}|{{ '{:>5}'.format('x') }}|{{ '{:.2f}'.format(3.14159) }}|{{ '{:05d}'.format(42) }}|{{ '{!r}'.format('x') }}|{{ '{:^7}'.format('ab') }}|{{ '{{}}{}'.format(1) }}",
    "{{ '%s-%d' % ('a', 3) }}|{{ '%.1f%%' % 12.345 }}|{{ '%5s|%-5s|' % ('a', 'b') }}|{{ '%s' % 'x' }}|{{ '%(a)s' % {'a': 1} }}|{{ '%r' % 'q' }}",
    "{{ '-'.join([1, 2]) }}",
    "{{ 'abc'.split('') }}",
    # filters
    "{{ ' a '|trim }}|{{ 'xax'|trim('x') }}|{{ [1,2,3]|length }}|{{ s|length }}|{{ {'a':1}|length }}|{{ x|length }}|{{ [1,2]|count }}",
    "{{ [3,1,2]|sort }}|{{ ['b','A','a']|sort }}|{{ ['b','A','a']|sort(case_sensitive=true) }}|{{ [3,1,2]|sort(reverse=true) }}|{{ users|sort(attribute='name', reverse=true)|map(attribute='name')|join }}",
    "{{ [1,2]|first }}|{{ [1,2]|last }}|{{ []|first }}|{{ 'abc'|first }}|{{ 'abc'|last }}|{{ [1,2,3]|join(', ') }}|{{ [1,2]|join }}|{{ users|join(',', attribute='name') }}",
    "{{ x|default('d') }}|{{ none|default('d') }}|{{ ''|default('d', true) }}|{{ x|d('e') }}|{{ 0|default(5) }}",
    "{{ 'Ab'|upper }}|{{ 'Ab'|lower }}|{{ 1|string }}|{{ [1]|string }}|{{ x|string }}|{{ 'hello world'|capitalize }}|{{ 'hello world-x(y) it\\'s'|title }}|{{ 'a-b'|replace('-', '+') }}|{{ 'aaa'|replace('a', 'b', 1) }}",
    "{{ '42'|int }}|{{ '4.7'|int }}|{{ 'x'|int }}|{{ 'x'|int(7) }}|{{ 3.9|int }}|{{ -3.9|int }}|{{ '0x1A'|int(0, 16) }}|{{ ' 12 '|int }}|{{ '1_0'|int }}|{{ true|int }}|{{ none|int }}",
    "{{ '2.5'|float }}|{{ 'x'|float }}|{{ 3|float }}|{{ '1e3'|float }}|{{ none|float }}|{{ ' 7 '|float }}",
    "{{ {'b':1,'a':2}|items|list }}|{{ [1,2,3]|reverse|list }}|{{ 'abc'|reverse }}|{{ [1,2,2,'A','a']|unique|list }}|{{ ['a','A']|unique(case_sensitive=true)|list }}",
    "{{ [1,2,3]|sum }}|{{ [1.5,2]|sum }}|{{ users|sum(attribute='age', start=1) is number }}|{{ [1,2,3]|max }}|{{ [1,2,3]|min }}|{{ ['b','A']|max }}|{{ users|max(attribute='name') }}|{{ []|max }}",
    "{{ -3|abs }}|{{ 2.5|round }}|{{ 3.5|round }}|{{ 3.14159|round(2) }}|{{ 2.1|round(0, 'ceil') }}|{{ 2.9|round(0, 'floor') }}|{{ 7|round }}",
    "{{ 'abc'|list }}|{{ {'a':1}|list }}|{{ x|list }}|{{ '<a>&\"\\''|e }}|{{ '<b>'|escape }}|{{ '<b>'|safe }}|{{ 5|safe }}",
    "{{ 'a\\nb'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent(2, blank=true) }}|{{ 'a\\n\\nb'|indent('> ') }}|{{ 'a\\n'|indent }}",
    "{{ 'one two three'|wordcount }}|{{ 'x'|center(5) }}|{{ 'hello world foo'|truncate(9) }}|{{ 'hello world foo bar baz'|truncate(9, true) }}|{{ 'hello'|truncate(3) }}",
    "{{ '%s=%s'|format('a', 1) }}|{{ [1,2,3,4,5]|batch(2)|list }}|{{ [1,2,3]|batch(2, 0)|list }}|{{ {'b': 1, 'a': 2}|dictsort }}|{{ {'b': 1, 'a': 2}|dictsort(by='value') }}|{{ {'b': 1, 'A': 2}|dictsort(reverse=true) }}",
    "{{ users|map(attribute='name')|join(',') }}|{{ users|map(attribute='age', default=0)|list }}|{{ users|selectattr('age')|map(attribute='name')|list }}|{{ users|rejectattr('age')|map(attribute='name')|list }}",
    "{{ users|selectattr('age', 'gt', 4)|list|length }}|{{ users|selectattr('name', 'equalto', 'b')|first }}|{{ users|map(attribute='x.y')|list }}|{{ users|selectattr('age', 'defined')|list|length }}|{{ users|map(attribute='age')|select|list }}",
    "{{ [1,2,3,4]|select('odd')|list }}|{{ [1,2,3,4]|reject('odd')|list }}|{{ ['a','b']|map('upper')|list }}|{{ [1,2,3]|map('string')|join('-') }}|{{ [[1,2],[3]]|map('length')|list }}|{{ ['a','b']|map('replace', 'a', 'z')|list }}",
    "{{ messages|selectattr('role', 'equalto', 'user')|list|length }}|{{ (messages|last).content }}|{{ messages[0]['content']|trim }}|{{ messages|map(attribute='role')|list }}",
    "{% if []|select %}T{% else %}F{% endif %}|{% set g = [1,2]|select %}{{ g|list }}{{ g|list }}|{{ [1,2]|select|first }}|{{ [1,2]|select|last }}|{{ 2 in [1,2]|select }}",
    "{{ [1,2]|select|length }}",
    "{{ [1,2]|select|tojson }}",
    "{{ 5|length }}",
    "{% for x in 5|items %}{% endfor %}",
    "{% if 5|items %}generator{% endif %}",
    "{{ x|int }}",
    "{{ {'a': [1, 2.5, '\u00e9', none, true], 'b': {'c': 'x\"y\\n'}}|tojson }}|{{ [1,{'a':2}]|tojson(indent=2) }}|{{ {'b':1,'a':2}|tojson(sort_keys=true) }}|{{ [1,2]|tojson(separators=(',', ':')) }}",
    "{{ '\u00e9\U0001F600'|tojson(ensure_ascii=true) }}|{{ []|tojson(indent=2) }}|{{ {}|tojson(indent=4) }}|{{ (1,2)|tojson }}|{{ {1: 'a', none: 2}|tojson }}|{{ '\\x01\\t\\x7f'|tojson }}|{{ 1.0|tojson }}|{{ {'a': [1]}|tojson(indent='\\t') }}",
    "{{ x|tojson }}",
    "{{ {'a': x}|tojson }}",
    # loops
    "{% for i in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }}|{% endfor %}",
    "{% for i in range(5) if i % 2 %}{{ i }}{{ loop.index }}{{ loop.length }}{% endfor %}",
    "{% for i in [] %}x{% else %}empty{% endfor %}|{% for i in [1] if false %}x{% else %}none{% endfor %}",
    "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}{{ v }}{% endfor %}|{% for a, b in [[1,2],[3,4]] %}{{ a + b }}{% endfor %}|{% for k, v in {'a': 1}|items %}{{ k }}{{ v }}{% endfor %}",
    "{% for c in s %}{{ c }}-{% endfor %}|{% for k in {'a':1,'b':2} %}{{ k }}{% endfor %}|{% for i in x %}a{% else %}b{% endfor %}",
    "{% for i in [1,2,3] %}{% if i == 2 %}{% continue %}{% endif %}{{ i }}{% endfor %}|{% for i in [1,2,3] %}{% if i == 2 %}{% break %}{% endif %}{{ i }}{% endfor %}",
    "{% for i in [1,2] %}{% for j in [1,2,3] %}{{ loop.index }}{% endfor %}{{ loop.index }}{% endfor %}|{% for i in [1,2,3] %}{{ loop.cycle('a','b') }}{% endfor %}",
    "{% for i in none %}{% endfor %}",
    "{% for i in 5 %}{% endfor %}",
    "{% for a, b in [[1,2,3]] %}{% endfor %}",
    "{% for a, b in [[1]] %}{% endfor %}",
    # scoping and assignment
    "{% set x = 0 %}{% for i in [1,2,3] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}",
    "{% set ns = namespace(x=0) %}{% for i in [1,2,3] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}",
    "{% if true %}{% set y = 1 %}{% endif %}{{ y }}|{% for i in [1] %}{% set z = 5 %}{% endfor %}{{ z }}",
    "{% set a, b = 1, 2 %}{{ a }}{{ b }}|{% set t = (1, 2) %}{{ t }}|{% set x = 1 %}{% set x = 2 %}{{ x }}|{% set a, b = 'xy' %}{{ b }}",
    "{% set x %}block {{ 1 }}{% endset %}[{{ x }}]|{% set x | upper %}abc{% endset %}{{ x }}|{% set y | trim | upper %} q {% endset %}{{ y }}",
    "{% set ns = namespace() %}{% set ns.a = 1 %}{{ ns.a }}{{ ns.b }}|{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}|{{ namespace(a=1) }}|{{ namespace(a=1).a }}",
    "{% set d = 5 %}{% set d.x = 1 %}",
    "{% set a, b = [1, 2, 3] %}",
    # macros and call blocks
    "{% macro m(a, b=2) %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }}|{{ m(1, 3) }}|{{ m(b=4, a=0) }}|{{ m() }}|{{ m(1) ~ '!' }}|{{ m(1) + '!' }}",
    "{% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, k=3) }}|{{ m() }}",
    "{% macro m(a, b=a) %}{{ b }}{% endmacro %}{{ m(7) }}",
    "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(c=1) }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, a=2) }}",
    "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}",
    "{% set x = 1 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ m() }}|{% macro n() %}{{ y }}{% endmacro %}{% for y in [1] %}{{ n() }}{% endfor %}",
    "{% macro m() %}{% set inner = 1 %}{{ inner }}{% endmacro %}{{ m() }}{{ inner }}",
    "{% macro m(t) %}[{{ caller() }}|{{ t }}]{% endmacro %}{% call m('x') %}body{% endcall %}|{% macro n() %}{{ caller(5) }}{% endmacro %}{% call(v) n() %}v={{ v }}{% endcall %}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m }}",
    # other statements and globals
    "{% filter upper %}abc{{ 'd' }}{% endfilter %}|{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a }}|{% generation %}g{% endgeneration %}|{% print 'p' %}",
    "{{ raise_exception('boom') }}",
    "{% if true %}{{ raise_exception('Conversation roles must alternate!') }}{% endif %}",
    "{{ strftime_now('%Y-%m-%d %H:%M:%S %a %A %b %B %j %p %I %y %e') }}|{{ strftime_now('%-d %b %Y') }}|{{ strftime_now('%d %B %Y') }}",
    "{{ range(3)|list }}{{ range(1, 10, 3)|list }}{{ range(5, 0, -2)|list }}{{ range(0)|list }}{{ range(-3)|list }}",
    "{{ range(100001)|list }}",
    "{{ dict(a=1, b=2) }} {{ dict({'x': 1}, y=2) }} {{ dict([('k', 'v')]) }}",
    "{% set j = joiner(', ') %}{% for i in [1,2,3] %}{{ j() }}{{ i }}{% endfor %}",
    "{{ x() }}",
    "{{ 'a'() }}",
    "{{ foo|nosuchfilter }}",
    "{% if x is nosuchtest %}{% endif %}",
    # generators, Python corner cases
    "{{ false|map('string')|list }}|{{ 0|select|list }}|{{ none|selectattr('a')|list }}|{{ [1, 'a']|map('int')|first }}|{{ ['a', 5]|map('upper')|list }}",
    "{{ [1, x]|map('string')|first }}|{{ 5|map('string') is iterable }}",
    "{{ [x, 1]|map('abs')|first }}",
    "{{ 5|map('string')|list }}",
    "{{ 2.5 is odd }} {{ 3.0 is odd }} {{ -3 is odd }} {{ 4.0 is even }} {{ '%s' is odd }} {{ 7 is divisibleby 2.5 }}",
    "{{ ['b', 'a']|map(attribute='name')|list|sort }}|{{ [x, y]|sort }}|{{ [x, x]|unique|list }}|{{ {x: 1} }}|{{ x in {'k': 1} }}|{{ [x] }}",
    "{{ [x, 1]|sort }}",
    "{{ 'a' % l }}|{{ 'b' % d }}|{{ 'c' % x }}|{{ '%s!' % x }}|{{ x|truncate(3) }}|{{ [1, 2]|truncate(3) }}",
    "{{ 'a' % (1, 2) }}",
    "{{ true[1:] }}|{{ none[:1] }}|{{ {}[::-1] }}|{{ 2.5[:1] }}|{{ (1, 2)[1:] }}",
    "{% set v = d.a[1:] %}",
    "{% set v = d[1:] %}",
    "{{ 5|indent }}",
    "{{ x|indent }}",
    "{{ 'abcdef'|truncate(2) }}",
    # syntax errors
    "{% if true %}",
    "{% for %}",
    "{{ }}",
    "{{ 'abc }}",
    "{% endif %}",
    "{{ (1 }}",
    "{{ 1 ] }}",
    "{% set 1 = 2 %}",
    "{% include 'x' %}",
    "{# unclosed",
    "{% raw %}unclosed",
    "{{ a.1.b }}{{ 1.5.x }}",
    "{% macro m(a=1, b) %}{% endmacro %}",
    "{{ 1 is is defined }}",
    "{% elif %}",
    "{{ a | }}",
    "{% break %}",
]


class AssistantTracker(Extension):
    """transformers' {% generation %} ... {% endgeneration %} tag (it only
    records where assistant text is; the output is the body unchanged)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    @jinja2.pass_eval_context
    def _generation_support(self, context, caller):
        return caller()


def make_environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return NOW.strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--templates", default=str(REPO / "tests/fixtures/chat_templates"))
    ap.add_argument("--out", default=str(REPO / "tests/fixtures/chat_templates.json"))
    ap.add_argument("--features-out", default=str(REPO / "tests/fixtures/jinja_features.json"))
    args = ap.parse_args()

    env = make_environment()
    files = sorted(Path(args.templates).glob("*.jinja"))
    templates = {}
    cases = []
    n_ok = n_err = 0
    for path in files:
        name = path.stem
        source = path.read_text(encoding="utf-8")
        bos, eos = TOKENS.get(name, ("", ""))
        templates[name] = {"file": path.name, "bos_token": bos, "eos_token": eos}
        compiled = env.from_string(source)
        for conv_name, conv in CONVERSATIONS.items():
            for gen in (True, False):
                case = {"template": name, "conversation": conv_name, "add_generation_prompt": gen}
                try:
                    # Deep copies: a template must not see another's changes
                    # (the sandbox forbids them anyway).
                    out = compiled.render(messages=json.loads(json.dumps(conv["messages"])),
                                          tools=json.loads(json.dumps(conv["tools"]))
                                          if "tools" in conv else None,
                                          documents=None, add_generation_prompt=gen,
                                          bos_token=bos, eos_token=eos)
                    case["output"] = out
                    n_ok += 1
                except Exception as e:  # noqa: BLE001 - any error is recorded
                    case["error"] = f"{type(e).__name__}: {e}"
                    n_err += 1
                cases.append(case)

    fixture = {
        "generator": {
            "script": "tests/reference/make_chat_fixtures.py",
            "jinja2": jinja2.__version__,
            "python": sys.version.split()[0],
        },
        "procedure": "transformers' apply_chat_template environment: "
                     "ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, "
                     "extensions=[AssistantTracker, loopcontrols]); tojson = json.dumps(x, "
                     "ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys); "
                     "raise_exception; strftime_now(fmt) = now.strftime(fmt) with `now` fixed; "
                     "render(messages, tools (None when the conversation has none), documents=None, "
                     "add_generation_prompt, bos_token, eos_token). `error` replaces `output` "
                     "where jinja2 raises.",
        "now": NOW.strftime("%Y-%m-%dT%H:%M:%S"),
        "templates": templates,
        "conversations": CONVERSATIONS,
        "cases": cases,
    }
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        json.dump(fixture, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(files)} templates x {len(CONVERSATIONS)} conversations x 2: "
          f"{n_ok} rendered, {n_err} raise; wrote {args.out}")

    features = []
    for source in FEATURES:
        case = {"template": source}
        try:
            case["output"] = env.from_string(source).render(**json.loads(json.dumps(FEATURE_VARS)))
        except Exception as e:  # noqa: BLE001
            case["error"] = f"{type(e).__name__}: {e}"
        features.append(case)
    with open(args.features_out, "w", encoding="utf-8", newline="\n") as f:
        json.dump({"generator": fixture["generator"], "procedure": "each template rendered alone "
                   "with `variables` in the same environment (strftime_now fixed at `now`); "
                   "`error` where jinja2 raises", "now": fixture["now"], "variables": FEATURE_VARS,
                   "cases": features}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(features)} feature snippets: "
          f"{sum('error' in c for c in features)} raise; wrote {args.features_out}")


if __name__ == "__main__":
    main()
