"""The client checker: ``smpref client-check`` serves a client under test correctly, judges
everything it sends against the spec (spec/clients.md), puts it in numbered situations a real
server produces rarely, and reports each check and each case with its requirement IDs."""
