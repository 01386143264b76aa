"""Renderers: each turns a RunResult (rmpeer.model.result) into one output and reads nothing else."""
