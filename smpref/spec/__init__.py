"""The spec as data: requirement IDs and their texts, read from the packaged spec pages."""
