"""rmpeer: conformance suite for NVIDIA RM peer setup, driven by raw ioctls."""

__version__ = "0.1.0"
