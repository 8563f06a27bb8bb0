import plugax


def test_random_family_is_loaded():
    assert "random" in plugax.registry.loaded_names()
