"""Every RM handle rmpeer chooses, in one place, so that no two schemes can overlap.

The seed's schemes (PlanHostPeers) come first; rmpeer's own objects (discovery, copy
engines, staging buffers, a detection test's spare) live in ranges of their own.
tests/tables/test_plan.py checks that the ranges never meet for the largest layout."""

# The seed: NV50_P2P of sessions a < b at PAIR_BASE + a*PAIR_STRIDE + b (unique while b < 16)
PAIR_BASE, PAIR_STRIDE = 0xB2000000, 16
# The seed: session s's objects at base + s*SESSION_STRIDE; its window of t at WINDOW_BASE + t too
SESSION_STRIDE = 0x10000
WINDOW_BASE = 0xB3000000
SESSION_BASES = {"device": 0xD0000000, "subdevice": 0xD1000000, "vaspace": 0xD2000000, "buffer": 0xD3000000}

# rmpeer's own
PROBE_DEVICE_BASE, PROBE_SUBDEVICE_BASE = 0xA0000000, 0xA1000000   # + card: discovery and fitness
COPY_ENGINE_BASE, COPY_ENGINE_STRIDE = 0xCE000000, 0x10000          # + session*stride + n: its channel
STAGING_BASE, STAGING_STRIDE = 0xCA000000, 16                        # + card*stride + k: staging buffers
SPARE_BASE = 0xB4000000                                              # + n: a detection test's extra objects
CONF_COMPUTE_HANDLE = 0xA2000000     # the NV_CONFIDENTIAL_COMPUTE object health reads through, freed at once
