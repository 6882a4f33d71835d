"""Sweep points: option lists, sizes with suffixes, the resume key, values checked up front."""

from __future__ import annotations

import pytest

from npuplan.errors import ConfigError, ModelError
from npuplan.sweep.points import parse_size, split_values, sweep_points


@pytest.mark.parametrize("text, size", [("128k", 131072), ("1M", 1048576), ("4096", 4096), ("2K", 2048),
                                         ("default", None)])
def test_sizes_take_k_and_m_suffixes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["12x", "-5", "1.5M", "", "k"])
def test_bad_sizes_are_one_line_errors(text):
    with pytest.raises(ConfigError, match="--arena-cache-size"):
        parse_size(text)


def test_split_values_keeps_order_and_drops_repeats():
    assert split_values("a, b,a", "optimise") == ("a", "b")
    with pytest.raises(ConfigError):
        split_values("a,,b", "optimise")


def test_points_are_every_combination_models_outermost(ds_cnn, resnet8):
    axes = {"accelerator-config": ("ethos-u55-64", "ethos-u65-256"), "optimise": ("Performance", "Size"),
            "arena-cache-size": ("32k", "default")}
    points = sweep_points([str(ds_cnn), str(resnet8)], axes, {})
    assert len(points) == 16
    assert [p.index for p in points] == list(range(16))
    assert [p.model.network for p in points[:8]] == ["ds_cnn_kws"] * 8
    assert points[0].options.arena_cache_size_bytes == 32768 and points[1].options.arena_cache_size_bytes is None
    assert len({p.key for p in points}) == 16


def test_key_follows_model_bytes_and_options(tmp_path, ds_cnn):
    copy = tmp_path / "ds_cnn_kws.tflite"
    copy.write_bytes(ds_cnn.read_bytes())
    axes = {"optimise": ("Size",)}
    assert sweep_points([str(copy)], axes, {})[0].key == sweep_points([str(ds_cnn)], axes, {})[0].key
    assert sweep_points([str(ds_cnn)], {"optimise": ("Performance",)}, {})[0].key != sweep_points([str(ds_cnn)], axes, {})[0].key
    copy.write_bytes(ds_cnn.read_bytes() + b"\0")
    assert sweep_points([str(copy)], axes, {})[0].key != sweep_points([str(ds_cnn)], axes, {})[0].key


@pytest.mark.parametrize("axes, fragment", [
    ({"accelerator-config": ("ethos-u55-64", "ethos-u99-1")}, "ethos-u99-1"),
    ({"system-config": ("No_Such_System",)}, "No_Such_System"),
    ({"memory-mode": ("Shared_Sram", "Nope")}, "Nope"),
    ({"optimise": ("Fastest",)}, "Fastest"),
    ({"arena-cache-size": ("64k", "lots")}, "lots"),
])
def test_values_bad_on_their_own_fail_up_front(ds_cnn, axes, fragment):
    with pytest.raises(ConfigError, match=fragment):
        sweep_points([str(ds_cnn)], axes, {})


def test_missing_model_fails_up_front(tmp_path):
    with pytest.raises(ModelError, match="nope.tflite"):
        sweep_points([str(tmp_path / "nope.tflite")], {}, {})


def test_the_same_model_in_two_folders_is_one_point(tmp_path, ds_cnn):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "ds_cnn_kws.tflite").write_bytes(ds_cnn.read_bytes())
    points = sweep_points([str(ds_cnn), str(tmp_path / "a" / "ds_cnn_kws.tflite")], {}, {})
    assert [p.model.path for p in points] == [str(ds_cnn)]


def test_key_follows_the_config_files_contents(tmp_path, ds_cnn):
    ini = tmp_path / "mine.ini"
    ini.write_text("[Memory_Mode.Mine]\nconst_mem_area=Axi1\narena_mem_area=Axi0\ncache_mem_area=Axi0\n")
    fixed = {"config": (str(ini),)}
    axes = {"system-config": ("Ethos_U55_High_End_Embedded",), "memory-mode": ("Mine",)}
    before = sweep_points([str(ds_cnn)], axes, fixed)[0].key
    ini.write_text("[Memory_Mode.Mine]\nconst_mem_area=Axi1\narena_mem_area=Axi0\ncache_mem_area=Axi0\n"
                   "arena_cache_size=65536\n")
    assert sweep_points([str(ds_cnn)], axes, fixed)[0].key != before
