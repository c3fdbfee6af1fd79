"""Pipeline stages, one file each: inventory, read, validate, route, prompt, cache, extract, judge,
write, aggregate; xfinder_ray/pipeline.py wires them together.

Per-row stages are built with `rows.row_stage(name, reads=, writes=, fn=, rows=, stats=)`: each
declares the columns it reads and writes, which rows it works on and what it counts; the helper
passes every other row through and marks the rows a stage rejects. Every per-row stage runs on a
pandas batch without Ray (tests/cpu/stages/).
"""
