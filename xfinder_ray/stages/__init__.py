"""Pipeline stages, one file each: read, validate, prompt, extract, judge, write, aggregate.

Each stage is a plain function over a batch (pandas DataFrame) or a dataset, and declares the columns
it reads and adds in its docstring; xfinder_ray/pipeline.py wires them together.
"""
