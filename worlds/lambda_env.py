"""A Lambda-like environment on this machine, to run a function's asset as Lambda would.

What a deployed function has besides its asset is the ``python3.13`` runtime (the
interpreter and the AWS SDK) and the pinned Powertools layer. The environment here is
a virtualenv holding exactly that (``requirements/lambda-runtime.lock``: ``boto3`` and
``aws-lambda-powertools[all]`` at the layer's release with what PyPI offered when the
layer was built, every file checked against its hash; nothing else), made with the
runtime's Python (3.13: ``VIDEO_INDEX_LAMBDA_PYTHON``, ``python3.13`` on the ``PATH``, a
pyenv or distribution install). Without one it is an error that says how to get one
(:class:`LambdaPythonMissing`), never another interpreter: a function run on the wrong
Python is not run as deployed. It is made once per interpreter version and lock,
in ``.cache/lambda-venv/``, under a lock, so parallel test workers share it.

:func:`invoke` runs one handler in it the way the runtime does: a fresh process whose
working directory and first path entry are the unpacked asset, no other
``PYTHONPATH``, no bytecode written (``/var/task`` is read-only), ``PYTHONTZPATH``
pointing at an empty folder (no system zone data), ``TZ=:UTC`` and fake credentials;
the handler module is imported (timed, as Lambda's init phase) and called once with
the event and a Lambda-shaped context.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from infra.dependencies import (
    LAMBDA_PYTHON_VERSION,
    RUNTIME_REQUIREMENTS,
    PowertoolsLayer,
    powertools_layer,
)
from infra.locks import RUNTIME_LOCK

ROOT: Final = Path(__file__).resolve().parents[1]
CACHE: Final = ROOT / ".cache" / "lambda-venv"
RUNNER: Final = Path(__file__).with_name("lambda_runner.py")
ENV_LAMBDA_PYTHON: Final = "VIDEO_INDEX_LAMBDA_PYTHON"
#: Creating the environment downloads a few dozen wheels the first time.
CREATE_TIMEOUT_SECONDS: Final = 600
_VERSION_PROBE: Final = "import sys; print('%d.%d.%d' % sys.version_info[:3])"
_DISTRIBUTIONS: Final = (
    "import importlib.metadata as m, json; "
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
)


@dataclass(frozen=True)
class Interpreter:
    path: Path
    version: str  # e.g. "3.13.0"

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


@dataclass(frozen=True)
class LambdaEnvironment:
    """A virtualenv with the runtime's and the layer's packages (and nothing else, not even pip)."""

    folder: Path
    interpreter: Interpreter
    layer: PowertoolsLayer
    runtime: tuple[str, ...]

    @property
    def python(self) -> Path:
        return self.folder / "bin" / "python"

    def distributions(self) -> dict[str, str]:
        """Every distribution installed in it: normalized name -> version."""
        listed = subprocess.run(  # -I: isolated from the caller's PYTHONPATH
            [str(self.python), "-I", "-c", _DISTRIBUTIONS],
            capture_output=True,
            text=True,
            check=True,
        )
        return {_normalize(name): version for name, version in json.loads(listed.stdout).items()}


class LambdaPythonMissing(RuntimeError):
    """No interpreter of the Lambda runtime's version on this machine."""


def find_python(wanted: str = LAMBDA_PYTHON_VERSION) -> Interpreter:
    """The interpreter of the Lambda runtime's version; :class:`LambdaPythonMissing` (saying
    where it looked and how to get one) when the machine has none."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates: list[str] = []
    if os.environ.get(ENV_LAMBDA_PYTHON):
        candidates.append(os.environ[ENV_LAMBDA_PYTHON])
    candidates += [shutil.which(f"python{wanted}") or ""]
    candidates += sorted(str(p) for p in pyenv.glob(f"versions/{wanted}*/bin/python{wanted}"))
    candidates += [f"/usr/bin/python{wanted}", f"/usr/local/bin/python{wanted}"]
    for candidate in filter(None, candidates):
        interpreter = _probe(candidate)
        if interpreter is not None and interpreter.minor == wanted:
            return interpreter
    raise LambdaPythonMissing(
        f"no Python {wanted} (the Lambda runtime's version) on this machine: looked for "
        f"${ENV_LAMBDA_PYTHON}, python{wanted} on the PATH, {pyenv}/versions/{wanted}* and "
        f"/usr/bin, /usr/local/bin. Install one (`pyenv install {wanted}`, or the "
        f"distribution's python{wanted} package) or set {ENV_LAMBDA_PYTHON}=/path/to/python{wanted}"
    )


def _probe(candidate: str) -> Interpreter | None:
    try:
        probe = subprocess.run(
            [candidate, "-c", _VERSION_PROBE], capture_output=True, text=True, timeout=30
        )
    except OSError:
        return None
    if probe.returncode != 0:  # e.g. a pyenv shim of a version not selected
        return None
    return Interpreter(Path(candidate), probe.stdout.strip())


def lambda_environment(
    layer_version: int, interpreter: Interpreter | None = None
) -> LambdaEnvironment:
    """The environment for the Powertools layer ``layer_version`` (made once, then reused)."""
    interpreter = interpreter or find_python()
    layer = powertools_layer(layer_version)
    fingerprint = "\n".join((interpreter.version, layer.requirement, RUNTIME_LOCK.read_text()))
    key = hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
    folder = CACHE / f"py{interpreter.version}-{key}"
    environment = LambdaEnvironment(folder, interpreter, layer, RUNTIME_REQUIREMENTS)
    with _locked(CACHE / ".lock"):
        if not (folder / ".complete").is_file():
            _create(environment)
    return environment


def _create(environment: LambdaEnvironment) -> None:
    """A venv without pip, holding exactly ``requirements/lambda-runtime.lock`` (the layer's
    release with what PyPI offered when the layer was built, and the runtime's SDK)."""
    folder = environment.folder
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run(
        [str(environment.interpreter.path), "-m", "venv", "--without-pip", str(folder)], check=True
    )
    uv = Path(sys.executable).with_name("uv")
    command = [str(uv), "pip", "install", "--quiet", "--python", str(environment.python)]
    # (compiled, as the runtime's own packages are: the functions' processes never write
    # bytecode, and compiling botocore at every start would cost seconds a Lambda does not)
    command += ["--compile-bytecode", "--require-hashes", "-r", str(RUNTIME_LOCK)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=CREATE_TIMEOUT_SECONDS)
    if result.returncode != 0:
        raise RuntimeError(f"cannot make the Lambda-like environment:\n{result.stderr}")
    freeze = environment.distributions()
    (folder / "installed.json").write_text(json.dumps(freeze, indent=1, sort_keys=True))
    (folder / ".complete").write_text("")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _normalize(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


# --- running a handler ---------------------------------------------------------------------


@dataclass(frozen=True)
class Invocation:
    """What one run of a handler gave: its result, timings, where modules came from."""

    result: Any
    import_seconds: float
    #: CPU time of the import: what the import costs, whatever else the machine is doing.
    import_cpu_seconds: float
    invoke_seconds: float
    #: ``__file__`` of each top-level module loaded, for the modules asked about.
    origins: dict[str, str | None]
    output: str


class InvocationFailed(AssertionError):
    pass


def lambda_environ(asset: Path, scratch: Path, function_name: str) -> dict[str, str]:
    """The process environment of a function whose code is ``asset`` (see module docs)."""
    zones = scratch / "no-zoneinfo"
    zones.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "TZ": ":UTC",
        "PYTHONPATH": str(asset),
        "PYTHONTZPATH": str(zones),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LAMBDA_TASK_ROOT": str(asset),
        "AWS_EXECUTION_ENV": f"AWS_Lambda_python{LAMBDA_PYTHON_VERSION}",
        "AWS_LAMBDA_FUNCTION_NAME": function_name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        # Active tracing needs the X-Ray daemon Lambda runs beside the function.
        "POWERTOOLS_TRACE_DISABLED": "1",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }


def invoke(
    environment: LambdaEnvironment,
    asset: Path,
    handler: str,
    event: Any | None,
    *,
    environ: Mapping[str, str] = (),  # type: ignore[assignment]
    origins: Sequence[str] = (),
    timeout: float = 120,
) -> Invocation:
    """Run ``handler`` of ``asset`` once with ``event`` (``None``: import it only)."""
    with tempfile.TemporaryDirectory(prefix="lambda-") as scratch:
        result_file = Path(scratch) / "result.json"
        env = {**lambda_environ(asset, Path(scratch), handler.split(".")[-2]), **dict(environ)}
        command = [str(environment.python), "-c", RUNNER.read_text(), handler, str(result_file)]
        command += ["--origins", ",".join(origins)]
        if event is None:
            command.append("--import-only")
        process = subprocess.run(
            command,
            input="" if event is None else json.dumps(event),
            cwd=asset,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        output = process.stdout + process.stderr
        if process.returncode != 0 or not result_file.is_file():
            raise InvocationFailed(f"{handler} failed (exit {process.returncode}):\n{output}")
        report = json.loads(result_file.read_text())
    return Invocation(
        result=report["result"],
        import_seconds=report["import_seconds"],
        import_cpu_seconds=report["import_cpu_seconds"],
        invoke_seconds=report["invoke_seconds"],
        origins=report["origins"],
        output=output,
    )


# --- assets as Lambda gets them ------------------------------------------------------------


def zip_folder(folder: Path, archive: Path) -> Path:
    """``folder`` as the deployment package CDK uploads: a deflated zip of its files."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            out.write(path, path.relative_to(folder).as_posix())
    return archive


def unzip(archive: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=False)
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(folder)
    return folder


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
