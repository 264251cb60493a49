"""Run one Lambda handler as the Python runtime does (used by :mod:`worlds.lambda_env`).

``python -c "<this file>" HANDLER RESULT_FILE [--origins a,b] [--import-only]``, with the
unpacked asset as working directory and ``PYTHONPATH``. Standard library only: it runs
in the Lambda-like environment, where nothing of the project is installed. The handler's
own output (Powertools' JSON logs, EMF metrics) goes to stdout; the outcome goes to
``RESULT_FILE`` as JSON: the result, the import (init) time (wall and CPU), the
invocation time, and the file each module named by ``--origins`` was loaded from.
"""

import importlib
import json
import sys
import time
import uuid


class LambdaContext:
    """The attributes of the runtime's context object that handlers and Powertools read."""

    def __init__(self, function_name: str) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = (
            f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}"
        )
        self.memory_limit_in_mb = 512
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "2026/01/01/[$LATEST]0123456789abcdef"
        self._deadline = time.monotonic() + 900

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def main(argv: list[str]) -> None:
    handler_path, result_file = argv[0], argv[1]
    origins = argv[argv.index("--origins") + 1].split(",") if "--origins" in argv else []
    module_name, _, function_name = handler_path.rpartition(".")
    began, began_cpu = time.perf_counter(), time.process_time()
    module = importlib.import_module(module_name)
    import_seconds = time.perf_counter() - began
    import_cpu_seconds = time.process_time() - began_cpu
    handler = getattr(module, function_name)
    result, invoke_seconds = None, 0.0
    if "--import-only" not in argv:
        event = json.loads(sys.stdin.read())
        began = time.perf_counter()
        result = handler(event, LambdaContext(module_name.rpartition(".")[2]))
        invoke_seconds = time.perf_counter() - began
    loaded = {}
    for name in filter(None, origins):
        found = sys.modules.get(name)
        loaded[name] = getattr(found, "__file__", None) if found is not None else None
    with open(result_file, "w", encoding="utf-8") as out:
        json.dump(
            {
                "result": result,
                "import_seconds": import_seconds,
                "import_cpu_seconds": import_cpu_seconds,
                "invoke_seconds": invoke_seconds,
                "origins": loaded,
            },
            out,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
