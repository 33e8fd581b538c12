"""What the client checker judges: every check and every server-side case, each with the
requirement IDs of spec/clients.md it stands for. The docs' list of checks and cases is
rendered from here (``smpref docs client-checks``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    """One thing every client is judged on, wherever it does it. A ``strict`` check's failure
    is a fault (``fail``); a check that is not strict is advice the spec gives with SHOULD, and
    its failure is ``non-strict``."""

    id: str
    title: str
    requirements: tuple[str, ...]
    strict: bool = True


@dataclass(frozen=True)
class Case:
    """A situation the server puts the client in (``smpref client-check --case N``): when
    it starts, and what the client must do then."""

    number: int
    name: str
    title: str
    when: str
    expect: str
    requirements: tuple[str, ...]


CHECKS: tuple[Check, ...] = (
    Check("tls.alpn", "offers ALPN smp/1 or smpref-seed/1", ("CLNT-1",), strict=False),
    Check("tls.sni", "sends no SNI", ("CLNT-2",)),
    Check("tls.handshake", "completes a TLS handshake the server can serve", ("CLNT-29",)),
    Check("hello.sent", "answers the server hello with a client hello", ("CLNT-4",)),
    Check("hello.layout", "the client hello parses in its version's layout", ("CLNT-4",)),
    Check("hello.key-hash", "the client hello names this server's key hash", ("CLNT-5",)),
    Check("hello.version", "the client hello picks a version the server offered", ("CLNT-3",)),
    Check("hello.session-key", "the client hello carries an X25519 session key (7+)",
          ("CLNT-6",), strict=False),
    Check("block.layout", "every block decrypts and holds a well-formed batch", ("CLNT-7",)),
    Check("block.padding", "unencrypted blocks are padded with '#'", ("CLNT-28",),
          strict=False),
    Check("tx.layout", "every transmission has its version's layout, naming its own session "
          "below 7", ("CLNT-8",)),
    Check("tx.command", "every command is encoded as its version defines it", ("CLNT-9",)),
    Check("tx.credentials", "authorization and entity ID as the command's rule requires",
          ("CLNT-10",)),
    Check("tx.authorization", "every authorization verifies with the right key over the "
          "right bytes", ("CLNT-11",)),
    Check("tx.corr-id", "every correlation ID is 24 fresh bytes, never reused in a session",
          ("CLNT-12",)),
    Check("tx.entity", "every command names an existing entity in its command's role",
          ("CLNT-13",)),
    Check("tx.size", "every SEND body fits the version's limit", ("CLNT-9",)),
    Check("conv.ack", "every ACK names the message in flight on that queue", ("CLNT-14",)),
    Check("conv.one-at-a-time", "no second command for a queue while one is pending",
          ("CLNT-15",), strict=False),
    Check("conv.needless-sub", "no SUB of a queue the connection is subscribed to",
          ("CLNT-16",), strict=False),
    Check("conv.unacknowledged", "every message received is acknowledged before the "
          "connection ends", ("CLNT-17",), strict=False),
    Check("conv.unused-queue", "every queue created is used in the session", ("CLNT-18",),
          strict=False),
)

CASES: tuple[Case, ...] = (
    Case(1, "second-message", "a message arrives while another is unacknowledged",
         "a message was delivered on a subscription and is not acknowledged yet",
         "ACK the first message, take what comes as the ACK's answer and ACK each message "
         "in turn, the new one too", ("CLNT-19", "MSG-2", "MSG-4")),
    Case(2, "end", "END: another client took the subscription",
         "the client is subscribed to a queue",
         "treat the subscription as ended: no ACK on that queue before subscribing again "
         "(SUB again, GET, or leaving the queue are all right)", ("CLNT-20", "CMD-33")),
    Case(3, "deleted", "DELD: the queue is deleted on the server's side",
         "the client is subscribed to a queue (the last case: it destroys the queue)",
         "send nothing more to that queue as its recipient (below version 10 and in the "
         "seed design, where deletion comes as END, after the ERR AUTH of one try)",
         ("CLNT-21", "DEP-4", "MSG-8")),
    Case(4, "quota", "the queue fills up and the quota marker arrives",
         "the client is subscribed to a queue with nothing in flight",
         "acknowledge every message, the quota marker too", ("CLNT-22", "MSG-6")),
    Case(5, "notification", "a message with the notification flag",
         "the client is subscribed to a queue with nothing in flight",
         "acknowledge it like any other message", ("CLNT-23", "MSG-7")),
    Case(6, "batch", "an answer and a message in one block",
         "the client sends a command while subscribed to a queue with nothing in flight",
         "read both: take the answer and acknowledge the message", ("CLNT-24", "TRANS-3")),
    Case(7, "error", "ERR INTERNAL for a SEND that would have succeeded",
         "the client sends a SEND",
         "go on: the connection stays in use (sending it again is the client's choice; "
         "sending it on another connection after closing this one is a fault)",
         ("CLNT-25",)),
    Case(8, "slow", "a slow answer",
         "the client sends a command",
         "wait for the answer: neither close the connection nor send the correlation ID "
         "again", ("CLNT-26",)),
    Case(9, "reconnect", "the server closes the connection",
         "the client is subscribed to a queue",
         "connect again and subscribe again to every queue it was subscribed to",
         ("CLNT-27", "MSG-2")),
)

CHECK_BY_ID = {check.id: check for check in CHECKS}
CASE_BY_NUMBER = {case.number: case for case in CASES}
#: the order cases are started in when none is chosen: the destructive ones last
DEFAULT_ORDER = (1, 5, 6, 7, 8, 2, 4, 9, 3)
#: the commands whose use the report lists, so a client's authors see what is untested
COMMANDS = ("NEW", "KEY", "SKEY", "SUB", "GET", "ACK", "SEND", "OFF", "DEL", "NKEY", "NSUB",
            "NDEL", "LSET", "LKEY", "LGET", "LDEL", "PING", "PRXY", "PFWD")


def catalogue_page() -> str:
    """The docs' page of every check and case (``smpref docs client-checks``)."""
    lines = ["# Client checks and cases", "",
             "Generated by `smpref docs client-checks` from `smpref/clientcheck/catalogue.py`;",
             "the requirements are on [the clients page](../spec/clients.md). A check whose",
             "kind is *advice* stands for a SHOULD: its failure is `non-strict`, not `fail`.",
             "", "## Checks", "", "| check | kind | requirements | what the client must do |",
             "|---|---|---|---|"]
    for check in CHECKS:
        kind = "fault" if check.strict else "advice"
        lines.append(f"| `{check.id}` | {kind} | {', '.join(check.requirements)} | "
                     f"{check.title} |")
    lines += ["", "## Server-side cases", "",
              "Run one with `smpref client-check --case N`; without `--case` every case runs, "
              "one at a time, in the order " + ", ".join(str(n) for n in DEFAULT_ORDER) + ".",
              "", "| case | name | requirements | when it starts | what the client must do |",
              "|---|---|---|---|---|"]
    for case in CASES:
        lines.append(f"| {case.number} | `{case.name}`: {case.title} | "
                     f"{', '.join(case.requirements)} | {case.when} | {case.expect} |")
    return "\n".join(lines) + "\n"
