"""The aggregation by stream: bucket figures, hour coverage and device totals kept from the
segment items' change records (docs/read-model.md#aggregation-by-stream)."""
