"""ctypes declarations of the mcpclass C ABI (capi/include/mcpclass/mcpclass.h) and the loader.

The package does not bundle the native library; it loads the libmcpclass.so of an installed
prefix, found in order: the MCPCLASS_LIBRARY environment variable (a path), a libmcpclass.so next
to this package, the system loader (ldconfig's cache, LD_LIBRARY_PATH), then the libdir that
`pkg-config --variable=libdir mcpclass` names (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig).
"""

import ctypes
import ctypes.util
import os
import shutil
import subprocess
from ctypes import (CFUNCTYPE, POINTER, Structure, c_bool, c_char_p, c_double, c_int, c_size_t,
                    c_uint, c_void_p)

ABI_VERSION = 1
NTS = ctypes.c_size_t(-1).value


class mcpc_category_probability(Structure):
    _fields_ = [("name", c_char_p), ("probability", c_double)]


class mcpc_decision(Structure):
    _fields_ = [("use_reasoning", c_bool), ("confidence", c_double), ("reason", c_char_p),
                ("strategy", c_char_p), ("top_categories", POINTER(mcpc_category_probability)),
                ("num_top_categories", c_size_t)]


class mcpc_provenance(Structure):
    _fields_ = [("kind", c_char_p), ("model_id", c_char_p), ("tokenizer_id", c_char_p),
                ("taxonomy_id", c_char_p), ("generation", ctypes.c_uint64), ("cached", c_bool),
                ("fallback", c_bool)]


class mcpc_result(Structure):
    _fields_ = [("class_index", c_size_t), ("category", c_char_p), ("confidence", c_double),
                ("probabilities", POINTER(c_double)), ("num_probabilities", c_size_t),
                ("entropy", c_double), ("model", c_char_p), ("use_reasoning", c_bool),
                ("decision", mcpc_decision), ("provenance", mcpc_provenance),
                ("has_in_scope", c_bool), ("in_scope", c_double)]


class mcpc_batch(Structure):
    _fields_ = [("count", c_size_t), ("results", POINTER(mcpc_result))]


class mcpc_category(Structure):
    _fields_ = [("name", c_char_p), ("description", c_char_p), ("system_prompt", c_char_p),
                ("model", c_char_p), ("use_reasoning", c_int)]


class mcpc_categories(Structure):
    _fields_ = [("count", c_size_t), ("items", POINTER(mcpc_category))]


class mcpc_classify_options(Structure):
    _fields_ = [("flags", c_uint), ("timeout_ms", c_uint)]


CLASSIFY_CALLBACK = CFUNCTYPE(c_int, c_void_p, POINTER(ctypes.c_char), c_size_t, POINTER(c_double),
                              c_size_t, c_void_p, c_size_t)
TOOL_CALLBACK = CFUNCTYPE(None, c_void_p, POINTER(ctypes.c_char), c_size_t, c_void_p)

_err = POINTER(c_void_p)  # mcpc_error ** (handles are opaque: void *)
_out = POINTER(c_void_p)

_SIGNATURES = {
    "mcpc_version": (c_char_p, []),
    "mcpc_abi_version": (c_int, []),
    "mcpc_error_code": (c_int, [c_void_p]),
    "mcpc_error_message": (c_char_p, [c_void_p]),
    "mcpc_error_path": (c_char_p, [c_void_p]),
    "mcpc_error_free": (None, [c_void_p]),
    "mcpc_status_name": (c_char_p, [c_int]),
    "mcpc_string_free": (None, [c_void_p]),
    "mcpc_config_new": (c_int, [c_char_p, c_size_t, _out, _err]),
    "mcpc_config_new_from_file": (c_int, [c_char_p, _out, _err]),
    "mcpc_config_free": (None, [c_void_p]),
    "mcpc_result_free": (None, [c_void_p]),
    "mcpc_batch_free": (None, [c_void_p]),
    "mcpc_decision_free": (None, [c_void_p]),
    "mcpc_categories_free": (None, [c_void_p]),
    "mcpc_classifier_new": (c_int, [c_void_p, _out, _err]),
    # destroy callbacks are not used from Python (the binding owns its callbacks): c_void_p/NULL
    "mcpc_classifier_new_host": (c_int, [c_void_p, CLASSIFY_CALLBACK, c_void_p, c_void_p, _out,
                                         _err]),
    "mcpc_classifier_free": (None, [c_void_p]),
    "mcpc_classifier_category_count": (c_size_t, [c_void_p]),
    "mcpc_classify": (c_int, [c_void_p, c_char_p, c_size_t, _out, _err]),
    "mcpc_classify_json": (c_int, [c_void_p, c_char_p, c_size_t, c_uint, _out, _err]),
    "mcpc_classify_pair_json": (c_int, [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t,
                                        POINTER(mcpc_classify_options), _out, _err]),
    "mcpc_rerank_json": (c_int, [c_void_p, c_char_p, c_size_t, POINTER(mcpc_classify_options),
                                 _out, _err]),
    "mcpc_classify_batch": (c_int, [c_void_p, POINTER(c_char_p), POINTER(c_size_t), c_size_t,
                                    _out, _err]),
    "mcpc_classifier_categories": (c_int, [c_void_p, _out, _err]),
    "mcpc_classifier_categories_json": (c_int, [c_void_p, _out, _err]),
    "mcpc_classifier_tasks_json": (c_int, [c_void_p, _out, _err]),
    "mcpc_classifier_task": (c_int, [c_void_p, c_char_p, _out, _err]),
    "mcpc_entropy": (c_double, [POINTER(c_double), c_size_t]),
    "mcpc_normalized_entropy": (c_double, [POINTER(c_double), c_size_t]),
    "mcpc_reasoning_decide": (c_int, [POINTER(c_double), POINTER(c_char_p), POINTER(c_int),
                                      c_size_t, c_double, _out, _err]),
    "mcpc_token_classifier_new": (c_int, [c_void_p, _out, _err]),
    "mcpc_token_classifier_free": (None, [c_void_p]),
    "mcpc_detect_spans_json": (c_int, [c_void_p, c_char_p, c_size_t, c_char_p, _out, _err]),
    "mcpc_router_new": (c_int, [c_void_p, c_void_p, _out, _err]),
    "mcpc_router_free": (None, [c_void_p]),
    "mcpc_route_evaluate_json": (c_int, [c_void_p, c_char_p, c_size_t, c_int, _out, _err]),
    "mcpc_route_evaluate_api_json": (c_int, [c_void_p, c_char_p, c_char_p, c_size_t, c_int, _out,
                                             _err]),
    "mcpc_server_new": (c_int, [c_void_p, c_void_p, _out, _err]),
    "mcpc_server_free": (None, [c_void_p]),
    "mcpc_tool_reply_text": (c_int, [c_void_p, c_char_p, c_size_t, c_bool, _err]),
    "mcpc_tool_reply_structured": (c_int, [c_void_p, c_char_p, c_size_t, _err]),
    "mcpc_server_add_tool": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, TOOL_CALLBACK,
                                     c_void_p, c_void_p, _err]),
    "mcpc_server_remove_tool": (c_int, [c_void_p, c_char_p, _err]),
    "mcpc_server_reload": (c_int, [c_void_p, c_void_p, POINTER(ctypes.c_uint64), _err]),
    "mcpc_server_call": (c_int, [c_void_p, c_char_p, c_size_t, _out, _err]),
    "mcpc_server_start_stdio": (c_int, [c_void_p, c_int, c_int, _err]),
    "mcpc_server_wait_stdio": (c_int, [c_void_p, _err]),
    "mcpc_server_start_http": (c_int, [c_void_p, c_char_p, c_int, POINTER(c_int), _err]),
    "mcpc_server_http_port": (c_int, [c_void_p]),
    "mcpc_server_stop": (None, [c_void_p]),
}


def _pkg_config_libdir():
    if not shutil.which("pkg-config"):
        return None
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "mcpclass"], capture_output=True,
                             text=True, timeout=30, check=False)
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def _candidates():
    env = os.environ.get("MCPCLASS_LIBRARY")
    if env:
        yield env
        return
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libmcpclass.so")
    if os.path.exists(here):
        yield here
    yield ctypes.util.find_library("mcpclass") or "libmcpclass.so"
    libdir = _pkg_config_libdir()
    if libdir:
        yield os.path.join(libdir, "libmcpclass.so")


def load():
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)  # CDLL releases the GIL during every call
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    else:
        raise ImportError("mcpclass: cannot load libmcpclass.so: set MCPCLASS_LIBRARY to its path, "
                          "put its directory on the loader's path (ldconfig, LD_LIBRARY_PATH), or "
                          "PKG_CONFIG_PATH to the prefix's lib/pkgconfig (pkg-config mcpclass) - "
                          "tried " + "; ".join(errors))
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    if lib.mcpc_abi_version() != ABI_VERSION:
        raise ImportError(f"mcpclass: {path} has ABI {lib.mcpc_abi_version()}, "
                          f"this package needs {ABI_VERSION}")
    return lib


lib = load()
