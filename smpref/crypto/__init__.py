"""Thin wrappers over PyNaCl and cryptography; no primitive is implemented here."""
