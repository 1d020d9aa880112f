"""Spark parity: typical Byzer snippets, the rows they read, and Apache Spark's own answers (goldens)."""
