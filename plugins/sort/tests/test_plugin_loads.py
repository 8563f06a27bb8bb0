import plugax


def test_sort_family_is_loaded():
    assert "sort" in plugax.registry.loaded_names()
