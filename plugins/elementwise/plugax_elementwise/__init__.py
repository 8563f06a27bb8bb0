"""The elementwise primitive family of plugax."""
