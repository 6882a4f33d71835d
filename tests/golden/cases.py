"""Golden end-to-end cases: small shipped models planned in fixed scenarios."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
GOLDEN = Path(__file__).resolve().parent

SCENARIO = dict(
    accelerator_config="ethos-u55-128",
    system_config="Ethos_U55_High_End_Embedded",
    memory_mode="Shared_Sram",
    optimise="Performance",
)
# The Vela-comparable figures come from the cascade search (Vela's own strategy); the default
# search (auto: the better of the cascade and the Pareto search) has cases of its own.
CASCADE = dict(SCENARIO, search="cascade")

CASES = {
    "ds_cnn_kws_u55_128": ("ds_cnn_kws.tflite", CASCADE),
    "resnet8_cifar_u55_128": ("resnet8_cifar.tflite", CASCADE),
    "ds_cnn_kws_u55_128_auto": ("ds_cnn_kws.tflite", SCENARIO),
    "resnet8_cifar_u55_128_auto": ("resnet8_cifar.tflite", SCENARIO),
    # zoo networks with the long-tail ops: LEAKY_RELU, an UpSampling2D export, concatenations,
    # max pools (tiny YOLO); TRANSPOSE_CONV decoders with skip concatenations (U-Net)
    "tiny_yolo_160_u55_128_auto": ("tiny_yolo_160.tflite", SCENARIO),
    "unet_transpose_64_u55_128_auto": ("unet_transpose_64.tflite", SCENARIO),
}

FIELDS = (
    "npu_operators", "cpu_operators", "nn_macs", "total_npu_encoded_weights", "sram_memory_used",
    "off_chip_flash_memory_used", "cycles_npu", "cycles_total", "sram_total_bytes", "off_chip_flash_total_bytes",
)


def figures(name: str) -> dict[str, object]:
    """Plan a case and return its golden figures (summary fields and per-layer cycles)."""
    import npuplan
    from npuplan.report import build_report
    from npuplan.report.files import per_layer_rows
    from npuplan.report.summary import summary_row

    model, options = CASES[name]
    plan = npuplan.plan(DATA / model, **options)
    report = build_report(plan)
    row = summary_row(report)
    return {
        "summary": {key: row[key] for key in FIELDS},
        "layers": {r[-1]: r[4] for r in per_layer_rows(report)},
    }
