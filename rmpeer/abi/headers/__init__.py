"""The ABI generator: reads NVIDIA's headers at a driver tag, probes a compiled layout, writes the ABI matrices."""
