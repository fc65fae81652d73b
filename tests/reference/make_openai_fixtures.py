#!/usr/bin/env python3
"""Records the request bodies that the official `openai` Python client sends
for tool calls and structured output, so that the server's tests
(server/tst_structured_output.cpp) replay exactly what that client sends,
without Python at test time. Writes tests/fixtures/openai_requests.json.

    python -m venv /tmp/oai && /tmp/oai/bin/pip install openai
    /tmp/oai/bin/python tests/reference/make_openai_fixtures.py

A local HTTP server on 127.0.0.1 records each body and answers with a canned
completion (a tool call for tool requests, a JSON document otherwise), so
that multi-turn flows continue the way an agent's code continues them:
`messages.append(reply.choices[0].message)` then a "tool" message.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import List, Literal, Optional

import openai
from pydantic import BaseModel

REPO = Path(__file__).resolve().parents[2]
BODIES = []


def canned(body):
    tool = body.get("tools")
    if tool:
        name = tool[0]["function"]["name"]
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_0", "type": "function",
            "function": {"name": name, "arguments": json.dumps({"city": "Paris"})}}]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": json.dumps(
            {"name": "Ann", "age": 31, "address": {"city": "Paris", "country": "FR"},
             "pets": [{"kind": "cat", "name": "Tom"}], "nickname": None})}
        finish = "stop"
    return {"id": "chatcmpl-0", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        BODIES.append(body)
        out = json.dumps(canned(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}
ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two numbers",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
}


class Pet(BaseModel):
    kind: Literal["cat", "dog", "fish"]
    name: str


class Address(BaseModel):
    city: str
    country: str


class Person(BaseModel):
    name: str
    age: int
    address: Address
    pets: List[Pet]
    nickname: Optional[str]


def main():
    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="k")
    names = []

    def record(name, call):
        try:
            result = call()
        except Exception as e:  # the canned reply may not fit; the body is what counts
            result = e
        names.append(name)
        return result

    user = {"role": "user", "content": "What's the weather in Paris?"}
    reply = record("tool_auto", lambda: client.chat.completions.create(
        model="m", messages=[user], tools=[WEATHER, ADD], temperature=0, max_tokens=64))
    record("tool_required", lambda: client.chat.completions.create(
        model="m", messages=[user], tools=[WEATHER, ADD], tool_choice="required",
        temperature=0, max_tokens=64))
    record("tool_named_stream", lambda: list(client.chat.completions.create(
        model="m", messages=[user], tools=[WEATHER, ADD],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        temperature=0, max_tokens=64, stream=True)))
    # An agent's second turn: the assistant message object as the client
    # returned it, then the tool's result.
    messages = [user, reply.choices[0].message,
                {"role": "tool", "tool_call_id": reply.choices[0].message.tool_calls[0].id,
                 "content": json.dumps({"temperature": 22, "condition": "sunny"})}]
    record("tool_result", lambda: client.chat.completions.create(
        model="m", messages=messages, tools=[WEATHER, ADD], temperature=0, max_tokens=48))
    record("json_object", lambda: client.chat.completions.create(
        model="m", temperature=0, max_tokens=64, response_format={"type": "json_object"},
        messages=[{"role": "user", "content": "Describe a cat as JSON."}]))
    record("json_schema_parse", lambda: client.chat.completions.parse(
        model="m", temperature=0, max_tokens=160, response_format=Person,
        messages=[{"role": "user", "content": "Invent a person who has pets."}]))
    server.shutdown()
    out = {
        "generator": {"script": "tests/reference/make_openai_fixtures.py",
                      "openai": openai.__version__},
        "procedure": "request bodies as the openai client sent them to a local recording "
                     "server (canned replies): chat.completions.create with tools / "
                     "tool_choice / stream / response_format, and chat.completions.parse "
                     "with a pydantic model",
        "requests": dict(zip(names, BODIES)),
    }
    path = REPO / "tests" / "fixtures" / "openai_requests.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path}: {', '.join(names)}")


if __name__ == "__main__":
    main()
