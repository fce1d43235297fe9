"""An ONNX model written as bytes: the few messages e5_onnx.py's graph uses, in protobuf's wire format.

onnxruntime reads a model from bytes; the `onnx` package would only serialise it, and importing it
(protobuf and all its generated classes) took ~0.6 s in every `kb add` worker, about a third of a
worker's start. The messages and field numbers are onnx.proto's (ModelProto, GraphProto, NodeProto,
AttributeProto, TensorProto, ValueInfoProto and the TypeProto they hold); every field is written as
protobuf writes it (varints, little-endian floats, length-prefixed strings and messages, repeated
numbers one key each, which every protobuf reader accepts, packed or not).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

# TensorProto.DataType
FLOAT, UINT8, INT8, INT64 = 1, 2, 3, 7
_DATA_TYPES = {
    np.dtype(np.float32): FLOAT,
    np.dtype(np.uint8): UINT8,
    np.dtype(np.int8): INT8,
    np.dtype(np.int64): INT64,
}
# AttributeProto.AttributeType
_ATTR_FLOAT, _ATTR_INT, _ATTR_INTS = 1, 2, 7


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int64 is its two's complement, ten bytes
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode("utf-8") if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _float(field: int, value: float) -> bytes:
    return _varint(field << 3 | 5) + struct.pack("<f", value)


def tensor(name: str, value: np.ndarray) -> bytes:
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian)."""
    array = np.ascontiguousarray(value)
    out = b"".join(_int(1, dim) for dim in array.shape)
    out += _int(2, _DATA_TYPES[array.dtype]) + _bytes(8, name)
    return out + _bytes(9, array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())


def _attribute(name: str, value: int | float | Sequence[int]) -> bytes:
    """AttributeProto: name (1), f (2), i (3), ints (8), type (20): the kinds the graph uses."""
    if isinstance(value, bool | int):
        return _bytes(1, name) + _int(3, int(value)) + _int(20, _ATTR_INT)
    if isinstance(value, float):
        return _bytes(1, name) + _float(2, value) + _int(20, _ATTR_FLOAT)
    return _bytes(1, name) + b"".join(_int(8, int(v)) for v in value) + _int(20, _ATTR_INTS)


def node(op: str, inputs: Sequence[str], outputs: Sequence[str], domain: str = "", **attributes) -> bytes:
    """NodeProto: input (1), output (2), op_type (4), attribute (5), domain (7). An empty input name
    is an optional input left out."""
    out = b"".join(_bytes(1, name) for name in inputs) + b"".join(_bytes(2, name) for name in outputs)
    out += _bytes(4, op)
    out += b"".join(_bytes(5, _attribute(key, value)) for key, value in attributes.items())
    return out + (_bytes(7, domain) if domain else b"")


def value_info(name: str, elem_type: int, dims: Sequence[int | str]) -> bytes:
    """ValueInfoProto: name (1), type (2: TypeProto.tensor_type (1): elem_type (1), shape (2)); a
    dimension is a number (dim_value, 1) or a name (dim_param, 2)."""
    shape = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, elem_type) + _bytes(2, shape)))


def model(
    nodes: Sequence[bytes],
    initializers: Sequence[bytes],
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    opsets: dict[str, int],
    name: str = "graph",
    ir_version: int = 8,
) -> bytes:
    """ModelProto: ir_version (1), graph (7: node (1), name (2), initializer (5), input (11),
    output (12)), opset_import (8: domain (1), version (2))."""
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, name)
    graph += b"".join(_bytes(5, t) for t in initializers)
    graph += b"".join(_bytes(11, i) for i in inputs) + b"".join(_bytes(12, o) for o in outputs)
    out = _int(1, ir_version) + _bytes(7, graph)
    return out + b"".join(
        _bytes(8, (_bytes(1, domain) if domain else b"") + _int(2, v)) for domain, v in opsets.items()
    )
