"""The audit trail's reading side: ``GET /audit`` (docs/audit.md)."""
