"""The words an NVLink reading and its judgement share: rmpeer.rm.nvlink records them, and
rmpeer.judge.nvlink compares against them, so neither imports the other."""

# A trained link RM reports as ACTIVE or, between bursts of traffic, SLEEP (low power): on
# 2 x H200 (580.159.04) every link read SLEEP before and after carrying 395 GB/s.
UP_STATES = ("ACTIVE", "SLEEP")
# link_health's reason for a card RM says has no NVLink: a fact, not a failure to read.
NO_NVLINK = "RM reports no NVLink on this card"
