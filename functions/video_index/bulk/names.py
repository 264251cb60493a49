"""Names the bulk Lambda's steps, its state machines and the CLI share (imported by infra too;
its handler and service name are in :mod:`video_index.core.contract`)."""

from __future__ import annotations

from typing import Final

ACTION_RESTORE_PLAN: Final = "bulk-restore-plan"
ACTION_RESTORE_UNITS: Final = "bulk-restore-units"
ACTION_RESTORE_REPORT: Final = "bulk-restore-report"
ACTION_DELETE_PLAN: Final = "bulk-delete-plan"
ACTION_DELETE_UNITS: Final = "bulk-delete-units"
ACTION_DELETE_REPORT: Final = "bulk-delete-report"

#: Run objects (unit lists, reports) in the reports bucket; map results under ``results/``.
RESTORE_REPORTS_PREFIX: Final = "bulk-restore/"
DELETE_REPORTS_PREFIX: Final = "bulk-delete/"
RESULTS_FOLDER: Final = "results/"

#: A deletion unit that ran out of time raises this; the state machine retries it.
JOB_PAUSED_ERROR: Final = "JobPaused"
#: Another runner holds the job's lease (a unit killed mid-way): retried after a wait.
JOB_BUSY_ERROR: Final = "JobBusy"

#: The bulk Lambda's environment: the replica to restore from, when fixed by the stack.
ENV_RESTORE_WORKERS: Final = "VIDEO_INDEX_RESTORE_WORKERS"

#: Stack outputs the CLI finds the state machines by (``video-index restore --stack``).
OUTPUT_RESTORE_STATE_MACHINE: Final = "RestoreStateMachineArn"
OUTPUT_BULK_DELETE_STATE_MACHINE: Final = "BulkDeleteStateMachineArn"
