"""The routing step of an LLM router, in-process: classify the last user message of an
OpenAI-style chat request, pick the model and reasoning, inject the category's system prompt.

    MCPCLASS_LIBRARY=build/capi/libmcpclass.so PYTHONPATH=bindings/python \
        python3 bindings/python/examples/router.py
"""

import json
import sys

import mcpclass


def route(classifier: mcpclass.Classifier, request: dict) -> mcpclass.Result:
    text = next(m["content"] for m in reversed(request["messages"]) if m["role"] == "user")
    result = classifier.classify(text)
    prompt = classifier.categories()[result.class_index].system_prompt
    request["model"] = result.model
    if result.use_reasoning:
        request["reasoning_effort"] = "medium"
    system = {"role": "system", "content": prompt}
    if request["messages"] and request["messages"][0]["role"] == "system":
        request["messages"][0] = system
    else:
        request["messages"].insert(0, system)
    return result


if __name__ == "__main__":
    req = json.load(sys.stdin) if not sys.stdin.isatty() else {
        "model": "auto",
        "messages": [{"role": "user", "content": "Who won the battle of Hastings in 1066?"}]}
    with mcpclass.Classifier() as c:
        r = route(c, req)
    print(f"category {r.category} ({r.confidence:.2f}) -> {r.model}, reasoning {r.use_reasoning}",
          file=sys.stderr)
    print(json.dumps(req, indent=2))
