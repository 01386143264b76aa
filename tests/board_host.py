"""A hand-made 8-card HGX H200 host whose RM order, /dev/nvidia minors, PCI bus order and
gres.conf order all differ (the expected cards of the tests that use it are worked out by
hand from the table, not by the resolver), and the facts a run of some of its cards holds."""

from rmpeer.machine.selection import Request, resolve
from rmpeer.model.selection import OPTION, HostCard

# RM's attach order (index) is neither the minor order nor the bus order. Bus order of the
# indices: 1b -> 1, 2a -> 3, 3b -> 0, 4c -> 2, 5d -> 5, 9a -> 4, bb -> 7, db -> 6.
HOST = [HostCard(0, 2, "0000:3b:00.0", "GPU-aa11c0de-0000-0000-0000-000000000000", "NVIDIA H200"),
        HostCard(1, 0, "0000:1b:00.0", "GPU-b1000000-0000-0000-0000-000000000001", "NVIDIA H200"),
        HostCard(2, 3, "0000:4c:00.0", "GPU-c2000000-0000-0000-0000-000000000002", "NVIDIA H200"),
        HostCard(3, 1, "0000:2a:00.0", "GPU-d3000000-0000-0000-0000-000000000003", "NVIDIA H200"),
        HostCard(4, 6, "0000:9a:00.0", "GPU-aa22beef-0000-0000-0000-000000000004", "NVIDIA H200"),
        HostCard(5, 4, "0000:5d:00.0", "GPU-e5000000-0000-0000-0000-000000000005", "NVIDIA H200"),
        HostCard(6, 7, "0000:db:00.0", "GPU-f6000000-0000-0000-0000-000000000006", "NVIDIA H200"),
        HostCard(7, 5, "0000:bb:00.0", "GPU-07000000-0000-0000-0000-000000000007", "NVIDIA H200")]
# gres.conf listing the second half of the minors first: GPU index i is the i-th file
GRES = "# gres.conf\nName=gpu Type=h200 File=/dev/nvidia[4-7]\nName=gpu Type=h200 File=/dev/nvidia[0-3]\n"


def subset_facts(subset):
    """The facts a run of `subset` of the HGX H200 board above would hold: the chosen cards,
    numbered 0..k-1, and P2P facts between them as the NVSwitch board reports them."""
    from rmpeer.model.host import Card, HostFacts

    sel = resolve(Request(OPTION, ",".join(map(str, subset)), tuple(map(str, subset))), HOST)
    cards = [Card(i, HOST[h].minor, 0x100 + h, HOST[h].pci, 0x2335, i, "NVIDIA H200", HOST[h].uuid)
             for i, h in enumerate(sel.cards)]
    caps = ["NVLINK_SUPPORTED", "READS_SUPPORTED", "WRITES_SUPPORTED"]
    p2p = {(a, b): {"caps": caps} for a in range(len(cards)) for b in range(len(cards))}
    return HostFacts("580.159.04", "open", "rm-api-query", cards=cards, p2p=p2p, selection=sel.as_dict())
