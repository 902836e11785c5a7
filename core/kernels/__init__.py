"""The project's own CPU operators for MindSpore (ops.Custom, func_type="aot"), with MindSpore's as fallback."""
