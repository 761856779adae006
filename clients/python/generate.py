"""Regenerates the generated parts of the engram_client package.

    python generate.py          # write them
    python generate.py --check  # fail, showing the difference, if they are stale

What is generated, all from the repository's proto/engram/v1/*.proto:

* src/engram_client/v1/: the protobuf messages and gRPC stubs (grpcio-tools)
  with their type stubs (mypy-protobuf), imports moved under engram_client;
* src/engram_client/_async/services.py: one class per service with a typed
  method per RPC, documented with the RPC's proto comment, each retried as
  REPEAT below says;
* src/engram_client/_sync/: the blocking twin of src/engram_client/_async/,
  rewritten token by token (async def -> def, grpc.aio -> grpc, ...), so the
  two clients cannot drift apart.

Run it with the interpreter of the virtualenv that has the pinned tools of
requirements-dev.txt (check.sh does), so the output is the same on every
machine.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import descriptor_pb2

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE.parent.parent / "proto"
PACKAGE = Path("src/engram_client")

# Whether a failed call may be sent again after UNAVAILABLE, as the Rust
# client decides (client/src/*.rs): "safe" calls only read; "request_id"
# calls are creates that the server answers once per request_id, so they are
# safe only when the request carries one; "never" calls could act twice.
# "stream" is StreamSteps, whose steps may be sent again (a step with the
# content of a stored one is acknowledged as stored). Whatever this says, a
# call the server shed (RESOURCE_EXHAUSTED with a retry delay) is sent again:
# it was refused unread. "raw" is a server stream, which gets no generated
# method: WatchMemories is wrapped by hand (MemoryClient.watch, a MemoryWatch
# that resumes from its cursor). A new RPC must be added here before it
# generates.
REPEAT = {
    "MemoryService": {
        "CreateMemory": "request_id",
        "BatchCreateMemories": "request_id",
        "GetMemory": "safe",
        "ExplainMemory": "safe",
        "UpdateMemory": "never",
        "DeleteMemory": "never",
        "ListMemories": "safe",
        "ListMemoryRevisions": "safe",
        "SearchMemories": "safe",
        "BuildContext": "safe",
        "StartEpisode": "request_id",
        "AppendSteps": "never",
        "StreamSteps": "stream",
        "WatchMemories": "raw",
        "CompleteEpisode": "never",
        "GetEpisode": "safe",
        "ListEpisodes": "safe",
        "ListEntities": "safe",
        "GetEntity": "safe",
        "MergeEntities": "never",
    },
    "LearningService": {
        "RecordOutcome": "request_id",
        "ListOutcomes": "safe",
        "ListHeuristics": "safe",
        "ListAntiPatterns": "safe",
        "RecordMistake": "request_id",
        "ListMistakeCards": "safe",
        "ListTaskRules": "safe",
        "SetAgentScope": "never",
        "GetAgentScope": "safe",
        "Consolidate": "never",
        "Forget": "never",
        "GetStats": "safe",
    },
    "PolicyService": {
        "Classify": "safe",
        "Remember": "request_id",
    },
}

# What each kind of call says about its retries, at the end of its docstring.
RETRY_NOTE = {
    "safe": "Retried with backoff after UNAVAILABLE: it only reads.",
    "request_id": (
        "Retried with backoff after UNAVAILABLE only when the request carries a\n"
        "``request_id`` (the server answers a repeat with the first result)."
    ),
    "never": "Not retried after UNAVAILABLE: the server may have acted on it.",
}

# The blocking twin of the asyncio code: (pattern, replacement), in order.
UNASYNC = [
    (r"\bAsyncIterator\[([\w.]+)\] \| (Iterable|Iterator)\[\1\]", r"\2[\1]"),
    (r"\bAsyncIterator, ", ""),
    (r"\bAwaitable\[(\w+)\]", r"\1"),
    (r"\bAwaitable, ", ""),
    (r"\basync def\b", "def"),
    (r"\basync with\b", "with"),
    (r"\basync for\b", "for"),
    (r"\bawait ", ""),
    (r"\bgrpc\.aio\.", "grpc."),
    (r"\bengram_client\._async\b", "engram_client._sync"),
    (r"\bAsyncIterator\b", "Iterator"),
    (r"AsyncStub\b", "Stub"),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\b__aiter__\b", "__iter__"),
    (r"\b__anext__\b", "__next__"),
    (r"\baiter\(", "iter("),
    (r"\banext\(", "next("),
    (r"\bStopAsyncIteration\b", "StopIteration"),
    (r"\basyncio\.sleep\b", "time.sleep"),
    (r"^import asyncio$", "import time"),
    (r"\bThe asyncio client\b", "The blocking client"),
    (r"\basyncio\b", "blocking"),
]
UNASYNC_HEADER = (
    "# Generated from ../_async/{name} by generate.py: edit that file and run\n"
    "# generate.py again.\n"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare with the committed files instead of writing them; exit 1 on a difference",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="engram-generate-") as scratch:
        out = Path(scratch) / "out"
        generate(Path(scratch), out)
        targets = ["v1", "_sync", "_async/services.py"]
        if args.check:
            return check(out, targets)
        for target in targets:
            write(out / target, HERE / PACKAGE / target)
    print("generated src/engram_client/v1, _async/services.py and _sync")
    return 0


def generate(scratch: Path, out: Path) -> None:
    """Writes every generated file into `out` (laid out like src/engram_client)."""
    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in PROTO_ROOT.glob("engram/v1/*.proto"))
    descriptors = scratch / "descriptors.pb"
    bin_dir = Path(sys.executable).parent
    protoc = subprocess.run(
        [
            sys.executable, "-m", "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"--plugin=protoc-gen-mypy={bin_dir / 'protoc-gen-mypy'}",
            f"--plugin=protoc-gen-mypy_grpc={bin_dir / 'protoc-gen-mypy_grpc'}",
            f"--python_out={scratch}",
            f"--grpc_python_out={scratch}",
            f"--mypy_out={scratch}",
            f"--mypy_grpc_out={scratch}",
            f"--descriptor_set_out={descriptors}",
            "--include_source_info",
            *protos,
        ],
        check=False,
        cwd=PROTO_ROOT,
        capture_output=True,  # mypy-protobuf names every file it writes
        text=True,
    )
    if protoc.returncode != 0:
        raise SystemExit(f"generate.py: protoc failed:\n{protoc.stderr}")
    stubs = out / "v1"
    stubs.mkdir(parents=True)
    for source in sorted((scratch / "engram" / "v1").iterdir()):
        text = source.read_text()
        text = text.replace("from engram.v1 import ", "from engram_client.v1 import ")
        (stubs / source.name).write_text(text)
    (stubs / "__init__.py").write_text(
        '"""The engram.v1 protobuf messages and gRPC stubs, generated from\n'
        'proto/engram/v1 by generate.py (grpcio-tools and mypy-protobuf)."""\n'
    )

    file_set = descriptor_pb2.FileDescriptorSet.FromString(descriptors.read_bytes())
    (out / "_async").mkdir()
    (out / "_async" / "services.py").write_text(services_module(file_set))

    sync = out / "_sync"
    sync.mkdir()
    hand_written = {p.name for p in (HERE / PACKAGE / "_async").glob("*.py")} - {"services.py"}
    for name in sorted(hand_written | {"services.py"}):
        source = out / "_async" / name if name == "services.py" else HERE / PACKAGE / "_async" / name
        (sync / name).write_text(UNASYNC_HEADER.format(name=name) + unasync(source.read_text()))


def unasync(text: str) -> str:
    """The blocking twin of asyncio source `text`."""
    for pattern, replacement in UNASYNC:
        text = re.sub(pattern, replacement, text, flags=re.MULTILINE)
    return text


@dataclass
class Rpc:
    """One RPC of a service, as the wrapper classes need it."""

    name: str
    doc: str
    request: str
    response: str
    client_streaming: bool


def services_module(file_set: descriptor_pb2.FileDescriptorSet) -> str:
    """The source of _async/services.py: a class per service of `file_set`."""
    modules = {f.name: Path(f.name).stem + "_pb2" for f in file_set.file}
    types = {}  # ".engram.v1.Memory" -> "memory_pb2.Memory"
    for f in file_set.file:
        for message in f.message_type:
            types[f".{f.package}.{message.name}"] = f"{modules[f.name]}.{message.name}"
    classes = []
    imports = set()
    for f in file_set.file:
        if not f.name.startswith("engram/"):
            continue
        comments = {tuple(loc.path): loc.leading_comments for loc in f.source_code_info.location}
        for s, service in enumerate(f.service):
            repeat = REPEAT.get(service.name, {})
            rpcs = []
            raw = set()
            for m, method in enumerate(service.method):
                if method.name not in repeat:
                    raise SystemExit(f"generate.py: say in REPEAT whether {service.name}.{method.name} may be repeated")
                if method.server_streaming != (repeat[method.name] == "raw"):
                    raise SystemExit(
                        f"generate.py: {service.name}.{method.name}: server streams (and only they) are \"raw\""
                    )
                if method.server_streaming:
                    raw.add(method.name)
                    continue
                rpcs.append(
                    Rpc(
                        name=method.name,
                        doc=clean_comment(comments.get((6, s, 2, m), "")),
                        request=types[method.input_type],
                        response=types[method.output_type],
                        client_streaming=method.client_streaming,
                    )
                )
            unknown = set(repeat) - {r.name for r in rpcs} - raw
            if unknown:
                raise SystemExit(f"generate.py: REPEAT names RPCs {service.name} does not have: {sorted(unknown)}")
            stub_module = modules[f.name] + "_grpc"
            imports.add(stub_module)
            imports.update(r.request.split(".")[0] for r in rpcs)
            imports.update(r.response.split(".")[0] for r in rpcs)
            classes.append(service_class(service.name, clean_comment(comments.get((6, s), "")), stub_module, rpcs, repeat))
    header = textwrap.dedent(
        '''\
        # Generated by generate.py from proto/engram/v1: edit the protos or the
        # generator, not this file.
        """The asyncio client's RPC methods, one class per service, each method
        documented with its RPC's comment in the .proto file."""

        from __future__ import annotations

        from collections.abc import AsyncIterator, Callable, Iterable

        import grpc

        from engram_client._async.connection import Connection
        '''
    )
    lines = [header + "".join(f"from engram_client.v1 import {m}\n" for m in sorted(imports))]
    return "\n\n".join(lines + classes)


def clean_comment(comment: str) -> str:
    """A proto comment as docstring text: dedented, trimmed, no triple quotes."""
    text = textwrap.dedent(comment).strip()
    return text.replace('"""', "'''").replace("\\", "\\\\")


def docstring(text: str, indent: str) -> str:
    """`text` as a docstring at `indent`."""
    body = textwrap.indent(text, indent).lstrip()
    body = "\n".join(line.rstrip() for line in body.splitlines())
    closing = f"\n{indent}" if "\n" in body else ""
    return f'{indent}"""{body}{closing}"""\n'


def snake(name: str) -> str:
    """CreateMemory -> create_memory."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def service_class(name: str, doc: str, stub_module: str, rpcs: list[Rpc], repeat: dict[str, str]) -> str:
    """One service's class: __init__ and a method per RPC."""
    stub = f"{stub_module}.{name}AsyncStub"
    out = [f"class {name}:\n"]
    calls = (
        f"The calls of ``engram.v1.{name}``: each method takes the request message\n"
        "and returns the response message; a failed call raises EngramError."
    )
    out.append(docstring(f"{doc}\n\n{calls}", "    "))
    out.append(
        textwrap.indent(
            textwrap.dedent(
                f'''
                def __init__(self, connection: Connection) -> None:
                    """The calls of this service over `connection`."""
                    self._connection = connection
                    self._stub: {stub} = {stub_module}.{name}Stub(connection.channel)
                '''
            ),
            "    ",
        )
    )
    for rpc in rpcs:
        method = snake(rpc.name)
        kind = repeat[rpc.name]
        if rpc.client_streaming != (kind == "stream") and not (rpc.client_streaming and kind == "never"):
            raise SystemExit(f"generate.py: {name}.{rpc.name}: only a client stream may be (and need not be) \"stream\"")
        if rpc.client_streaming:
            out.append(streaming_methods(rpc, method, repeatable=kind == "stream"))
            continue
        doc = f"{rpc.doc}\n\n{RETRY_NOTE[kind]}"
        repeats = {"safe": "True", "never": "False", "request_id": "bool(request.request_id)"}[kind]
        out.append(
            f"\n    async def {method}(self, request: {rpc.request}) -> {rpc.response}:\n"
            + docstring(doc, "        ")
            + f'        return await self._connection.unary("{rpc.name}", self._stub.{rpc.name}, request, repeat={repeats})\n'
        )
    return "".join(out)


def streaming_methods(rpc: Rpc, method: str, *, repeatable: bool) -> str:
    """The methods of a client-streaming RPC: one stream, sent once, and
    when the stream is `repeatable`, a stream made anew for each try."""
    once = (
        f"{rpc.doc}\n\nSends `messages` as one stream. Not retried: a stream cannot be replayed;\n"
        f"use ``{method}_from`` for one that is."
    )
    repeated = (
        f"Like ``{method}``, with the stream made by `make` for each try: after\n"
        "UNAVAILABLE or a shed call the client waits (the server's delay, or the\n"
        "retry policy's backoff) and sends a fresh stream, as many times as the\n"
        "policy allows. Safe because a step sent again with the content of a\n"
        "stored one is acknowledged as stored (``already_stored``)."
    )
    messages = f"AsyncIterator[{rpc.request}] | Iterable[{rpc.request}]"
    sent_once = (
        f"\n    async def {method}(self, messages: {messages}) -> {rpc.response}:\n"
        + docstring(once if repeatable else rpc.doc + "\n\nSends `messages` as one stream. Not retried.", "        ")
        + f"        return await self._connection.stream(self._stub.{rpc.name}, messages)\n"
    )
    if not repeatable:
        return sent_once
    return (
        sent_once
        + f"\n    async def {method}_from(self, make: Callable[[], {messages}]) -> {rpc.response}:\n"
        + docstring(repeated, "        ")
        + f'        return await self._connection.repeatable_stream("{rpc.name}", self._stub.{rpc.name}, make)\n'
    )


def check(out: Path, targets: list[str]) -> int:
    """Compares the files generated into `out` with the committed ones."""
    stale = []
    for target in targets:
        fresh, committed = out / target, HERE / PACKAGE / target
        names = sorted({p.relative_to(fresh) for p in files(fresh)} | {p.relative_to(committed) for p in files(committed)}) if fresh.is_dir() else [Path()]
        for name in names:
            a, b = committed / name, fresh / name
            old = a.read_text().splitlines(keepends=True) if a.is_file() else []
            new = b.read_text().splitlines(keepends=True) if b.is_file() else []
            if old != new:
                label = str(PACKAGE / target / name)
                stale.append(label)
                sys.stdout.writelines(difflib.unified_diff(old, new, label + " (committed)", label + " (generated)", n=2))
    if stale:
        print(f"\ngenerate.py --check: {len(stale)} generated file(s) differ from the protos and _async/; run `python generate.py` and commit:")
        for label in stale:
            print(f"  {label}")
        return 1
    print("generated code is up to date")
    return 0


def files(root: Path) -> list[Path]:
    """Every file below `root` (none if it does not exist), caches left out."""
    if root.is_file():
        return [root]
    return [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts] if root.exists() else []


def write(source: Path, target: Path) -> None:
    """Replaces `target` (a file or a folder) with `source`."""
    if target.is_dir():
        shutil.rmtree(target)
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copyfile(source, target)


if __name__ == "__main__":
    sys.exit(main())
