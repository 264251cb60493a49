"""CDK entry point: ``cdk synth`` (via cdk.json) or ``python app.py``.

Settings come from CDK context (see :mod:`infra.settings`); the AWS Solutions
cdk-nag pack runs as a validation plugin, so any unacknowledged finding stops
synthesis.
"""

from __future__ import annotations

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks

from infra.settings import StackSettings
from infra.stack import VideoIndexStack


def build(app: App) -> VideoIndexStack:
    """Add the stack (with settings from ``app``'s context) and the cdk-nag checks to ``app``."""
    settings = StackSettings.from_context(app)
    stack = VideoIndexStack(
        app,
        settings.stack_name,
        settings=settings,
        description="video-index: serverless index of camera video in S3",
    )
    Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
    return stack


def main() -> None:
    app = App()
    build(app)
    app.synth()


if __name__ == "__main__":
    main()
