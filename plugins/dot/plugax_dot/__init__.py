"""The dot primitive family of plugax."""
