"""Evidence holds: windows of a device's footage kept past retention (docs/holds.md)."""
