"""A real Slurm cluster on localhost for the fleet tests (see harness.py)."""
