"""pyjava.api: see pyjava.api.mlsql."""
