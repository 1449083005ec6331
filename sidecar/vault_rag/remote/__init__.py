"""Other devices (issue 41): a paired phone or laptop asks this sidecar over a second listener,
with every message sealed. `spake2` (the pairing PAKE), `keys` (HKDF labels), `envelope`
(sealed requests and response frames), `devices` (the paired devices file), `pairing` (codes
and the two-step exchange), `gateway` (the remote listener's ASGI app), `client` (the CLI as
another device). The protocol is written down in docs/remote.md."""
