"""The shape primitive family of plugax."""
