"""mcpclass: classify LLM queries in-process and serve the classifier over MCP.

A ctypes binding of the mcpclass C ABI (libmcpclass.so). Standard library only.

    import mcpclass
    with mcpclass.Classifier() as c:          # the embedded default configuration
        r = c.classify("What is 2 + 2?")
        print(r.category, r.model, r.use_reasoning)

Classifier and Server are safe to use from many threads; results are copied into Python objects
and the native memory is released in the same call.
"""

import ctypes
import json
import threading
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_size_t, c_void_p
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

from . import _native
from ._native import lib

__all__ = [
    "ABI_VERSION", "Category", "CategoryProbability", "Classifier", "Decision", "Error",
    "Result", "Router", "Server", "TokenClassifier", "decide", "entropy", "version",
]

ABI_VERSION = _native.ABI_VERSION
JSON_PROBABILITIES = 1
JSON_TOOL_RESULT = 2


class Error(Exception):
    """A failure reported by the library: `code` (stable, negative), `status` (its name),
    `message` and, for configuration errors, `path` (the offending key)."""

    def __init__(self, code: int, status: str, message: str, path: str = ""):
        super().__init__(message)
        self.code, self.status, self.message, self.path = code, status, message, path


class InvalidArgumentError(Error):
    pass


class ConfigError(Error):
    pass


class InvalidTextError(Error):
    pass


class ClassifyError(Error):
    pass


class StateError(Error):
    pass


class TransportError(Error):
    pass


class NotFoundError(Error):
    pass


class UnavailableError(Error):
    """A remote classifier's server is unreachable, timed out, or its circuit breaker is open;
    the call may succeed later."""


class OverloadedError(Error):
    """Refused by the configuration's server.admission: no place, or the deadline passed before
    the call ran; the call may succeed later."""


_ERRORS = {-1: InvalidArgumentError, -3: ConfigError, -4: InvalidTextError, -5: ClassifyError,
           -6: StateError, -7: TransportError, -8: NotFoundError, -9: UnavailableError,
           -10: OverloadedError}


def _check(status: int, err: c_void_p) -> None:
    if status == 0:
        return
    try:
        message = (lib.mcpc_error_message(err) or b"").decode("utf-8", "replace")
        path = (lib.mcpc_error_path(err) or b"").decode("utf-8", "replace")
    finally:
        lib.mcpc_error_free(err)
    name = lib.mcpc_status_name(status).decode()
    raise _ERRORS.get(status, Error)(status, name, message, path)


def _take_string(p: c_void_p) -> Optional[str]:
    if not p.value:
        return None
    try:
        return ctypes.string_at(p.value).decode("utf-8")
    finally:
        lib.mcpc_string_free(p)


def version() -> str:
    """The loaded library's version."""
    return lib.mcpc_version().decode()


def _s(p) -> str:
    return p.decode("utf-8") if p is not None else ""


@dataclass(frozen=True)
class CategoryProbability:
    name: str
    probability: float


@dataclass(frozen=True)
class Decision:
    """The entropy-based reasoning decision."""
    use_reasoning: bool
    confidence: float
    reason: str
    strategy: str
    top_categories: List[CategoryProbability] = field(default_factory=list)


@dataclass(frozen=True)
class Result:
    """One classification. `probabilities` is None unless asked for."""
    class_index: int
    category: str
    confidence: float
    model: str
    use_reasoning: bool
    entropy: float
    decision: Decision
    probabilities: Optional[List[float]] = None
    # What produced it: {kind, model_id, tokenizer_id, taxonomy_id, generation, cached, fallback},
    # as classify_text's _meta["io.mcpclass/provenance"].
    provenance: Optional[dict] = None
    # A trained head's out-of-scope score in [0, 1] (low = far from its training rows), else None.
    in_scope: Optional[float] = None


@dataclass(frozen=True)
class RankedDocument:
    """One document's place in a reranking: its position in the request's documents, its
    relevance (higher is better) and, when asked for, its text."""
    index: int
    relevance_score: float
    document: Optional[str] = None


@dataclass(frozen=True)
class Category:
    name: str
    description: str
    system_prompt: str
    model: Optional[str] = None  # None: the routing policy chooses
    use_reasoning: Optional[bool] = None  # None: the routing policy decides


def _decision(d) -> Decision:
    top = [CategoryProbability(_s(d.top_categories[i].name), d.top_categories[i].probability)
           for i in range(d.num_top_categories)]
    return Decision(bool(d.use_reasoning), d.confidence, _s(d.reason), _s(d.strategy), top)


def _result(r, with_probabilities: bool) -> Result:
    probs = ([r.probabilities[i] for i in range(r.num_probabilities)]
             if with_probabilities else None)
    p = r.provenance
    provenance = {"kind": _s(p.kind), "model_id": _s(p.model_id),
                  "tokenizer_id": _s(p.tokenizer_id) if p.tokenizer_id else None,
                  "taxonomy_id": _s(p.taxonomy_id), "generation": p.generation,
                  "cached": bool(p.cached), "fallback": bool(p.fallback)}
    return Result(r.class_index, _s(r.category), r.confidence, _s(r.model), bool(r.use_reasoning),
                  r.entropy, _decision(r.decision), probs, provenance,
                  r.in_scope if r.has_in_scope else None)


class _Config:
    """A parsed configuration document (text, a path via from_file, or None = default)."""

    def __init__(self, text: Optional[str] = None, path: Optional[str] = None):
        self.handle = c_void_p()
        err = c_void_p()
        if path is not None:
            _check(lib.mcpc_config_new_from_file(path.encode(), byref(self.handle), byref(err)),
                   err)
        else:
            data = text.encode("utf-8") if text else None
            _check(lib.mcpc_config_new(data, len(data) if data else 0, byref(self.handle),
                                       byref(err)), err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        lib.mcpc_config_free(self.handle)
        self.handle = c_void_p()


class _Handle:
    """A native handle with close() guarded against concurrent use."""

    _free = None

    def __init__(self):
        self._handle = c_void_p()
        self._lock = threading.RLock()
        self._users = 0
        self._idle = threading.Condition(self._lock)

    def _acquire(self) -> c_void_p:
        with self._lock:
            if not self._handle.value:
                raise ValueError(f"{type(self).__name__} is closed")
            self._users += 1
            return self._handle

    def _release(self) -> None:
        with self._lock:
            self._users -= 1
            self._idle.notify_all()

    def close(self) -> None:
        """Releases the native object (idempotent); waits for calls in flight."""
        with self._lock:
            self._idle.wait_for(lambda: self._users == 0)
            if self._handle.value:
                type(self)._free(self._handle)
                self._handle = c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


class _Use:
    def __init__(self, owner: _Handle):
        self.owner = owner

    def __enter__(self) -> c_void_p:
        return self.owner._acquire()

    def __exit__(self, *exc):
        self.owner._release()


class Classifier(_Handle):
    """A classifier built from a configuration document: YAML/JSON text, or None for the
    embedded default. Use Classifier.from_file for a path, Classifier.from_callback for a
    classifier whose scores come from Python."""

    _free = staticmethod(lib.mcpc_classifier_free)

    def __init__(self, config: Optional[str] = None, *, _path: Optional[str] = None,
                 _callback=None):
        super().__init__()
        self._callbacks = None
        err = c_void_p()
        with _Config(config, _path) as cfg:
            if _callback is None:
                _check(lib.mcpc_classifier_new(cfg.handle, byref(self._handle), byref(err)), err)
            else:
                # Kept alive as long as this object: the library calls them until freed.
                self._callbacks = _native.CLASSIFY_CALLBACK(_callback)
                _check(lib.mcpc_classifier_new_host(cfg.handle, self._callbacks, None, None,
                                                    byref(self._handle), byref(err)), err)

    @classmethod
    def from_file(cls, path: str) -> "Classifier":
        return cls(_path=path)

    @classmethod
    def from_callback(cls, scores: Callable[[str], Sequence[float]],
                      config: Optional[str] = None) -> "Classifier":
        """`scores(text)` returns one non-negative score per category (config order); the
        library normalises them, picks the class and applies the routing policy. Called from
        the classifying thread (or a server worker), possibly from several threads at once.
        An exception fails the classification with ClassifyError."""

        def trampoline(_ud, text, text_len, probs, n, msg, msg_size):
            try:
                values = list(scores(ctypes.string_at(text, text_len).decode("utf-8")))
                if len(values) != n:
                    raise ValueError(f"expected {n} scores, got {len(values)}")
                for i, v in enumerate(values):
                    probs[i] = float(v)
                return 0
            except BaseException as e:  # nothing may propagate into C
                data = f"{type(e).__name__}: {e}".encode()[: max(msg_size - 1, 0)]
                if msg and msg_size:
                    ctypes.memmove(msg, data + b"\0", len(data) + 1)
                return 1

        return cls(config, _callback=trampoline)

    @property
    def category_count(self) -> int:
        with _Use(self) as h:
            return lib.mcpc_classifier_category_count(h)

    def classify(self, text: str, probabilities: bool = False) -> Result:
        data = text.encode("utf-8", "surrogatepass")
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_classify(h, data, len(data), byref(out), byref(err)), err)
        try:
            return _result(ctypes.cast(out, POINTER(_native.mcpc_result)).contents, probabilities)
        finally:
            lib.mcpc_result_free(out)

    def classify_json(self, text: str, probabilities: bool = False,
                      tool_result: bool = False) -> str:
        """Exactly what the MCP tool classify_text returns: the bare object, or with
        tool_result the whole CallToolResult."""
        data = text.encode("utf-8", "surrogatepass")
        flags = (JSON_PROBABILITIES if probabilities else 0) | (
            JSON_TOOL_RESULT if tool_result else 0)
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_classify_json(h, data, len(data), flags, byref(out), byref(err)), err)
        return _take_string(out)

    def classify_pair_json(self, text: str, text_pair: str, probabilities: bool = False,
                           tool_result: bool = False) -> str:
        """A sentence pair (NLI premise and hypothesis, a cross-encoder's query and passage)
        classified together, as classify_text with text_pair answers it. Raises Error
        (INVALID_ARGUMENT) when the classifier classifies one text."""
        first = text.encode("utf-8", "surrogatepass")
        second = text_pair.encode("utf-8", "surrogatepass")
        options = _native.mcpc_classify_options(
            (JSON_PROBABILITIES if probabilities else 0) | (JSON_TOOL_RESULT if tool_result else 0),
            0)
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_classify_pair_json(h, first, len(first), second, len(second),
                                               byref(options), byref(out), byref(err)), err)
        return _take_string(out)

    def rerank_json(self, request_json: str) -> str:
        """The rerank tool's answer, {"results": [{index, relevance_score, document?}]}, to its
        arguments {"query", "documents", "top_n"?, "return_documents"?}. Raises Error
        (INVALID_ARGUMENT) when the classifier is no cross-encoder reranker."""
        request = request_json.encode("utf-8", "surrogatepass")
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_rerank_json(h, request, len(request), None, byref(out), byref(err)),
                   err)
        return _take_string(out)

    def rerank(self, query: str, documents: Sequence[str], top_n: Optional[int] = None,
               return_documents: bool = False) -> List[RankedDocument]:
        """`documents` scored for `query` by the cross-encoder, best first (rerank_json)."""
        request: Dict[str, object] = {"query": query, "documents": list(documents),
                                      "return_documents": return_documents}
        if top_n is not None:
            request["top_n"] = top_n
        answer = json.loads(self.rerank_json(json.dumps(request)))
        return [RankedDocument(r["index"], r["relevance_score"],
                               r.get("document", {}).get("text")) for r in answer["results"]]

    def classify_batch(self, texts: Sequence[str], probabilities: bool = False) -> List[Result]:
        encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
        n = len(encoded)
        ptrs = (c_char_p * max(n, 1))(*encoded)
        lens = (c_size_t * max(n, 1))(*[len(e) for e in encoded])
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_classify_batch(h, ptrs, lens, n, byref(out), byref(err)), err)
        try:
            batch = ctypes.cast(out, POINTER(_native.mcpc_batch)).contents
            return [_result(batch.results[i], probabilities) for i in range(batch.count)]
        finally:
            lib.mcpc_batch_free(out)

    def categories(self) -> List[Category]:
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_classifier_categories(h, byref(out), byref(err)), err)
        try:
            cats = ctypes.cast(out, POINTER(_native.mcpc_categories)).contents
            return [Category(_s(c.name), _s(c.description), _s(c.system_prompt),
                             c.model.decode() if c.model is not None else None,
                             None if c.use_reasoning < 0 else bool(c.use_reasoning))
                    for c in (cats.items[i] for i in range(cats.count))]
        finally:
            lib.mcpc_categories_free(out)

    def categories_json(self) -> str:
        """The list_categories tool's document."""
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_classifier_categories_json(h, byref(out), byref(err)), err)
        return _take_string(out)

    @property
    def tasks(self) -> List[str]:
        """The tasks of a base shared by several LoRA adapters (`adapters: {task: DIR}`): the
        one this classifier answers first, then the others; [] for any other classifier."""
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_classifier_tasks_json(h, byref(out), byref(err)), err)
        return json.loads(_take_string(out))

    def task(self, name: str) -> "Classifier":
        """The classifier of one of `tasks` (what the MCP tool classify_<name> answers), over
        the same loaded base; it keeps the base alive. NotFoundError for another name."""
        data = name.encode("utf-8", "surrogatepass")
        handle, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_classifier_task(h, data, byref(handle), byref(err)), err)
        task = Classifier.__new__(Classifier)
        _Handle.__init__(task)
        task._callbacks = self._callbacks
        task._handle = handle
        return task


class TokenClassifier(_Handle):
    """The `token_classifier` of a configuration document (a Hugging Face
    *ForTokenClassification checkpoint, e.g. a PII detector): labelled spans of texts, merged as
    the transformers token-classification pipeline merges them. Use TokenClassifier.from_file
    for a path."""

    _free = staticmethod(lib.mcpc_token_classifier_free)

    def __init__(self, config: str, *, _path: Optional[str] = None):
        super().__init__()
        err = c_void_p()
        with _Config(config, _path) as cfg:
            _check(lib.mcpc_token_classifier_new(cfg.handle, byref(self._handle), byref(err)), err)

    @classmethod
    def from_file(cls, path: str) -> "TokenClassifier":
        return cls(None, _path=path)

    def detect_json(self, text: str, aggregation: Optional[str] = None) -> str:
        """Exactly the structuredContent of the MCP tool: {"spans": [...], "aggregation": ...}."""
        data = text.encode("utf-8", "surrogatepass")
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_detect_spans_json(h, data, len(data),
                                              aggregation.encode() if aggregation else None,
                                              byref(out), byref(err)), err)
        return _take_string(out)

    def detect(self, text: str, aggregation: Optional[str] = None) -> List[dict]:
        """The spans: dicts with entity_group (entity with aggregation "none"), score, word,
        start and end (code points, i.e. Python string indices: text[start:end]), byte_start
        and byte_end (UTF-8 bytes)."""
        return json.loads(self.detect_json(text, aggregation))["spans"]


class Router(_Handle):
    """The semantic router of a configuration document (its `route` and `routing` sections):
    evaluate() answers what `mcpclass route` would do with a chat completion request (the
    decision, the body to forward, the headers, or a block), from the same code. Use
    Router.from_file for a path. `classifier`: the Classifier its domain signals read (None:
    built from the configuration)."""

    _free = staticmethod(lib.mcpc_router_free)

    def __init__(self, config: str, classifier: Optional[Classifier] = None, *,
                 _path: Optional[str] = None):
        super().__init__()
        err = c_void_p()
        with _Config(config, _path) as cfg:
            if classifier is None:
                _check(lib.mcpc_router_new(cfg.handle, None, byref(self._handle), byref(err)), err)
            else:
                with _Use(classifier) as c:
                    _check(lib.mcpc_router_new(cfg.handle, c, byref(self._handle), byref(err)),
                           err)

    @classmethod
    def from_file(cls, path: str, classifier: Optional[Classifier] = None) -> "Router":
        return cls(None, classifier, _path=path)

    def evaluate_json(self, request: str, explain: bool = False,
                      api: str = "chat_completions") -> str:
        """The evaluation document (see mcpc_route_evaluate_json) for a request body of `api`:
        "chat_completions", "messages" (Anthropic) or "responses" (OpenAI Responses)."""
        data = request.encode("utf-8", "surrogatepass")
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_route_evaluate_api_json(h, api.encode(), data, len(data),
                                                    1 if explain else 0, byref(out), byref(err)),
                   err)
        return _take_string(out)

    def evaluate(self, request: dict, explain: bool = False,
                 api: str = "chat_completions") -> dict:
        """evaluate_json for a request dict: {"action", "model", "decision", "body", "headers",
        "signals", "decisions", ...}."""
        return json.loads(self.evaluate_json(json.dumps(request), explain, api))


def entropy(probabilities: Sequence[float]) -> float:
    """Shannon entropy in bits."""
    arr = (c_double * max(len(probabilities), 1))(*probabilities)
    return lib.mcpc_entropy(arr, len(probabilities))


def decide(probabilities: Sequence[float], names: Sequence[str],
           flags: Optional[Dict[str, bool]] = None, threshold: float = 0.6) -> Decision:
    """The entropy-based reasoning decision on a caller's distribution; `flags` maps category
    names to whether they want reasoning (absent: unknown)."""
    if len(probabilities) != len(names):
        raise InvalidArgumentError(-1, "MCPC_ERR_INVALID_ARGUMENT",
                                   f"{len(probabilities)} probabilities but {len(names)} names")
    n = len(names)
    flags = flags or {}
    p = (c_double * max(n, 1))(*probabilities)
    cnames = (c_char_p * max(n, 1))(*[x.encode() for x in names])
    cflags = (c_int * max(n, 1))(*[(1 if flags[x] else 0) if x in flags else -1 for x in names])
    out, err = c_void_p(), c_void_p()
    _check(lib.mcpc_reasoning_decide(p, cnames, cflags, n, threshold, byref(out), byref(err)), err)
    try:
        return _decision(ctypes.cast(out, POINTER(_native.mcpc_decision)).contents)
    finally:
        lib.mcpc_decision_free(out)


ToolFunction = Callable[[dict], object]


class Server(_Handle):
    """An MCP server: classify_text, list_categories, prompts and the categories resource, plus
    tools written in Python (add_tool). Serves over HTTP, stdio, or in-process (call)."""

    _free = staticmethod(lib.mcpc_server_free)

    def __init__(self, config: Optional[str] = None, classifier: Optional[Classifier] = None):
        super().__init__()
        self._tools = {}  # name -> ctypes callbacks, kept alive while registered
        self._classifier = classifier  # its Python callbacks must outlive the server
        err = c_void_p()
        with _Config(config) as cfg:
            if classifier is not None:
                with _Use(classifier) as ch:
                    _check(lib.mcpc_server_new(cfg.handle, ch, byref(self._handle), byref(err)),
                           err)
            else:
                _check(lib.mcpc_server_new(cfg.handle, None, byref(self._handle), byref(err)),
                       err)

    def add_tool(self, name: str, function: ToolFunction, schema: Optional[dict] = None,
                 description: Optional[str] = None) -> None:
        """Registers `function(arguments: dict)`. It returns a str (one text block), or a dict
        (structured content); raising makes an isError result with the message. Runs on the
        server's worker threads."""

        def trampoline(_ud, args, args_len, reply):
            try:
                result = function(json.loads(ctypes.string_at(args, args_len)))
                if isinstance(result, str):
                    data = result.encode()
                    lib.mcpc_tool_reply_text(reply, data, len(data), False, None)
                else:
                    data = json.dumps(result).encode()
                    if lib.mcpc_tool_reply_structured(reply, data, len(data), None) != 0:
                        raise TypeError("a tool must return a str or a dict")
            except BaseException as e:  # nothing may propagate into C
                data = str(e).encode() or type(e).__name__.encode()
                lib.mcpc_tool_reply_text(reply, data, len(data), True, None)

        callback = _native.TOOL_CALLBACK(trampoline)
        err = c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_server_add_tool(
                h, name.encode(), description.encode() if description else None,
                json.dumps(schema).encode() if schema is not None else None, callback, None, None,
                byref(err)), err)
            # A replaced tool's callback stays referenced: calls of it may still be in flight.
            self._tools.setdefault(name, []).append(callback)

    def tool(self, name: Optional[str] = None, schema: Optional[dict] = None,
             description: Optional[str] = None):
        """Decorator form of add_tool."""

        def register(function):
            self.add_tool(name or function.__name__, function, schema,
                          description or (function.__doc__ or "").strip() or None)
            return function

        return register

    def remove_tool(self, name: str) -> None:
        err = c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_server_remove_tool(h, name.encode(), byref(err)), err)

    def reload(self, config: Optional[str] = None) -> int:
        """Swaps in the classifier of `config` (YAML/JSON text; None: the embedded default)
        without a restart: calls in flight finish on the old one, sessions are told what changed.
        Returns the new generation. Raises ConfigError and keeps the current classifier when the
        configuration is refused."""
        generation = ctypes.c_uint64(0)
        err = c_void_p()
        with _Config(config) as cfg, _Use(self) as h:
            _check(lib.mcpc_server_reload(h, cfg.handle, byref(generation), byref(err)), err)
        return generation.value

    def call(self, request) -> Optional[dict]:
        """Serves one JSON-RPC message (dict or str) in-process; returns the response, or None
        for a notification."""
        data = (request if isinstance(request, str) else json.dumps(request)).encode()
        out, err = c_void_p(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_server_call(h, data, len(data), byref(out), byref(err)), err)
        text = _take_string(out)
        return json.loads(text) if text is not None else None

    def start_http(self, host: Optional[str] = None, port: int = -1) -> int:
        """Starts Streamable HTTP; None/-1 take the config's address, port 0 a free one.
        Returns the bound port."""
        bound, err = c_int(), c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_server_start_http(h, host.encode() if host else None, port,
                                              byref(bound), byref(err)), err)
        return bound.value

    @property
    def port(self) -> int:
        with _Use(self) as h:
            return lib.mcpc_server_http_port(h)

    def start_stdio(self, in_fd: int = 0, out_fd: int = 1) -> None:
        """Serves one client on the descriptors in the background (they stay yours)."""
        err = c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_server_start_stdio(h, in_fd, out_fd, byref(err)), err)

    def wait_stdio(self) -> None:
        """Blocks until the stdio client is gone or stop() was called."""
        err = c_void_p()
        with _Use(self) as h:
            _check(lib.mcpc_server_wait_stdio(h, byref(err)), err)

    def stop(self) -> None:
        """Stops every transport, answering what is in flight. Idempotent."""
        with self._lock:
            handle = self._handle
        if handle.value:
            lib.mcpc_server_stop(handle)

    def close(self) -> None:
        self.stop()  # a blocked wait_stdio returns, so close can proceed
        super().close()
