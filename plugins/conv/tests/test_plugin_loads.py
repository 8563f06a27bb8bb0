import plugax


def test_conv_family_is_loaded():
    assert "conv" in plugax.registry.loaded_names()
