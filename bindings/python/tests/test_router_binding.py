"""mcpclass.Router: the evaluation `mcpclass route` forwards (mcpc_route_evaluate_json), on a
configuration with a route section, signals and decisions."""

import json
import pathlib

import pytest

import mcpclass

CONFIG_PATH = pathlib.Path(__file__).resolve().parents[2] / "testdata" / "router.yaml"
CONFIG = CONFIG_PATH.read_text()


def ask(text, model="auto"):
    return {"model": model, "messages": [{"role": "user", "content": text}]}


def test_router_decision_body_and_fallbacks():
    with mcpclass.Router(CONFIG) as r:
        ev = r.evaluate(ask("urgent: the build is red"))
        assert ev["action"] == "forward" and ev["decision"] == "urgent"
        assert ev["model"] == "m-a" and ev["use_reasoning"] is True
        assert ev["body"]["model"] == "a-up" and ev["body"]["reasoning_effort"] == "high"
        assert ev["body"]["messages"][0] == {"role": "system", "content": "Answer fast."}
        # The fallback's body is rewritten for its own family.
        [fallback] = ev["fallbacks"]
        assert fallback["model"] == "m-b" and fallback["body"]["model"] == "m-b"
        assert fallback["body"]["chat_template_kwargs"] == {"enable_thinking": True}
        assert "reasoning_effort" not in fallback["body"]
        assert ev["headers"]["x-vsr-selected-decision"] == "urgent"
        assert ev["headers"]["x-vsr-matched-keywords"] == "urgent"
        assert ev["headers"]["x-mcpclass-reasoning"] == "true"
        # No decision matches: the classifier's category chooses.
        ev = r.evaluate(ask("an algebra question"))
        assert (ev["decision"], ev["category"], ev["model"]) == ("", "math", "m-a")
        assert "x-vsr-selected-decision" not in ev["headers"]
        # explain evaluates every decision.
        ev = json.loads(r.evaluate_json(json.dumps(ask("urgent")), explain=True))
        assert [d["name"] for d in ev["decisions"]] == ["contact_block", "urgent"]
        assert all(d["evaluated"] for d in ev["decisions"])


def test_router_block_reject_passthrough():
    with mcpclass.Router(CONFIG) as r:
        ev = r.evaluate(ask("urgent: write to jane.doe@example.com"))
        assert ev["action"] == "block" and ev["status"] == 400 and ev["block_reason"] == "pii"
        assert ev["error"]["error"]["code"] == "pii_detected" and "body" not in ev
        assert ev["headers"]["x-vsr-selected-decision"] == "contact_block"
        assert ev["headers"]["x-vsr-response-path"] == "blocked"
        ev = r.evaluate(ask("hi", model="gpt-9"))
        assert ev["action"] == "reject" and ev["status"] == 404
        assert ev["error"]["error"]["code"] == "model_not_found"
        assert r.evaluate(ask("urgent", model="m-b"))["action"] == "passthrough"
        with pytest.raises(mcpclass.InvalidTextError):
            r.evaluate_json("[1, 2]")


def test_router_errors_and_close():
    with pytest.raises(mcpclass.ConfigError):
        mcpclass.Router("categories: [{name: a, description: A}]\n")  # no route section
    r = mcpclass.Router.from_file(str(CONFIG_PATH))
    assert r.evaluate(ask("urgent"))["decision"] == "urgent"
    r.close()
    r.close()  # idempotent
    with pytest.raises(ValueError):
        r.evaluate(ask("urgent"))


def test_router_other_apis():
    # mcpc_route_evaluate_api_json: the same evaluation for the Responses and Messages shapes.
    with mcpclass.Router(CONFIG) as r:
        ev = r.evaluate({"model": "auto", "input": [{"role": "user", "content": [
            {"type": "input_text", "text": "urgent: the build is red"}]}]}, api="responses")
        assert ev["action"] == "forward" and ev["decision"] == "urgent"
        assert ev["body"]["model"] == "a-up" and ev["body"]["reasoning"] == {"effort": "high"}
        assert ev["body"]["instructions"] == "Answer fast." and "messages" not in ev["body"]
        # Every model here is api_format openai: a Messages body gets Anthropic's 400.
        ev = r.evaluate({"model": "auto", "max_tokens": 8,
                         "messages": [{"role": "user", "content": "urgent"}]}, api="messages")
        assert ev["action"] == "reject" and ev["status"] == 400
        assert ev["error"]["type"] == "error"
        assert ev["error"]["error"]["type"] == "invalid_request_error"
        assert "'m-a' has api_format openai" in ev["error"]["error"]["message"]
        with pytest.raises(mcpclass.InvalidArgumentError):
            r.evaluate(ask("urgent"), api="completions")
