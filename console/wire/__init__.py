"""The typed channels between processes: one vocabulary per hop, each with a decoder that checks types."""
