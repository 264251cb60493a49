"""Share links (docs/shares.md): a read-only, expiring link to one window of one camera."""
