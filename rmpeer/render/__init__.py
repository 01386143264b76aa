"""Renderers: each turns a RunResult (rmpeer.result) into one output and reads nothing else."""
