"""Library defaults: the memory budget."""

import pytest

from kernelscale import config_context, get_config, set_config
from kernelscale._validation import resolve_memory_budget


def test_context_restores_and_set_persists():
    before = get_config()["memory_budget"]
    with config_context(memory_budget=12345):
        assert get_config()["memory_budget"] == 12345
        assert resolve_memory_budget(None) == 12345
        assert resolve_memory_budget(999) == 999
    assert get_config()["memory_budget"] == before
    try:
        set_config(memory_budget=2**20)
        assert get_config()["memory_budget"] == 2**20
    finally:
        set_config(memory_budget=before)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-5, ValueError), ("lots", ValueError),
                                        ([1], TypeError)])
def test_bad_budgets(bad, error):
    with pytest.raises(error, match="memory_budget"):
        set_config(memory_budget=bad)
    with pytest.raises(error, match="memory_budget"):
        resolve_memory_budget(bad)
