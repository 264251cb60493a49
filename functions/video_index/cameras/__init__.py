"""Camera identities (docs/cameras.md): provisioning in AWS IoT and what a camera holds."""
