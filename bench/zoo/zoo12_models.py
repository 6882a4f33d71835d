"""The twelfth differential set: what no earlier zoo holds (issue 25, "networks you have not seen
will be checked the same way"), meant for the hardware configs of bench/scenarios.py ZOO12 (odd
clocks, latencies and bandwidths in bench/zoo12_configs.ini, u55-64/256 and u65-256, arenas of
8 KiB and 16 MiB, both optimise modes).

What the earlier zoos cover (their docstrings): hand-written blocks of most families (zoo, zoo2,
zoo3, /tmp/zoo4..zoo9), keras.applications, TFLite Micro's examples and odd zero points (zoo11),
PyTorch exports and other writers' quirks (zoo10, zoo10q: deprecated operator codes, no
signatures, buffers by offset, metadata, TF1 per-tensor quantization, uint8), TF1 uint8 graphs
with fake-quant nodes (zoo7), resource variables, WHILE/IF and fused LSTMs (zoo5, zoo7, zoo_lstm,
stateful_tf.py), float I/O, per-tensor weights and int16x8 throughout. None holds a custom
operator, a TF1 session graph quantized by calibration to int8, or constants one tensor shares
between several operators and inputs feeding several outputs.

What is new here:
- SSD detection heads ending in the custom operator ``TFLite_Detection_PostProcess`` as the TF
  Object Detection API exports them (int8 heads, DEQUANTIZEs, since the operator reads uint8 or
  float32 only, a float32 anchor constant, four float32 outputs; the fast NMS and the regular
  one), the operator appended to a converted SSD with TensorFlow's schema object API and checked
  to run in LiteRT (ssd_det_tiny_16 kept in tests/data/zoo12); and the classic quantized
  SSD-MobileNet form, a TF1 graph with fake-quant nodes converted to uint8 whose uint8 heads and
  uint8 anchors feed the operator directly;
- TF1 session graphs (``tf.compat.v1`` placeholders, variables, ``tf.nn`` ops, fused batch norm)
  converted by ``tf.compat.v1.lite.TFLiteConverter.from_session`` with calibration, int8 and float
  I/O, two inputs and two outputs;
- several inputs and outputs around shared constants: one Conv2D layer applied to two inputs (one
  weight tensor read by two operators), one constant added to three branches, an output that
  feeds further operators, outputs listed in an order unlike the graph's; int8, int16x8, float I/O.

Runs with TensorFlow (a tool, never a dependency of npuplan), seeded by name; models under /tmp:
  /work/tfvenv/bin/python bench/zoo/zoo12_models.py [--out /tmp/zoo12] [--only NAME ...]
Writes DIR/<name>.tflite and DIR/manifest.json (family, I/O type, converter variant, operator types).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from flatbuffers import flexbuffers  # noqa: E402
from generate import L  # noqa: E402
from tensorflow.lite.python import schema_py_generated as schema  # noqa: E402
from zoo5_models import FLOAT, I8, I16, Spec, zoo_main  # noqa: E402

# ---------------------------------------------------------------- SSD with TFLite_Detection_PostProcess

POSTPROCESS = "TFLite_Detection_PostProcess"


def _ssd_heads(size: int, classes: int, anchors: int) -> tf.keras.Model:
    """A MobileNet-v1 style backbone, heads on the /8 and /16 maps: box encodings [1, N, 4] and
    class scores [1, N, classes + 1] (sigmoid), N = anchors per cell x cells."""
    inp = L.Input((size, size, 3), batch_size=1)  # static reshapes, as the exporter writes them
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu6")(inp)
    feats = []
    for width, stride in ((16, 2), (24, 2), (32, 2)):
        x = L.DepthwiseConv2D(3, strides=stride, padding="same", activation="relu6")(x)
        x = L.Conv2D(width, 1, activation="relu6")(x)
        feats.append(x)
    boxes, scores = [], []
    for f in feats[1:]:
        cells = f.shape[1] * f.shape[2] * anchors
        boxes.append(L.Reshape((cells, 4))(L.Conv2D(anchors * 4, 3, padding="same")(f)))
        scores.append(L.Reshape((cells, classes + 1))(L.Conv2D(anchors * (classes + 1), 3, padding="same")(f)))
    box = L.Concatenate(axis=1, name="box_encodings")(boxes)
    score = L.Activation("sigmoid", name="class_predictions")(L.Concatenate(axis=1)(scores))
    return tf.keras.Model(inp, [box, score])


def _anchors(size: int, grids: tuple[int, ...], anchors: int) -> np.ndarray:
    """[N, 4] float32 anchors (ycenter, xcenter, h, w) in the heads' order: per grid, per cell, per
    aspect."""
    rows = []
    for grid in grids:
        for y in range(grid):
            for x in range(grid):
                for a in range(anchors):
                    scale = (a + 1) / (anchors + 1)
                    rows.append(((y + 0.5) / grid, (x + 0.5) / grid, scale, scale * (0.5 + a / anchors)))
    return np.asarray(rows, np.float32)


def _postprocess_options(classes: int, regular: bool, detections: int) -> bytes:
    builder = flexbuffers.Builder()
    with builder.Map():
        builder.Int("max_detections", detections)
        builder.Int("max_classes_per_detection", 1)
        builder.Int("detections_per_class", 100)
        builder.Bool("use_regular_nms", regular)
        builder.Float("nms_score_threshold", 0.3)
        builder.Float("nms_iou_threshold", 0.6)
        builder.Int("num_classes", classes)
        builder.Float("y_scale", 10.0)
        builder.Float("x_scale", 10.0)
        builder.Float("h_scale", 5.0)
        builder.Float("w_scale", 5.0)
    return bytes(builder.Finish())


def _new_tensor(model, graph, name: str, shape: list[int], kind: int, data: bytes | None = None,
                scale: float | None = None) -> int:
    buffer = schema.BufferT()
    buffer.data = list(data) if data is not None else None
    model.buffers.append(buffer)
    tensor = schema.TensorT()
    tensor.name, tensor.shape, tensor.type, tensor.buffer = name.encode(), shape, kind, len(model.buffers) - 1
    if scale is not None:  # uint8, zero point 0
        tensor.quantization = schema.QuantizationParametersT()
        tensor.quantization.scale, tensor.quantization.zeroPoint = [scale], [0]
    graph.tensors.append(tensor)
    return len(graph.tensors) - 1


def append_postprocess(data: bytes, anchors: np.ndarray, classes: int, regular: bool, detections: int) -> bytes:
    """``data`` (a model whose float32 or uint8 outputs are box encodings and class scores) with the
    detection post-processing appended: its four float32 outputs become the model's outputs (the
    anchors float32, or uint8 of scale 1/255 beside uint8 heads, as the kernel reads them)."""
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))
    graph = model.subgraphs[0]
    outs = {graph.tensors[t].shape[-1]: t for t in graph.outputs}
    assert len(outs) == 2 and 4 in outs and classes + 1 in outs, "boxes and scores need different widths"
    code = schema.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
    code.customCode, code.version = POSTPROCESS.encode(), 1
    model.operatorCodes.append(code)
    f32 = schema.TensorType.FLOAT32
    if graph.tensors[outs[4]].type == schema.TensorType.UINT8:
        quantized = np.clip(np.round(anchors * 255), 0, 255).astype(np.uint8)
        anchor_t = _new_tensor(model, graph, "anchors", list(anchors.shape), schema.TensorType.UINT8,
                               quantized.tobytes(), 1 / 255)
    else:
        anchor_t = _new_tensor(model, graph, "anchors", list(anchors.shape), f32, anchors.tobytes())
    results = [_new_tensor(model, graph, name, shape, f32) for name, shape in (
        ("detection_boxes", [1, detections, 4]), ("detection_classes", [1, detections]),
        ("detection_scores", [1, detections]), ("num_detections", [1]))]
    op = schema.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = len(model.operatorCodes) - 1, [outs[4], outs[classes + 1], anchor_t], results
    op.customOptions = list(_postprocess_options(classes, regular, detections))
    op.customOptionsFormat = schema.CustomOptionsFormat.FLEXBUFFERS
    graph.operators.append(op)
    graph.outputs = results
    for signature in model.signatureDefs or []:
        signature.outputs = []
        for name, index in zip(("detection_boxes", "detection_classes", "detection_scores", "num_detections"),
                               results):
            out = schema.TensorMapT()
            out.name, out.tensorIndex = name.encode(), index
            signature.outputs.append(out)
    builder = __import__("flatbuffers").Builder(len(data) + anchors.nbytes + 4096)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _checked(data: bytes, shape: tuple[int, ...]) -> bytes:
    """``data`` after one LiteRT run on a seeded input (raises if LiteRT cannot run it)."""
    interpreter = tf.lite.Interpreter(model_content=data)
    interpreter.allocate_tensors()
    detail = interpreter.get_input_details()[0]
    rng = np.random.default_rng(0)
    info = np.iinfo(detail["dtype"]) if detail["dtype"] != np.float32 else None
    value = (rng.integers(info.min, info.max + 1, shape) if info else rng.standard_normal(shape))
    interpreter.set_tensor(detail["index"], value.astype(detail["dtype"]))
    interpreter.invoke()
    return data


def ssd_detect(size=64, classes=5, anchors=3, io=I8, regular=False, detections=10):
    def convert():
        model = _ssd_heads(size, classes, anchors)
        converter = tf.lite.TFLiteConverter.from_keras_model(model)
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        rng = np.random.default_rng(size)
        converter.representative_dataset = lambda: ([rng.standard_normal((1, size, size, 3)).astype(np.float32)]
                                                    for _ in range(10))
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = io
        converter.inference_output_type = FLOAT  # DEQUANTIZEs: the operator takes uint8 or float32 only
        grids = (size // 8, size // 16)
        data = append_postprocess(converter.convert(), _anchors(size, grids, anchors), classes, regular, detections)
        return _checked(data, (1, size, size, 3)), [[1, size, size, 3]]
    return convert


def _fq(t, lo=-6.0, hi=6.0):
    return tf.quantization.fake_quant_with_min_max_args(t, min=lo, max=hi)


def _tf1_ssd_heads(x, rng, classes: int, anchors: int):
    """The SSD of ``_ssd_heads`` as a TF1 graph with fake-quant nodes (every tensor's range fixed)."""
    def w(shape):
        return _fq(tf.constant(rng.normal(0, 0.3, shape).astype(np.float32)), -1.0, 1.0)
    x = _fq(tf.nn.relu6(tf.nn.conv2d(x, w((3, 3, 3, 8)), 2, "SAME")), 0.0, 6.0)
    feats, channels = [], 8
    for width in (16, 24, 32):
        x = _fq(tf.nn.relu6(tf.nn.depthwise_conv2d(x, w((3, 3, channels, 1)), (1, 2, 2, 1), "SAME")), 0.0, 6.0)
        x = _fq(tf.nn.relu6(tf.nn.conv2d(x, w((1, 1, channels, width)), 1, "VALID")), 0.0, 6.0)
        feats.append(x)
        channels = width
    boxes, scores = [], []
    for f in feats[1:]:
        cells = f.shape[1] * f.shape[2] * anchors
        c = f.shape[-1]
        boxes.append(tf.reshape(_fq(tf.nn.conv2d(f, w((3, 3, c, anchors * 4)), 1, "SAME"), -8.0, 8.0), (1, cells, 4)))
        scores.append(tf.reshape(_fq(tf.nn.conv2d(f, w((3, 3, c, anchors * (classes + 1))), 1, "SAME"), -8.0, 8.0),
                                 (1, cells, classes + 1)))
    box = tf.identity(_fq(tf.concat(boxes, axis=1), -8.0, 8.0), name="box_encodings")
    score = tf.identity(_fq(tf.sigmoid(_fq(tf.concat(scores, axis=1), -8.0, 8.0)), 0.0, 1.0), name="class_predictions")
    return box, score


def ssd_uint8_tf1(size=32, classes=4, anchors=2, detections=5):
    """The classic quantized SSD-MobileNet form: a TF1 graph converted to uint8 (``inference_type``,
    fake-quant ranges) whose uint8 heads and uint8 anchors feed TFLite_Detection_PostProcess."""
    def convert():
        graph = tf.Graph()
        with graph.as_default():
            image = tf.compat.v1.placeholder(tf.float32, (1, size, size, 3), name="image")
            outputs = _tf1_ssd_heads(_fq(image), np.random.default_rng(size), classes, anchors)
            with tf.compat.v1.Session(graph=graph) as session:
                converter = tf.compat.v1.lite.TFLiteConverter.from_session(session, [image], list(outputs))
                converter.inference_type = tf.uint8
                converter.quantized_input_stats = {"image": (128.0, 127.0 / 6.0)}
                data = converter.convert()
        data = append_postprocess(data, _anchors(size, (size // 8, size // 16), anchors), classes, False, detections)
        return _checked(data, (1, size, size, 3)), [[1, size, size, 3]]
    return convert


# ---------------------------------------------------------------- TF1 session graphs


def _tf1_graph(size: int, channels: int, two_inputs: bool):
    """Placeholders and outputs of a TF1-style graph: conv + fused batch norm + relu6, a depthwise,
    a max pool, a mean and a dense with softmax; with ``two_inputs`` a second vector input joins by
    a dense and the pre-softmax logits are a second output."""
    rng = np.random.default_rng(size * 31 + channels)
    var = lambda name, shape, scale=0.3: tf.compat.v1.get_variable(  # noqa: E731
        name, initializer=(rng.standard_normal(shape) * scale).astype(np.float32))
    image = tf.compat.v1.placeholder(tf.float32, (1, size, size, 3), name="image")
    x = tf.nn.conv2d(image, var("w1", (3, 3, 3, channels)), strides=2, padding="SAME")
    x, _, _ = tf.compat.v1.nn.fused_batch_norm(x, var("gamma", (channels,)) + 1.0, var("beta", (channels,)),
                                               var("mean", (channels,)), tf.abs(var("variance", (channels,))) + 0.5,
                                               is_training=False)
    x = tf.nn.relu6(x)
    x = tf.nn.depthwise_conv2d(x, var("dw", (3, 3, channels, 1)), strides=[1, 1, 1, 1], padding="SAME")
    x = tf.nn.relu(tf.nn.bias_add(x, var("dwb", (channels,), 0.1)))
    x = tf.nn.max_pool2d(x, 2, 2, "VALID")
    x = tf.nn.conv2d(x, var("w2", (1, 1, channels, 2 * channels)), strides=1, padding="VALID")
    feat = tf.reduce_mean(tf.nn.relu(x), axis=[1, 2])
    inputs = [image]
    if two_inputs:
        extra = tf.compat.v1.placeholder(tf.float32, (1, 8), name="extra")
        feat = tf.concat([feat, tf.nn.relu(tf.matmul(extra, var("we", (8, 8))))], axis=1)
        inputs.append(extra)
    logits = tf.nn.bias_add(tf.matmul(feat, var("wd", (feat.shape[-1], 10))), var("bd", (10,), 0.1), name="logits")
    probs = tf.nn.softmax(logits, name="probs")
    return inputs, ([probs, logits] if two_inputs else [probs])


def tf1_session(size=32, channels=12, io=I8, two_inputs=False):
    def convert():
        graph = tf.Graph()
        with graph.as_default():
            tf.compat.v1.set_random_seed(size)
            inputs, outputs = _tf1_graph(size, channels, two_inputs)
            with tf.compat.v1.Session(graph=graph) as session:
                session.run(tf.compat.v1.global_variables_initializer())
                converter = tf.compat.v1.lite.TFLiteConverter.from_session(session, inputs, outputs)
                rng = np.random.default_rng(size)
                shapes = [tuple(t.shape) for t in inputs]
                converter.representative_dataset = lambda: ([rng.standard_normal(s).astype(np.float32)
                                                             for s in shapes] for _ in range(10))
                converter.optimizations = [tf.lite.Optimize.DEFAULT]
                converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
                converter.inference_input_type = io
                converter.inference_output_type = io
                return converter.convert(), [list(s) for s in shapes]
    return convert


# ---------------------------------------------------------------- several inputs and outputs, shared constants


def shared_io(size=16, c=8):
    """Three inputs (two images, one vector); one Conv2D layer (one weight tensor) on both images;
    one constant added to three branches; four outputs: the two branch maps' pooled features (one
    of them also feeding the head), the head, and the vector's own branch, listed out of order."""
    left, right, vec = (L.Input((size, size, 3), name="a_left"), L.Input((size, size, 3), name="b_right"),
                       L.Input((c,), name="c_vec"))
    shared = L.Conv2D(c, 3, padding="same", activation="relu")
    bias = tf.constant(np.linspace(-0.5, 0.5, c, dtype=np.float32))
    add_bias = L.Lambda(lambda t: t + bias)
    a, b = add_bias(shared(left)), add_bias(shared(right))
    pa = L.GlobalAveragePooling2D()(a)
    pb = L.GlobalMaxPooling2D()(L.Conv2D(c, 3, strides=2, padding="same")(b))
    v = add_bias(L.Dense(c, activation="relu")(vec))
    head = L.Dense(5)(L.Concatenate()([pa, pb, v]))
    diff = L.Subtract()([pa, pb])
    return tf.keras.Model([left, right, vec], [head, v, diff, pa])


MODELS: dict[str, Spec] = {
    "ssd_det_fast_64": Spec("detection", ssd_detect),
    "ssd_det_tiny_16": Spec("detection", lambda: ssd_detect(16, 2, 2, I8, False, 3)),
    "ssd_det_regular_float_in_48": Spec("detection", lambda: ssd_detect(48, 4, 2, FLOAT, True, 6)),
    "ssd_uint8_tf1_32": Spec("detection", ssd_uint8_tf1),
    "tf1_session_int8_32": Spec("tf1", tf1_session),
    "tf1_session_float_io_24": Spec("tf1", lambda: tf1_session(24, 8, FLOAT)),
    "tf1_session_two_io_20": Spec("tf1", lambda: tf1_session(20, 10, I8, True)),
    "shared_io_16": Spec("multi_io", shared_io),
    "shared_io_int16_12": Spec("multi_io", lambda: shared_io(12, 6), I16),
    "shared_io_float_16": Spec("multi_io", shared_io, FLOAT),
}


def main() -> None:
    zoo_main(MODELS, __doc__.splitlines()[0], Path("/tmp/zoo12"), Path(__file__))


if __name__ == "__main__":
    main()
