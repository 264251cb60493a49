"""A moto-backed "deployed" stack to run ``video-index … --stack NAME`` against by hand.

``python -m tests.support.deployed_demo [-- COMMAND…]`` starts a moto server (DynamoDB
included), deploys the stack of :mod:`tests.support.deployed_stack` there (the
synthesized state machines, 30 partitions of segments), plays every execution in a
background thread (one state every ``--step-seconds``), and runs COMMAND (default:
``video-index rebuild start --stack video-index-test --interval 1``) as a subprocess
with the shell's AWS variables pointed at the servers — as an operator's shell would
be. Used for the terminal recording of docs/operations.md's "Which path to use".
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading

import boto3
from moto.server import ThreadedMotoServer

from tests.support.deployed_stack import STACK, deploy
from tests.support.local_stack import CLI, ROOT
from video_index.core.table_schema import create_tables


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--step-seconds", type=float, default=0.5)
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        POWERTOOLS_TRACE_DISABLED="1",
        POWERTOOLS_LOG_LEVEL="ERROR",
    )
    from tests.infra.template import synthesize

    synth = synthesize()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    try:
        # The server holds every service, DynamoDB included.
        os.environ["AWS_ENDPOINT_URL"] = f"http://{host}:{port}"
        os.environ.pop("AWS_ENDPOINT_URL_DYNAMODB", None)
        dynamodb = boto3.client("dynamodb")
        table = "video-index-read-model"
        create_tables(dynamodb, table)
        world = deploy(synth, dynamodb, table)
        stop = threading.Event()

        def play() -> None:
            while not stop.wait(args.step_seconds):
                world.advance()

        player = threading.Thread(target=play, daemon=True)
        player.start()
        command = args.command or ["rebuild", "start", "--stack", STACK, "--interval", "1"]
        print(f"$ video-index {' '.join(command)}", flush=True)
        result = subprocess.run([*CLI, *command], cwd=ROOT, env=dict(os.environ))
        print(f"(exit code {result.returncode})", flush=True)
        stop.set()
        player.join()
        return result.returncode
    finally:
        moto.stop()


if __name__ == "__main__":
    sys.exit(main())
