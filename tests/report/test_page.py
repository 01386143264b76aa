"""The report's page as text (rmpeer.report.page): the analytics Allure writes removed, any
fetch from outside caught, and the fleet report's host table escaped and bounded. Pure:
no Allure, no browser, no folder."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from rmpeer.report.page import HostResults, external_urls, host_table, strip_analytics


# -- the page Allure writes: analytics out, nothing fetched from outside --------------------

ALLURE_LIKE = """<html><head><link rel="icon" href="data:image/svg+xml,x"></head><body>
<script src="data:text/javascript;base64,{js}"></script>
<script async src="https://www.googletagmanager.com/gtag/js?id=G-X"></script>
<script>window.dataLayer = window.dataLayer || []; function gtag(){{dataLayer.push(arguments);}} gtag('js', new Date());</script>
<a href="https://allurereport.org">Powered by</a>
<script async>window.allureReportData = {{}};</script></body></html>"""


def page(js: str) -> str:
    import base64

    return ALLURE_LIKE.format(js=base64.b64encode(js.encode()).decode())


def test_analytics_are_removed_and_nothing_else_is_fetched():
    raw = page('const ns = "http://www.w3.org/2000/svg"; link("https://allurereport.org");')
    assert any("googletagmanager" in u for u in external_urls(raw))
    clean = strip_analytics(raw)
    assert "googletagmanager" not in clean and "gtag(" not in clean
    assert "window.allureReportData" in clean and "data:text/javascript" in clean   # the report itself stays
    assert external_urls(clean) == []       # a link a person may click is not a fetch


@pytest.mark.parametrize("js, found", [
    ('fetch("https://telemetry.example.com/v1")', "https://telemetry.example.com/v1"),
    ('s.textContent = "@import url(//fonts.example.com/a.css);"', "@import"),
])
def test_a_remote_load_in_the_embedded_script_is_caught(js, found):
    urls = external_urls(strip_analytics(page(js)))
    assert any(found in u for u in urls), urls


def test_a_remote_tag_is_caught():
    html = '<html><body><img src="https://example.com/logo.png"><a href="https://example.com">x</a></body></html>'
    assert external_urls(html) == ["<img src='https://example.com/logo.png'>"]


def test_the_host_table_escapes_and_bounds_what_it_shows(tmp_path):
    h = HostResults("<b>n1</b>", tmp_path, verdict="NOT CERTIFIED", reasons=[f"r{i} <x>" for i in range(5)],
                    duration_s=1.25, driver="580.1 open")
    class Rows(HTMLParser):
        """The host rows as a browser parses them: attributes and each cell's text."""

        def __init__(self):
            super().__init__()
            self.rows, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "tr" and dict(attrs).get("data-testid") == "rmpeer-host-row":
                self.rows.append((dict(attrs), []))
            elif tag == "td" and self.rows:
                self.cell = self.rows[-1][1]
                self.cell.append("")

        def handle_endtag(self, tag):
            if tag == "td":
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell[-1] += data

    parsed = Rows()
    parsed.feed(host_table([h]))
    (attrs, cells), = parsed.rows
    assert attrs["data-host"] == "<b>n1</b>" and attrs["data-verdict"] == "NOT CERTIFIED"
    assert cells[0] == "<b>n1</b>" and cells[3] == "1.2 s" and cells[4] == "580.1 open"
    assert cells[2] == "r0 <x>r1 <x>r2 <x>... and 2 more"
