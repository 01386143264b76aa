"""Tests that kill the mutants of rmpeer/render/heatmap.py (docs/mutation.md): both pictures of two
cards written out whole, element by element, each place worked out by hand from the module's
sizes (cells 170 x 64 after a heading of 190 x 46 under a title of 30, margins 12, legend lines 16
apart, a width of about 0.6 em a character), colours from its tables and the scale's two ends
(the midpoint worked out by hand), each line of text and each refusal written out, never taken
from p2p_matrix_svg or bandwidth_heatmap_svg."""

import pytest

from rmpeer.model.host import Card, HostFacts
from rmpeer.render.heatmap import bandwidth_heatmap_svg, link_kind, p2p_matrix_svg, scale_colour

pytestmark = pytest.mark.offline

TICK, CROSS, ARROW = "\u2713", "\u2717", "\u2192"


def T(x, y, s, size=12, weight="normal", fill="#222", anchor="middle"):
    """One SVG text element as the pictures write it (`s` already XML-escaped)."""
    return (f'<text x="{x}" y="{y}" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" font-size="{size}" '
            f'font-weight="{weight}" fill="{fill}" text-anchor="{anchor}">{s}</text>')


def head(width, height, testid, title):
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" data-testid="{testid}">', f"<title>{title}</title>",
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>', T(12, 20, title, 15, "bold", anchor="start")]


def facts(cards, p2p):
    return HostFacts("580.65.06", "open", "rm-api-query", "580.65.06", cards=cards, p2p=p2p)


def card(index, name, pci):
    return Card(index=index, minor=index, gpu_id=10 + index, pci=pci, pci_device_id=0x2335, name=name)


P2P_TITLE = "P2P capabilities (NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2)"


def test_the_p2p_matrix_of_two_cards_written_out():
    p2p = {(0, 0): {"caps": ["WRITES_SUPPORTED", "NVLINK_SUPPORTED", "READS_SUPPORTED"], "caps_word": 0xB},
           (0, 1): {"caps": ("C2C_SUPPORTED", "READS_SUPPORTED"), "caps_word": 0x21},
           (1, 0): {"caps": ["PCI_SUPPORTED"], "caps_word": "7", "error": "NV_ERR_NOT_SUPPORTED"}}    # (1, 1) not asked
    svg = p2p_matrix_svg(facts([card(1, "H100 <PCIe>", ""), card(0, "NVIDIA H200", "0000:01:00.0")], p2p))
    # 24 + 6.8 x 94 (the longer legend line) = 663.2 is the widest; 30 + 46 + 2 x 64 + 44 + 12 high
    assert svg.split("\n") == head(663, 260, "p2p-matrix", P2P_TITLE) + [
        T(107.0, 58, f"card a (row) {ARROW} card b", fill="#555"),
        '<g data-testid="p2p-matrix-col-0">' + T(287.0, 50, "card 0", weight="bold")
        + T(287.0, 66, "H200 0000:01:00.0", 10, fill="#555") + "</g>",
        '<g data-testid="p2p-matrix-row-0">' + T(16, 106.0, "card 0", weight="bold", anchor="start")
        + T(16, 122.0, "H200 0000:01:00.0", 10, fill="#555", anchor="start") + "</g>",
        '<g data-testid="p2p-matrix-col-1">' + T(457.0, 50, "card 1", weight="bold")
        + T(457.0, 66, "H100 &lt;PCIe&gt;", 10, fill="#555") + "</g>",
        '<g data-testid="p2p-matrix-row-1">' + T(16, 170.0, "card 1", weight="bold", anchor="start")
        + T(16, 186.0, "H100 &lt;PCIe&gt;", 10, fill="#555", anchor="start") + "</g>",
        '<g data-testid="p2p-cell-0-0" data-link="NVLink" data-read="true" data-write="true">'
        f"<title>card 0 {ARROW} card 0: NVLINK_SUPPORTED, READS_SUPPORTED, WRITES_SUPPORTED (caps word 0xb)</title>"
        '<rect x="204" y="78" width="166" height="60" rx="6" fill="#2e9e5b"/>'
        + T(287.0, 103, "NVLink (same card)", 14, "bold", "#ffffff")
        + T(287.0, 122, f"read {TICK}  write {TICK}", 11, fill="#ffffff") + "</g>",
        '<g data-testid="p2p-cell-0-1" data-link="C2C" data-read="true" data-write="false">'
        f"<title>card 0 {ARROW} card 1: C2C_SUPPORTED, READS_SUPPORTED (caps word 0x21)</title>"
        '<rect x="374" y="78" width="166" height="60" rx="6" fill="#1f8a8a"/>'
        + T(457.0, 103, "C2C", 14, "bold", "#ffffff")
        + T(457.0, 122, f"read {TICK}  write {CROSS}", 11, fill="#ffffff") + "</g>",
        '<g data-testid="p2p-cell-1-0" data-link="PCIe" data-read="false" data-write="false">'
        f"<title>card 1 {ARROW} card 0: PCI_SUPPORTED</title>"
        '<rect x="204" y="142" width="166" height="60" rx="6" fill="#b9bec6"/>'
        + T(287.0, 167, "PCIe", 14, "bold", "#ffffff")
        + T(287.0, 186, "query failed: NV_ERR_NOT_SUPPORTED", 11, fill="#ffffff") + "</g>",
        '<g data-testid="p2p-cell-1-1" data-link="none" data-read="false" data-write="false">'
        f"<title>card 1 {ARROW} card 1: no caps</title>"
        '<rect x="374" y="142" width="166" height="60" rx="6" fill="#b9bec6"/>'
        + T(457.0, 167, "none (same card)", 14, "bold")
        + T(457.0, 186, "not queried", 11) + "</g>",
        T(12, 222, "green NVLink, teal C2C, amber PCIe, grey: no P2P path (or neither reads nor writes allowed)", 11,
          fill="#444", anchor="start"),
        T(12, 238, "read / write: RM&#x27;s READS_SUPPORTED / WRITES_SUPPORTED for the pair; hover a cell for every cap",
          11, fill="#444", anchor="start"),
        "</svg>", ""]


@pytest.mark.parametrize("caps, link, data, line, fill", [
    ({"PCI_BAR1_SUPPORTED", "WRITES_SUPPORTED"}, "PCIe", ("false", "true"), f"read {CROSS}  write {TICK}", "#e0a030"),
    (["INDIRECT_NVLINK_SUPPORTED", "C2C_SUPPORTED", "PCI_SUPPORTED", "READS_SUPPORTED", "WRITES_SUPPORTED"], "NVLink",
     ("true", "true"), f"read {TICK}  write {TICK}", "#2e9e5b"),
    (["NVLINK_SUPPORTED"], "NVLink", ("false", "false"), "no read, no write", "#b9bec6"),
    (["READS_SUPPORTED"], "none", ("true", "false"), f"read {TICK}  write {CROSS}", "#b9bec6"),
])
def test_a_pair_of_each_link_and_access(caps, link, data, line, fill):
    svg = p2p_matrix_svg(facts([card(0, "A", "p"), card(1, "B", "q")], {(0, 1): {"caps": caps}}))
    ink = "#ffffff" if link != "none" else "#222"
    assert (f'<g data-testid="p2p-cell-0-1" data-link="{link}" data-read="{data[0]}" data-write="{data[1]}">'
            f"<title>card 0 {ARROW} card 1: {', '.join(sorted(caps))}</title>"
            f'<rect x="374" y="78" width="166" height="60" rx="6" fill="{fill}"/>'
            + T(457.0, 103, link, 14, "bold", ink) + T(457.0, 122, line, 11, fill=ink) + "</g>") in svg.split("\n")


def test_link_kind_of_each_cap():
    assert [link_kind(c) for c in (["NVLINK_SUPPORTED", "C2C_SUPPORTED"], ("INDIRECT_NVLINK_SUPPORTED",),
                                   ["C2C_SUPPORTED", "PCI_SUPPORTED"], ["PCI_SUPPORTED"], ["PCI_BAR1_SUPPORTED"],
                                   ["READS_SUPPORTED", "WRITES_SUPPORTED"], [])] == \
        ["NVLink", "NVLink", "C2C", "PCIe", "PCIe", "none", "none"]


def test_the_p2p_matrix_of_no_card_and_its_refusals():
    assert p2p_matrix_svg(facts([], {})).split("\n") == head(566, 70, "p2p-matrix", P2P_TITLE) + [
        '<g data-testid="p2p-matrix-empty">' + T(12, 50, "RM lists no card on this host", 13, fill="#444", anchor="start")
        + "</g>", "</svg>", ""]
    with pytest.raises(ValueError) as e:
        p2p_matrix_svg(facts([card(0, "A", "p")], {(0, 0): ["NVLINK_SUPPORTED"]}))
    assert str(e.value) == "p2p[(0, 0)] is list, not a dict of caps"
    with pytest.raises(ValueError) as e:
        p2p_matrix_svg(facts([card(0, "A", "p")], {(0, 0): {"caps": "NVLINK_SUPPORTED"}}))
    assert str(e.value) == "p2p[(0, 0)]['caps'] must be a list of cap names, not 'NVLINK_SUPPORTED'"
    assert "no caps (caps word 0x0)" in p2p_matrix_svg(facts([card(0, "A", "p")], {(0, 0): {"caps_word": 0}}))


BW_TITLE = "Peer copies: median steady GB/s per card pair"


def test_the_bandwidth_heatmap_of_two_cards_written_out():
    pairs = {"0->1": {"setup": [1, 1], "read": [2, 3], "write": [0, 0], "gbps": [100.0, 300.0, 200.0, 50.0]},
             (1, 0): {"setup": (1, 1), "read": [1, 1], "write": [1, 1], "gbps": [400]},
             ("1", "1"): {"setup": [0, 0], "read": None}}                                     # (0, 0) not tested
    legend = (f"colour: light = slowest pair (150.0 GB/s) {ARROW} dark = fastest (400.0 GB/s); red frame: a check "
              "failed")
    # 24 + 6.8 x 98 (the first legend line) = 690.4
    assert bandwidth_heatmap_svg(pairs).split("\n") == head(690, 260, "bandwidth-heatmap", BW_TITLE) + [
        T(107.0, 58, f"card s (row) {ARROW} card t", fill="#555"),
        '<g data-testid="bandwidth-heatmap-col-0">' + T(287.0, 50, "card 0", weight="bold")
        + T(287.0, 66, "", 10, fill="#555") + "</g>",
        '<g data-testid="bandwidth-heatmap-row-0">' + T(16, 106.0, "card 0", weight="bold", anchor="start")
        + T(16, 122.0, "", 10, fill="#555", anchor="start") + "</g>",
        '<g data-testid="bandwidth-heatmap-col-1">' + T(457.0, 50, "card 1", weight="bold")
        + T(457.0, 66, "", 10, fill="#555") + "</g>",
        '<g data-testid="bandwidth-heatmap-row-1">' + T(16, 170.0, "card 1", weight="bold", anchor="start")
        + T(16, 186.0, "", 10, fill="#555", anchor="start") + "</g>",
        '<g data-testid="bw-cell-0-0" data-status="none"><rect x="204" y="78" width="166" height="60" rx="6" '
        'fill="#eeeeee"/>' + T(287.0, 113, "not tested", fill="#777") + "</g>",
        # the median of 50, 100, 200, 300: 150, the slowest (light); read failed 1 of 3: a red frame, red marks
        '<g data-testid="bw-cell-0-1" data-status="fail" data-gbps="150.0" data-fill="#deebf7">'
        f"<title>card 0 {ARROW} card 1: setup 0/1 failed, read 1/3 failed, write 0/0 failed; 4 copies, median 150.0 GB/s"
        "</title>"
        '<rect x="374" y="78" width="166" height="60" rx="6" fill="#deebf7" stroke="#d62728" stroke-width="4"/>'
        + T(457.0, 104, "150.0 GB/s", 15, "bold", "#222") + T(457.0, 123, f"S{TICK}  R{CROSS} 1/3", 11, fill="#d62728")
        + "</g>",
        '<g data-testid="bw-cell-1-0" data-status="pass" data-gbps="400.0" data-fill="#08306b">'
        f"<title>card 1 {ARROW} card 0: setup 0/1 failed, read 0/1 failed, write 0/1 failed; 1 copies, median 400.0 GB/s"
        "</title>"
        '<rect x="204" y="142" width="166" height="60" rx="6" fill="#08306b"/>'
        + T(287.0, 168, "400.0 GB/s", 15, "bold", "#ffffff") + T(287.0, 187, f"S{TICK}  R{TICK}  W{TICK}", 11,
                                                                 fill="#ffffff") + "</g>",
        '<g data-testid="bw-cell-1-1" data-status="pass" data-gbps="" data-fill="#eeeeee">'
        f"<title>card 1 {ARROW} card 1: setup 0/0 failed, read 0/0 failed, write 0/0 failed</title>"
        '<rect x="374" y="142" width="166" height="60" rx="6" fill="#eeeeee"/>'
        + T(457.0, 168, "no copies", 15, "bold", "#222") + T(457.0, 187, "no checks ran", 11) + "</g>",
        T(12, 222, legend, 11, fill="#444", anchor="start"),
        # the marks above give failed/total ("R\u2717 1/3": one of three failed), as this line says (it said
        # passed/total until the render/ mutation run found it, issue 47 item 9)
        T(12, 238, f"S R W: setup / read / write checks, {TICK} all passed, {CROSS} failed/total where one failed", 11,
          fill="#444", anchor="start"),
        "</svg>", ""]


def cell_of(svg, s, t):
    return next(line for line in svg.split("\n") if line.startswith(f'<g data-testid="bw-cell-{s}-{t}"'))


def test_a_failed_cell_on_a_dark_fill_keeps_white_marks_and_one_median_alone_is_dark():
    svg = bandwidth_heatmap_svg({(0, 1): {"write": [0, 2], "gbps": [7.25]}})
    assert cell_of(svg, 0, 1) == (
        '<g data-testid="bw-cell-0-1" data-status="fail" data-gbps="7.2" data-fill="#08306b">'
        f"<title>card 0 {ARROW} card 1: setup 0/0 failed, read 0/0 failed, write 2/2 failed; 1 copies, median 7.2 GB/s"
        "</title>"
        '<rect x="374" y="78" width="166" height="60" rx="6" fill="#08306b" stroke="#d62728" stroke-width="4"/>'
        + T(457.0, 104, "7.2 GB/s", 15, "bold", "#ffffff") + T(457.0, 123, f"W{CROSS} 2/2", 11, fill="#ffffff") + "</g>")


@pytest.mark.parametrize("median, ink", [(45.0, "#222"), (45.5, "#ffffff"), (0.0, "#222"), (100.0, "#ffffff")])
def test_white_ink_above_045_of_the_scale(median, ink):
    svg = bandwidth_heatmap_svg({(0, 0): {"gbps": [0.0]}, (0, 1): {"gbps": [100]}, (1, 1): {"gbps": [median]}})
    assert T(457.0, 168, f"{median:.1f} GB/s", 15, "bold", ink) in cell_of(svg, 1, 1)


def test_the_scale_from_light_to_dark():
    assert scale_colour(1.0, 1.0, 2.0) == "#deebf7"
    assert scale_colour(2.0, 1.0, 2.0) == "#08306b"
    assert scale_colour(1.5, 1.0, 2.0) == "#738eb1"        # halfway: 0xde+(0x08-0xde)/2 = 0x73, 0x8e (141.5 to even), 0xb1
    assert scale_colour(1.25, 1.0, 2.0) == "#a8bcd4"       # a quarter: 0xa8 (168.5 to even), 0xbc (188.25), 0xd4 (212)
    assert scale_colour(3.0, 3.0, 3.0) == "#08306b"
    assert scale_colour(3.0, 4.0, 3.0) == "#08306b"


def test_the_bandwidth_heatmap_of_no_pairs():
    assert bandwidth_heatmap_svg({}).split("\n") == head(452, 70, "bandwidth-heatmap", BW_TITLE) + [
        '<g data-testid="bandwidth-heatmap-empty">'
        + T(12, 50, "no per-pair results (no read/write test ran)", 13, fill="#444", anchor="start") + "</g>",
        "</svg>", ""]


@pytest.mark.parametrize("pairs, message", [
    ({"0->x": {}}, "pair key ('0', 'x') is not (card s, card t)"),
    ({"0-1": {}}, "pair key '0-1' is not (card s, card t)"),
    ({(0, 1, 2): {}}, "pair key (0, 1, 2) is not (card s, card t)"),
    ({5: {}}, "pair key 5 is not (card s, card t)"),
    ({(0, 1): {"setup": [-1, 0]}}, "setup must be [passed, total] with 0 <= passed <= total, not [-1, 0]"),
    ({(0, 1): {"read": [3, 2]}}, "read must be [passed, total] with 0 <= passed <= total, not [3, 2]"),
    ({(0, 1): {"write": [1.0, 1]}}, "write must be [passed, total] with 0 <= passed <= total, not [1.0, 1]"),
    ({(0, 1): {"write": [1, 1.0]}}, "write must be [passed, total] with 0 <= passed <= total, not [1, 1.0]"),
    ({(0, 1): {"gbps": [1.0, -0.5]}}, "gbps must be finite, non-negative numbers, not [1.0, -0.5]"),
    ({(0, 1): {"gbps": [float("inf")]}}, "gbps must be finite, non-negative numbers, not [inf]"),
    ({(0, 1): {"gbps": ["1"]}}, "gbps must be finite, non-negative numbers, not ['1']"),
])
def test_each_refusal_in_its_words(pairs, message):
    with pytest.raises(ValueError) as e:
        bandwidth_heatmap_svg(pairs)
    assert str(e.value) == message
    assert e.value.__cause__ is None
    assert e.value.__suppress_context__ is message.startswith("pair key")    # a key's own error is not shown


def test_counts_at_their_bounds_and_a_copy_of_0_gbps_are_accepted():
    svg = bandwidth_heatmap_svg({(0, 0): {"setup": [0, 0], "read": [2, 2], "write": [0, 1], "gbps": [0, 0.0]}})
    assert 'data-status="fail" data-gbps="0.0"' in svg and f"R{TICK}  W{CROSS} 1/1" in svg


def test_a_grid_of_four_cards_is_as_wide_as_its_cells():
    cards = [card(i, "A", "p") for i in range(4)]
    # 12 + 190 + 4 x 170 + 12 = 894, wider than the legend's 663.2
    assert p2p_matrix_svg(facts(cards, {})).split("\n")[0].startswith(
        '<svg xmlns="http://www.w3.org/2000/svg" width="894" height="388" viewBox="0 0 894 388"')
    svg = bandwidth_heatmap_svg({(0, 3): {"gbps": [1.0]}, (2, 1): {}})
    assert svg.split("\n")[0].startswith('<svg xmlns="http://www.w3.org/2000/svg" width="894" height="388"')


def test_no_copies_anywhere_gives_a_scale_of_0_gbps():
    svg = bandwidth_heatmap_svg({(0, 1): {"read": [1, 1]}})
    assert T(12, 222, f"colour: light = slowest pair (0.0 GB/s) {ARROW} dark = fastest (0.0 GB/s); red frame: a check "
             "failed", 11, fill="#444", anchor="start") in svg.split("\n")


@pytest.mark.parametrize("median, ink", [(150.0, "#ffffff"), (145.0, "#222"), (146.0, "#ffffff")])
def test_white_ink_above_045_of_a_scale_that_starts_above_0(median, ink):
    # (150 - 100) / (200 - 100) = 0.5; (145 - 100) / 100 = 0.45 exactly
    svg = bandwidth_heatmap_svg({(0, 0): {"gbps": [100.0]}, (0, 1): {"gbps": [200.0]}, (1, 1): {"gbps": [median]}})
    assert T(457.0, 168, f"{median:.1f} GB/s", 15, "bold", ink) in cell_of(svg, 1, 1)
