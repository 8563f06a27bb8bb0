import plugax


def test_linalg_family_is_loaded():
    assert "linalg" in plugax.registry.loaded_names()
