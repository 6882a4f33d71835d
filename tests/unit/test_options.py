import pytest

from npuplan.api import make_options
from npuplan.errors import ConfigError
from npuplan.options import Optimise, TensorAllocator


def test_vela_names_map_to_options():
    options = make_options(optimise="size", arena_cache_size="262144", tensor_allocator="greedy", config="a.ini")
    assert options.optimise is Optimise.SIZE
    assert options.arena_cache_size_bytes == 262144
    assert options.tensor_allocator is TensorAllocator.GREEDY
    assert options.config_files == ("a.ini",)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"optimise": "Fastest"}, "--optimise"),
        ({"arena_cache_size": -1}, "must not be negative"),
        ({"arena_cache_size": "lots"}, "whole number"),
        ({"tensor_allocator": "Magic"}, "--tensor-allocator"),
        ({"cpu_tensor_alignment": 8}, "power of 2 of at least 16"),
        ({"cpu_tensor_alignment": 48}, "power of 2 of at least 16"),
        ({"colour": "blue"}, "unknown option"),
    ],
)
def test_bad_values_are_config_errors(kwargs, fragment):
    with pytest.raises(ConfigError, match=fragment):
        make_options(**kwargs)


def test_no_concat_in_place_plans_the_copies_as_vela_does() -> None:
    from pathlib import Path

    from npuplan.api import plan

    unet = Path(__file__).resolve().parents[1] / "data" / "unet_transpose_64.tflite"
    copies = [o for o in plan(unet, concat_in_place=False).lowered.npu_ops if o.tflite_type == "CONCATENATION"]
    assert copies and all(o.op_type == "AvgPool" for o in copies)
    default = plan(unet).lowered.npu_ops
    assert sum(o.tflite_type == "CONCATENATION" for o in default) < len(copies)
