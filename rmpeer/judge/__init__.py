"""Pure: findings in, verdict out (floors, fitness, health, shared-host rules, per-card verdicts). Never sees a live object."""
