"""SMP over TLS: credentials, TLS contexts, versions, the sans-IO handshake and block framing,
and the asyncio streams that carry them (:mod:`smpref.transport.streams`).

Everything here follows deployed SMP byte for byte (spec/transport.md, DEP-11, DEP-12), so that
smpref's client reaches deployed servers and deployed tooling can read smpref's traffic.
"""
