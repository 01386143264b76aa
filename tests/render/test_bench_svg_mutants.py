"""Tests that kill the mutants of rmpeer/render/bench_svg.py (docs/mutation.md): bench.json
documents built by hand and their whole SVG written out here, each bar's length, place and label
worked out by hand (a bar of 450 px stands for the largest figure, copy engine or CUDA, and never
less than 1 GB/s; rows 14 px, CUDA's bar half as high, 4 px apart; text XML-escaped), never taken
from bench_svg."""

import xml.etree.ElementTree as ET

import pytest

from rmpeer.render.bench_svg import bench_svg

pytestmark = pytest.mark.offline

MiB = 1 << 20
HEAD = '<svg xmlns="http://www.w3.org/2000/svg" width="760" height="{}" font-family="sans-serif" font-size="11">'
TITLE = ('<text x="10" y="20" font-size="13">rmpeer bench, {}, driver {}, boost {}: GB/s (blue: copy engine through '
         'RM; grey: CUDA copy_)</text>')


def test_two_figures_one_with_cuda_beside_written_out():
    bench = {"host": {"label": "h200 <lab> & co"}, "driver": "580.\"1\"", "boost": True, "results": [
        {"op": "read", "src_card": 0, "dst_card": 1, "bytes": 256 * MiB, "gbps": 225.0, "cuda_gbps": 450.0},
        {"op": "all", "src_card": None, "dst_card": None, "bytes": 64 * MiB + 5, "gbps": 90.4, "cuda_gbps": None}]}
    # the largest figure is CUDA's 450 GB/s: 1 px a GB/s
    svg = bench_svg(bench)
    assert svg == (
        HEAD.format(105) + TITLE.format("h200 &lt;lab&gt; &amp; co", "580.&quot;1&quot;", "on")
        + '<text x="224" y="51" text-anchor="end">read 0-&gt;1 256 MiB</text>'
        + '<rect x="230" y="40" width="225.0" height="14" fill="#2b7bb9"/>'
        + '<text x="459.0" y="51">225</text>'
        + '<rect x="230" y="55" width="450.0" height="7" fill="#8a8a8a"/>'
        + '<text x="224" y="77" text-anchor="end">all all cards 64 MiB</text>'
        + '<rect x="230" y="66" width="90.4" height="14" fill="#2b7bb9"/>'
        + '<text x="324.4" y="77">90</text>'
        + "</svg>")
    ET.fromstring(svg)                                   # valid XML


def test_figures_below_1_gbps_are_drawn_against_1_gbps_and_a_cuda_figure_of_0_has_no_bar():
    bench = {"host": {"label": "h"}, "driver": "d", "boost": False, "results": [
        {"op": "write", "src_card": 1, "dst_card": 0, "bytes": MiB, "gbps": 0.5, "cuda_gbps": 0},
        {"op": "read", "src_card": 0, "dst_card": 1, "bytes": 2 * MiB - 1, "gbps": 0.25}]}
    assert bench_svg(bench) == (
        HEAD.format(98) + TITLE.format("h", "d", "off")
        + '<text x="224" y="51" text-anchor="end">write 1-&gt;0 1 MiB</text>'
        + '<rect x="230" y="40" width="225.0" height="14" fill="#2b7bb9"/>'
        + '<text x="459.0" y="51">0</text>'
        + '<text x="224" y="70" text-anchor="end">read 0-&gt;1 1 MiB</text>'
        + '<rect x="230" y="59" width="112.5" height="14" fill="#2b7bb9"/>'
        + '<text x="346.5" y="70">0</text>'
        + "</svg>")


def test_the_largest_copy_engine_figure_sets_the_scale_and_no_figures_no_bars():
    bench = {"host": {"label": "h"}, "driver": "d", "boost": 1, "results": [
        {"op": "read", "src_card": 0, "dst_card": 1, "bytes": MiB, "gbps": 900.0, "cuda_gbps": 300.0}]}
    assert bench_svg(bench) == (
        HEAD.format(86) + TITLE.format("h", "d", "on")
        + '<text x="224" y="51" text-anchor="end">read 0-&gt;1 1 MiB</text>'
        + '<rect x="230" y="40" width="450.0" height="14" fill="#2b7bb9"/>'
        + '<text x="684.0" y="51">900</text>'
        + '<rect x="230" y="55" width="150.0" height="7" fill="#8a8a8a"/>'
        + "</svg>")
    assert bench_svg({"host": {"label": "h"}, "driver": "d", "boost": 0, "results": []}) == (
        HEAD.format(60) + TITLE.format("h", "d", "off") + "</svg>")
