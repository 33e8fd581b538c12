"""Text forms users paste and read: SMP addresses and queue URIs, seed 004 short links, the
Lark grammars behind them, and the base64url and host rules they share."""
