#!/usr/bin/env python3
"""Writes tests/data/torch_fixture.bin, the PyTorch checkpoint that tests/data/test_torch_checkpoint.cpp
reads: torch.save of a dict covering what state dicts hold (every storage type, a parameter, a
transposed view sharing its storage, an offset slice, a 0-d and an empty tensor, a nested state
dict with its _metadata, a non-tensor value). Run once with PyTorch installed; the file is
committed (about 6 KB) so the test needs no Python. Values are the ones the test expects.
"""
import collections
import pathlib
import sys

import torch

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                   pathlib.Path(__file__).resolve().parent.parent / "tests/data/torch_fixture.bin")
w = torch.arange(6, dtype=torch.float32).reshape(2, 3)
lin = torch.nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0]]))
    lin.bias.copy_(torch.tensor([1.0, -2.0]))
state = collections.OrderedDict()
state["w"] = w
state["wt"] = w.t()  # a strided view of w's storage
state["slice"] = torch.arange(10, dtype=torch.float32)[3:7]  # storage offset 3
state["f64"] = torch.tensor([1.0 / 3.0, -2.5], dtype=torch.float64)
state["f16"] = torch.tensor([1.5, -2.0, 65504.0], dtype=torch.float16)
state["bf16"] = torch.tensor([1.0, 2.5, -0.125], dtype=torch.bfloat16)
state["i64"] = torch.tensor([-1, 2**40], dtype=torch.int64)
state["i32"] = torch.tensor([7, -8], dtype=torch.int32)
state["i16"] = torch.tensor([300, -301], dtype=torch.int16)
state["i8"] = torch.tensor([-128, 127], dtype=torch.int8)
state["u8"] = torch.tensor([0, 255, 9], dtype=torch.uint8)
state["b"] = torch.tensor([True, False, True])
state["scalar"] = torch.tensor(3.25)
state["empty"] = torch.zeros(0, 4)
state["param"] = torch.nn.Parameter(torch.full((2,), 7.0))
state["linear"] = lin.state_dict()  # an OrderedDict with _metadata (BUILD state)
state["epoch"] = 3  # not a tensor: skipped by the reader
torch.save(state, out)
print(f"wrote {out} ({out.stat().st_size} bytes) with torch {torch.__version__}")
