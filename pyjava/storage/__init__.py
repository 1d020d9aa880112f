"""pyjava.storage: streaming_tar (a directory as start/offset/value rows)."""
