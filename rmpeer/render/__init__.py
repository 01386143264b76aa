"""Renderers of a RunResult: each output format a fleet reads, made from the typed result alone."""
