"""`mcpclass route` as a process: the shapes of a routed request's messages are checked before it
is classified and forwarded (OpenAI answers 400 for them too), and a configured model named by a
client is sent upstream under its `upstream_model` (docs/route.md, "The decision")."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from test_route import Route, ask, models_yaml, route, upstream  # noqa: E402,F401


@pytest.mark.parametrize("messages, param, message", [
    ([{"role": "user", "content": None}], "messages[0].content",
     "must be a string or an array of content parts"),
    ([{"role": "system", "content": "s"}, {"role": "user", "content": None}],
     "messages[1].content", "got null"),
    ([{"role": "user"}], "messages[0].content", "is required"),
    ([{"role": "user", "content": 7}], "messages[0].content", "got number"),
    (["hello"], "messages[0]", "must be an object"),
    ([{"content": "integral"}], "messages[0].role", "is required"),
    ([{"role": None, "content": "integral"}], "messages[0].role", "must be a string"),
    ([{"role": "user", "content": [{"type": "text", "text": None}]}],
     "messages[0].content[0].text", "must be a string, got null"),
    ([{"role": "user", "content": [{"type": "text"}]}], "messages[0].content[0].text",
     "is required"),
    ([{"role": "user", "content": ["integral"]}], "messages[0].content[0]",
     "must be an object"),
    ([{"role": "user", "content": [{"text": "integral"}]}], "messages[0].content[0].type",
     "is required"),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": 3}],
     "messages[1].content", "must be a string or an array"),
])
def test_bad_message_shapes_400_naming_the_param(route, upstream, messages, param, message):
    status, _, body = route.post({"model": "auto", "messages": messages})
    assert status == 400, body
    err = json.loads(body)["error"]
    assert err["type"] == "invalid_request_error" and err["code"] == "invalid_request"
    assert err["param"] == param, err
    assert param in err["message"] and message in err["message"], err
    assert upstream.records() == []


def test_valid_shapes_are_routed(route, upstream):
    # An assistant message may carry tool calls and no content; image parts carry no text.
    messages = [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}},
                                     {"type": "text", "text": "an integral"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "42"}]},
        {"role": "user", "content": "and the algebra?"},
    ]
    status, headers, body = route.post({"model": "auto", "messages": messages})
    assert status == 200, body
    assert headers["x-mcpclass-category"] == "math"
    forwarded = upstream.records()[0]["body"]["messages"]
    assert [m["role"] for m in forwarded][-4:] == ["user", "assistant", "tool", "user"]
    assert forwarded[-3]["content"] is None


@pytest.mark.parametrize("model, sent", [("m-vllm", "Qwen/Qwen3-8B"), ("m-none", "m-none")])
def test_passthrough_sends_the_upstream_model_name(route, upstream, model, sent):
    # m-vllm is configured with upstream_model: Qwen/Qwen3-8B, m-none without: every other byte
    # is kept.
    raw = b'{"model": "%s",  "messages": [{"role": "user", "content": "integral"}], "x": 1}' % (
        model.encode())
    status, headers, _ = route.post(None, raw=raw)
    assert status == 200
    assert headers["x-mcpclass-model"] == model
    assert "x-mcpclass-category" not in headers
    assert upstream.records()[0]["raw"] == raw.decode().replace(f'"{model}"', f'"{sent}"')


def test_passthrough_rewrites_an_escaped_model_key_and_keeps_nested_ones(route, upstream):
    raw = (b'{"meta": {"model": "m-vllm"}, "mod\\u0065l" : "m-vllm", '
           b'"messages": [{"role": "user", "content": "\\"model\\": \\"m-vllm\\""}]}')
    status, _, body = route.post(None, raw=raw)
    assert status == 200, body
    got = upstream.records()[0]["raw"]
    assert got == raw.decode().replace('"mod\\u0065l" : "m-vllm"',
                                       '"mod\\u0065l" : "Qwen/Qwen3-8B"')
    assert json.loads(got)["model"] == "Qwen/Qwen3-8B"


def test_passthrough_messages_are_the_upstreams_to_judge(route, upstream):
    raw = b'{"model":"m-none","messages":[{"role":"user","content":null}],"y":[1,2]}'
    status, _, _ = route.post(None, raw=raw)
    # Not routed, so not classified from: forwarded as it came.
    assert status == 200
    assert upstream.records()[0]["raw"] == raw.decode()
