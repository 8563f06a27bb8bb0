"""The reductions primitive family of plugax."""
