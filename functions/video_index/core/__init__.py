"""The pure model of the product (no AWS): keys, the read-model layout and projection,
stored shapes, ranges, table schema, settings, time units, the error model, and the
contract shared with ``infra/``."""
