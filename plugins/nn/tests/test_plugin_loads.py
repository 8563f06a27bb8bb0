import plugax


def test_nn_family_is_loaded():
    assert "nn" in plugax.registry.loaded_names()
