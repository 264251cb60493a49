"""S3 -> read model again: reconcile and rebuild on AWS (docs/operations.md).

One construct, :class:`ReconcileAndRebuild`, wires the capability's parts:

* :mod:`.function` — the ops Lambda (``video_index.handlers.reconcile.handler``), which
  does every step and dispatches on the ``action`` field of its input;
* :mod:`.state_machines` — the reconcile and rebuild state machines, fanning the
  per-partition work out with a Distributed Map over a partition list the Lambda
  writes to the reports bucket;
* :mod:`.triggers` — the daily schedule and the "inventory report landed" rule.

Their alarms are in :mod:`infra.monitoring`.
"""

from __future__ import annotations

from typing import Final

from constructs import Construct

from infra.ops.function import ops_function
from infra.ops.state_machines import StateMachines
from infra.ops.triggers import inventory_trigger, reconcile_schedule
from infra.settings import StackSettings
from infra.storage import SegmentStorage

#: Without this feature flag CDK renders the deprecated ``ResultWriter`` and ignores
#: ``result_writer_v2``. Set on this construct so the behaviour does not depend on cdk.json.
_RESULT_WRITER_V2_FLAG: Final = "@aws-cdk/aws-stepfunctions:useDistributedMapResultWriterV2"


class ReconcileAndRebuild(Construct):
    """The ops Lambda, the reconcile and rebuild state machines, and their triggers."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        storage: SegmentStorage,
    ) -> None:
        super().__init__(scope, construct_id)
        self.node.set_context(_RESULT_WRITER_V2_FLAG, True)
        lambda_function = ops_function(self, settings=settings, storage=storage)
        self.log_group = lambda_function.log_group
        self.role = lambda_function.role
        self.function = lambda_function.function
        machines = StateMachines(self, settings=settings, storage=storage, function=self.function)
        self.state_machine_roles = machines.roles
        self.reconcile_state_machine = machines.reconcile
        self.rebuild_state_machine = machines.rebuild
        self.schedule, self.schedule_role = reconcile_schedule(
            self, settings, self.reconcile_state_machine
        )
        self.inventory_rule, self.inventory_rule_role = inventory_trigger(
            self, storage, self.reconcile_state_machine
        )
