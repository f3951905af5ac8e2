"""A wasmtime host for the engram:memory component (wasmtime's Python embedding, with
wasmtime's own WASI preview 2 and wasi:http implementations)."""

import json
from pathlib import Path

from wasmtime import Engine, Store, WasiConfig
from wasmtime.component import Component, Linker, Record


class EngramError(Exception):
    def __init__(self, error):
        super().__init__(f"{error.code}: {error.message}")
        self.code = error.code
        self.violations = [(v.field, v.problem) for v in error.violations]


def _unwrap(value):
    """Lifts a WIT result. wasmtime-py returns the bare payload when the ok and err types can
    be told apart (ours: the error is the only record), and a tagged Variant otherwise."""
    tag = getattr(value, "tag", None)
    if tag == "err" or (isinstance(value, Record) and hasattr(value, "violations")):
        raise EngramError(value.payload if tag == "err" else value)
    if tag == "ok":
        return value.payload
    return value


def _source_file(f):
    record = Record()
    setattr(record, "path", f["path"])
    setattr(record, "content", f["content"])
    return record


# Compiled components by path, shared by every host in the test session: compiling the
# component takes wasmtime about 15 s, and each test module makes its own host (its own
# store, WASI set-up and instance).
_compiled: dict[str, tuple[Engine, Component]] = {}


def _compile(wasm_path: Path) -> tuple[Engine, Component]:
    key = str(wasm_path)
    if key not in _compiled:
        engine = Engine()
        _compiled[key] = (engine, Component.from_file(engine, key))
    return _compiled[key]


class ComponentHost:
    """Loads the component once; each `open` makes an engram resource in one store."""

    def __init__(self, wasm_path: Path, preopen: Path | None = None):
        self.engine, self.component = _compile(wasm_path)
        self.store = Store(self.engine)
        wasi = WasiConfig()
        if preopen is not None:
            # Read-only view of the model folder, mounted at /model inside the component.
            wasi.preopen_dir(str(preopen), "/model", fs_mutable=False)
        self.store.set_wasi(wasi)
        self.store.set_wasi_http()
        linker = Linker(self.engine)
        linker.add_wasip2()
        linker.add_wasi_http()
        self.instance = linker.instantiate(self.store, self.component)
        api = self.instance.get_export_index(self.store, "engram:memory/api@0.1.0")
        if api is None:
            raise RuntimeError("component does not export engram:memory/api@0.1.0")
        self.funcs = {}
        for name in ["chunk-file", "code-graph", "parse-transcript", "tool-definitions",
                     "prompt-definitions"]:
            index = self.instance.get_export_index(self.store, name, api)
            self.funcs[name] = self.instance.get_func(self.store, index)
        for name in ["[static]engram.open", "[static]engram.open-with-model",
                     "[method]engram.remember", "[method]engram.search",
                     "[method]engram.search-many",
                     "[method]engram.get", "[method]engram.forget", "[method]engram.embed-pending",
                     "[method]engram.write-status", "[method]engram.flush-writes",
                     "[method]engram.load-resident-vectors",
                     "[method]engram.load-resident-keywords",
                     "[method]engram.index-files", "[method]engram.analyze-impact",
                     "[method]engram.dependencies", "[method]engram.neighbours",
                     "[method]engram.mark-stale", "[method]engram.checkpoint-session",
                     "[method]engram.finalize-session", "[method]engram.recover-sessions",
                     "[method]engram.call-tool", "[method]engram.get-prompt",
                     "[method]engram.session-context",
                     "[method]engram.augment-tool-result", "[method]engram.step-injection",
                     "[method]engram.record-calibration", "[method]engram.step-limit",
                     "[method]engram.planner-context",
                     "[method]engram.get-any", "[method]engram.history", "[method]engram.restore",
                     "[method]engram.prune", "[method]engram.list-memories", "[method]engram.count-memories",
                     "[method]engram.update", "[method]engram.confirm", "[method]engram.flag-wrong",
                     "[method]engram.pin", "[method]engram.teach", "[method]engram.purge",
                     "[method]engram.import-instructions", "[method]engram.export-json",
                     "[method]engram.load-export", "[method]engram.export-markdown",
                     "[method]engram.health", "[method]engram.trust-level",
                     "[method]engram.set-trust-level", "[method]engram.session-review",
                     "[method]engram.recent-sessions", "[method]engram.module-map",
                     "[method]engram.preview-teach", "[method]engram.origins",
                     "[method]engram.reset",
                     "[method]engram.flush-uses",
                     "[static]session.start", "[method]session.observe",
                     "[method]session.observe-many", "[method]session.hot-files",
                     "[method]session.triggers",
                     "[static]model.load", "[static]model.load-dir", "[method]model.id", "[method]model.dims",
                     "[method]model.embed"]:
            index = self.instance.get_export_index(self.store, name, api)
            self.funcs[name] = self.instance.get_func(self.store, index)

    def call(self, name, *args):
        return _unwrap(self.funcs[name](self.store, *args))

    def open(self, url, auth_token=None, project_id=None, model=None, resident_vectors=None,
             reranker=None, resident_keywords=None, vector_index=None, extra=None):
        """Opens with the options JSON every host takes. `reranker`: `{"provider", "url",
        "model"?, "api-key"?}` or None; `extra`: more options laid over these."""
        given = {
            "url": url,
            "authToken": auth_token,
            "projectId": project_id,
            "residentVectors": resident_vectors,
            "residentKeywords": resident_keywords,
            "vectorIndex": vector_index,
            "reranker": None if reranker is None else _reranker(reranker),
        }
        options = {k: v for k, v in given.items() if v is not None}
        options.update(extra or {})
        options = json.dumps(options)
        if model is None:
            return ComponentEngram(self, self.call("[static]engram.open", options))
        handle = self.call("[static]engram.open-with-model", options, model.handle)
        return ComponentEngram(self, handle)

    def chunk_file(self, path, source, max_chars=None):
        return json.loads(self.funcs["chunk-file"](self.store, path, source, max_chars))

    def code_graph(self, files):
        return json.loads(self.funcs["code-graph"](self.store, [_source_file(f) for f in files]))

    def tool_definitions(self, format="anthropic"):
        return json.loads(self.call("tool-definitions", format))

    def prompt_definitions(self):
        return json.loads(self.funcs["prompt-definitions"](self.store))

    def parse_transcript(self, text):
        return json.loads(self.call("parse-transcript", text))

    def start_session(self, session_id, kind=None, roots=()):
        return ComponentSession(self, self.call("[static]session.start", session_id, kind, list(roots)))

    def load_model_dir(self, path: str):
        return ComponentModel(self, self.call("[static]model.load-dir", path))

    def load_model(self, onnx: bytes, tokenizer: bytes):
        return ComponentModel(self, self.call("[static]model.load", onnx, tokenizer))


class ComponentModel:
    """The in-sandbox embedding model inside the component."""

    def __init__(self, host, handle):
        self.host = host
        self.handle = handle

    @property
    def model_id(self):
        return self.host.call("[method]model.id", self.handle)

    @property
    def dims(self):
        return self.host.call("[method]model.dims", self.handle)

    def embed(self, texts):
        return self.host.call("[method]model.embed", self.handle, list(texts))


class ComponentSession:
    """An observed agent session inside the component."""

    def __init__(self, host, handle):
        self.host = host
        self.handle = handle

    def observe(self, event):
        self.host.call("[method]session.observe", self.handle, json.dumps(event))

    def observe_many(self, events):
        return self.host.call("[method]session.observe-many", self.handle, json.dumps(events))

    def triggers(self):
        return json.loads(self.host.funcs["[method]session.triggers"](self.host.store, self.handle))

    def hot_files(self, n):
        return json.loads(self.host.funcs["[method]session.hot-files"](self.host.store, self.handle, n))


def _reranker(spec):
    names = {"provider": "provider", "url": "url", "model": "model", "api-key": "apiKey"}
    return {names[k]: v for k, v in spec.items() if v is not None}


class ComponentEngram:
    """The same surface as the npm package's Engram, over the component."""

    def __init__(self, host, handle):
        self.host = host
        self.handle = handle

    def remember(self, memory):
        text = memory if isinstance(memory, str) else json.dumps(memory)
        return json.loads(self.host.call("[method]engram.remember", self.handle, text))

    def search(self, query):
        if isinstance(query, str):
            query = {"text": query}
        return json.loads(self.host.call("[method]engram.search", self.handle, json.dumps(query)))

    def search_many(self, queries):
        text = json.dumps(queries)
        return json.loads(self.host.call("[method]engram.search-many", self.handle, text))

    def get(self, memory_id):
        found = self.host.call("[method]engram.get", self.handle, memory_id)
        return None if found is None else json.loads(found)

    def forget(self, memory_id):
        return self.host.call("[method]engram.forget", self.handle, memory_id)

    def get_any(self, memory_id):
        found = self.host.call("[method]engram.get-any", self.handle, memory_id)
        return None if found is None else json.loads(found)

    def history(self, memory_id):
        return json.loads(self.host.call("[method]engram.history", self.handle, memory_id))

    def restore(self, memory_id):
        return json.loads(self.host.call("[method]engram.restore", self.handle, memory_id))

    def list(self, request=None):
        return json.loads(self.host.call("[method]engram.list-memories", self.handle, json.dumps(request or {})))

    def count(self, memory_filter=None):
        return self.host.call("[method]engram.count-memories", self.handle, json.dumps(memory_filter or {}))

    def update(self, memory_id, update, confirm=False):
        text = json.dumps(update)
        return json.loads(self.host.call("[method]engram.update", self.handle, memory_id, text, confirm))

    def confirm(self, memory_id):
        return json.loads(self.host.call("[method]engram.confirm", self.handle, memory_id))

    def flag_wrong(self, memory_id, reason=None):
        return json.loads(self.host.call("[method]engram.flag-wrong", self.handle, memory_id, reason))

    def pin(self, memory_id, pinned=True):
        return json.loads(self.host.call("[method]engram.pin", self.handle, memory_id, pinned))

    def teach(self, taught):
        return json.loads(self.host.call("[method]engram.teach", self.handle, json.dumps(taught)))

    def purge(self, memory_id):
        return self.host.call("[method]engram.purge", self.handle, memory_id)

    def import_instructions(self, request):
        text = json.dumps(request)
        return json.loads(self.host.call("[method]engram.import-instructions", self.handle, text))

    def export_json(self):
        return json.loads(self.host.call("[method]engram.export-json", self.handle))

    def load_export(self, exported):
        return json.loads(self.host.call("[method]engram.load-export", self.handle, json.dumps(exported)))

    def export_markdown(self):
        return self.host.call("[method]engram.export-markdown", self.handle)

    def health(self):
        return json.loads(self.host.call("[method]engram.health", self.handle))

    def reset(self, confirm):
        return self.host.call("[method]engram.reset", self.handle, confirm)

    def trust_level(self):
        return json.loads(self.host.call("[method]engram.trust-level", self.handle))

    def set_trust_level(self, level):
        return json.loads(self.host.call("[method]engram.set-trust-level", self.handle, level))

    def session_review(self, session_id=None):
        found = self.host.call("[method]engram.session-review", self.handle, session_id)
        return None if found is None else json.loads(found)

    def recent_sessions(self, limit=None):
        return json.loads(self.host.call("[method]engram.recent-sessions", self.handle, limit))

    def module_map(self, request):
        return json.loads(self.host.call("[method]engram.module-map", self.handle, json.dumps(request)))

    def preview_teach(self, taught):
        return json.loads(self.host.call("[method]engram.preview-teach", self.handle, json.dumps(taught)))

    def origins(self, memory_id):
        return json.loads(self.host.call("[method]engram.origins", self.handle, memory_id))

    def prune(self, request):
        return json.loads(self.host.call("[method]engram.prune", self.handle, json.dumps(request)))

    def flush_uses(self):
        return json.loads(self.host.call("[method]engram.flush-uses", self.handle))

    def write_status(self):
        return json.loads(self.host.call("[method]engram.write-status", self.handle))

    def flush_writes(self):
        return json.loads(self.host.call("[method]engram.flush-writes", self.handle))

    def index_files(self, files, complete=True, removed=()):
        options = Record()
        setattr(options, "complete", complete)
        setattr(options, "removed", list(removed))
        report = self.host.call("[method]engram.index-files", self.handle,
                                [_source_file(f) for f in files], options)
        return json.loads(report)

    def analyze_impact(self, target, max_depth=3):
        return json.loads(self.host.call("[method]engram.analyze-impact", self.handle, target, max_depth))

    def dependencies(self, file, max_depth=3):
        return json.loads(self.host.call("[method]engram.dependencies", self.handle, file, max_depth))

    def neighbours(self, files):
        return json.loads(self.host.call("[method]engram.neighbours", self.handle, list(files)))

    def mark_stale(self, paths):
        return self.host.call("[method]engram.mark-stale", self.handle, list(paths))

    def checkpoint_session(self, session):
        self.host.call("[method]engram.checkpoint-session", self.handle, session.handle)

    def finalize_session(self, session, outcome):
        return json.loads(self.host.call("[method]engram.finalize-session", self.handle, session.handle, outcome))

    def recover_sessions(self):
        return json.loads(self.host.call("[method]engram.recover-sessions", self.handle))

    def load_resident_keywords(self):
        return self.host.call("[method]engram.load-resident-keywords", self.handle)

    def load_resident_vectors(self):
        return self.host.call("[method]engram.load-resident-vectors", self.handle)

    def call_tool(self, name, arguments):
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return json.loads(self.host.call("[method]engram.call-tool", self.handle, name, text))

    def get_prompt(self, name, arguments=None):
        text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
        return json.loads(self.host.call("[method]engram.get-prompt", self.handle, name, text))

    def session_context(self, start=None):
        return json.loads(self.host.call("[method]engram.session-context", self.handle, json.dumps(start or {})))

    def augment_tool_result(self, context):
        found = self.host.call("[method]engram.augment-tool-result", self.handle, json.dumps(context))
        return None if found is None else json.loads(found)

    def step_injection(self, request):
        found = self.host.call("[method]engram.step-injection", self.handle, json.dumps(request))
        return None if found is None else json.loads(found)

    def record_calibration(self, sample):
        return json.loads(self.host.call("[method]engram.record-calibration", self.handle, json.dumps(sample)))

    def step_limit(self, request):
        return json.loads(self.host.call("[method]engram.step-limit", self.handle, json.dumps(request)))

    def planner_context(self, request):
        return json.loads(self.host.call("[method]engram.planner-context", self.handle, json.dumps(request)))

    def embed_pending(self, batch):
        return json.loads(self.host.call("[method]engram.embed-pending", self.handle, batch))
