"""The formats things leave the studio in, as Literals that every layer shares, from the command lines and the
pages down to the permission check that records an export: a model (ModelFormat), a run's tables (TableFormat)
and runs' records (RunFormat: the tables' formats first)."""
from __future__ import annotations

from typing import Literal, get_args

__all__ = ["ModelFormat", "MODEL_FORMATS", "TableFormat", "TABLE_FORMATS", "RunFormat", "RUN_FORMATS"]

ModelFormat = Literal["mindir", "onnx"]
MODEL_FORMATS: tuple[ModelFormat, ...] = get_args(ModelFormat)
TableFormat = Literal["parquet", "csv"]
TABLE_FORMATS: tuple[TableFormat, ...] = get_args(TableFormat)
RunFormat = Literal["parquet", "csv", "tensorboard", "html", "mlflow"]
RUN_FORMATS: tuple[RunFormat, ...] = get_args(RunFormat)
