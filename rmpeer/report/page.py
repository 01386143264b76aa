"""The report's page, as text: what the HTML that Allure writes may fetch (nothing from
outside), its analytics removed, the data it embeds, and a fleet report's additions (one
environment per host, each host's own duration, the host table). Pure: the files are
read and Allure is run by rmpeer.report.hosts and rmpeer.report.allure_html."""

from __future__ import annotations

import base64
import html
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from rmpeer.errors import RmpeerError
from rmpeer.render.allure import HOST_LABEL   # every result's host (rmpeer.render.allure sets it)

ALLURE_VERSION = "3.18.0"             # the version this module and allurerc.mjs were checked with
NO_CERTIFICATE = "UNKNOWN"
REASONS_SHOWN = 3


@dataclass
class HostResults:
    host: str
    results: Path                      # its Allure results folder
    certificate: Path | None = None
    verdict: str = NO_CERTIFICATE
    reasons: list = field(default_factory=list)
    duration_s: float | None = None    # the run's own time, from its certificate
    span_s: float = 0.0                # first result's start to last result's stop
    driver: str = ""
    environment: dict = field(default_factory=dict)


# Strings of absolute URLs that the report's own JavaScript holds but never fetches by itself:
# XML namespace names, links a person may click ("Powered by", a Playwright trace viewer),
# and the fallback base URL used to parse relative paths. Any other absolute URL in the page
# fails the build, so that a new Allure version that starts loading something is noticed.
NOT_FETCHED = (
    re.compile(r"https?://www\.w3\.org/"),
    re.compile(r"https://allurereport\.org/?$"),
    re.compile(r"https://trace\.playwright\.dev/?$"),
    re.compile(r"https://localhost/?$"),
    re.compile(r"https?://\$\{"),    # built from a result's own link at run time, shown as a link
)
URL = re.compile(r"""(?:https?:)?//[A-Za-z0-9$][^\s"'`()<>\\,;]*""")
ABSOLUTE = re.compile(r"""https?://[^\s"'`()<>\\,;]+""")
DATA_URI = re.compile(r"data:([\w/+.-]+);base64,([A-Za-z0-9+/=]+)")
EMBEDDED = re.compile(r'd\("([^"]+)","([A-Za-z0-9+/=]*)"\)')   # the single-file report's data
# Attributes whose URL the browser loads by itself (an <a href> is only followed on a click).
FETCHING = {("script", "src"), ("link", "href"), ("img", "src"), ("img", "srcset"), ("iframe", "src"),
            ("source", "src"), ("video", "src"), ("video", "poster"), ("audio", "src"), ("embed", "src"),
            ("object", "data"), ("image", "href"), ("use", "href"), ("input", "src")}


class _Tags(HTMLParser):
    """The page's tags that would fetch a URL, and its inline <style>/<script> text."""

    def __init__(self):
        super().__init__()
        self.fetched, self.inline, self._in = [], [], None

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if (tag, name) in FETCHING and value and URL.match(value.strip()):
                self.fetched.append(f"<{tag} {name}={value[:120]!r}>")
        self._in = tag if tag in ("style", "script") else None

    def handle_data(self, data):
        if self._in:
            self.inline.append(data)


def external_urls(html: str) -> list[str]:
    """What in the page a browser would load from outside by itself: tags with a remote
    src/href, and absolute URLs in its inline and embedded (data:) scripts and styles that are
    not known to be mere strings. Empty for a report that makes no outside request."""
    tags = _Tags()
    tags.feed(DATA_URI.sub("data:", html))     # the base64 bodies are checked decoded, below
    found = list(tags.fetched)
    texts = tags.inline + [base64.b64decode(body).decode("utf-8", "replace")
                           for kind, body in DATA_URI.findall(html) if kind in ("text/javascript", "text/css")]
    for text in texts:
        found += [f"@import in a style: {m[:120]}" for m in re.findall(r"@import[^;]*", text)]
        found += [f"url() in a style: {m}" for m in re.findall(r"url\(\s*['\"]?(?:https?:)?//[^)]*\)", text)]
        found += [u for u in ABSOLUTE.findall(text) if not any(p.match(u) for p in NOT_FETCHED)]
    return sorted(set(found))


def strip_analytics(html: str) -> str:
    """Remove the analytics <script> tags Allure writes into every page: the loader of
    googletagmanager.com and the inline gtag() set-up. (Base64 bodies never hold "gtag(".)"""
    def keep(m: re.Match) -> str:
        opening, body = m.group(1), m.group(2)
        analytics = "googletagmanager" in opening or "google-analytics" in opening or "gtag(" in body
        return "" if analytics else m.group(0)
    return re.sub(r"(<script\b[^>]*>)(.*?)</script>\s*", keep, html, flags=re.S)


def embedded_files(html: str) -> dict[str, bytes]:
    """The report's data as the single-file page carries it: path -> bytes (widgets/*.json,
    data/test-results/<id>.json, data/attachments/...)."""
    return {name: base64.b64decode(body) for name, body in EMBEDDED.findall(html)}


FLEET_CONFIG = """// written by rmpeer report for a report of several hosts: one environment per host
import base from {base};
const host = (name) => ({{ labels }}) => labels.some((l) => l.name === {label} && l.value === name);
const hosts = {hosts};
export default {{
  ...base,
  environments: Object.fromEntries(hosts.map((h) =>
    [h.id, {{ name: h.name, matcher: host(h.name), variables: h.variables }}])),
}};
"""


def fleet_config(base_uri: str, env_ids: dict, hosts) -> str:
    """The allurerc.mjs of a fleet report: the shipped one (`base_uri`), one environment per host."""
    return FLEET_CONFIG.format(
        base=json.dumps(base_uri), label=json.dumps(HOST_LABEL),
        hosts=json.dumps([{"id": env_ids[h.host], "name": h.host, "variables": variables(h)} for h in hosts],
                         ensure_ascii=False))


OPTIONS = re.compile(r"(window\.allureReportOptions\s*=\s*)(\{.*?\})(;?\s*\n)")


def fleet_options(html: str, env_ids: dict, hosts) -> str:
    """The report's own header shows one duration: for the whole report Allure takes the
    time from the first result to the last, which for hosts run one after the other is the
    gap between their runs. That figure is dropped (the header shows when the report was
    made), and each host's header shows its own run's duration from its certificate."""
    m = OPTIONS.search(html)
    if not m:
        raise RmpeerError("the Allure page has no window.allureReportOptions: this Allure version "
                          f"writes its page differently from {ALLURE_VERSION}, which rmpeer was checked with")
    options = json.loads(m.group(2))
    options.pop("runSummary", None)
    by_env = options.get("runSummaryByEnv") or {}
    for h in hosts:
        run = by_env.get(env_ids[h.host])
        if run is not None and h.duration_s is not None:
            run["duration"] = int(round(h.duration_s * 1000))
    text = json.dumps(options, ensure_ascii=False).replace("</", "<\\/")
    return html[:m.start(2)] + text + html[m.end(2):]


def variables(h: HostResults) -> dict:
    """The host's environment block: its run's environment.properties, and its verdict."""
    out = {"host": h.host, "verdict": h.verdict}
    if h.duration_s is not None:
        out["duration"] = f"{h.duration_s:.1f} s"
    if h.driver:
        out["driver"] = h.driver
    out.update({k: v for k, v in h.environment.items() if k != "host"})
    if h.certificate:
        out["certificate"] = str(h.certificate)
    return out


def duration_text(h: HostResults) -> str:
    return f"{h.duration_s:.1f} s" if h.duration_s is not None else f"{h.span_s:.1f} s (tests only)"


def host_table(hosts: list[HostResults]) -> str:
    """The first thing on the page: one row per host. The report's own header shows no
    duration for many hosts (Allure's would be the time from the first host's run to the
    last one's); each host's own run time is here."""
    e = html.escape
    counts: dict = {}
    for h in hosts:
        counts[h.verdict] = counts.get(h.verdict, 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    rows = []
    for h in hosts:
        shown = h.reasons[:REASONS_SHOWN] + ([f"... and {len(h.reasons) - REASONS_SHOWN} more"]
                                             if len(h.reasons) > REASONS_SHOWN else [])
        reasons = "<br>".join(e(r) for r in shown) or "&ndash;"
        if h.verdict == "INCOMPLETE":       # its own colour and words: it never drains a node
            reasons = "no verdict: not drained" + ("<br>" + reasons if shown else "")
        rows.append(f'<tr data-testid="rmpeer-host-row" data-host="{e(h.host)}" data-verdict="{e(h.verdict)}">'
                    f'<td>{e(h.host)}</td><td class="v v-{e(h.verdict.replace(" ", "-").lower())}">{e(h.verdict)}</td>'
                    f'<td>{reasons}</td><td>{e(duration_text(h))}</td><td>{e(h.driver or "unknown")}</td></tr>')
    return f"""<section id="rmpeer-hosts" data-testid="rmpeer-hosts">
<style>
#rmpeer-hosts {{ max-width: 840px; margin: 16px auto; padding: 0 16px; font: 14px system-ui, sans-serif; color: #1b1f24; }}
#rmpeer-hosts table {{ border-collapse: collapse; width: 100%; background: #fff; }}
#rmpeer-hosts th, #rmpeer-hosts td {{ border-bottom: 1px solid #e3e6ea; padding: 4px 8px; text-align: left;
  vertical-align: top; }}
#rmpeer-hosts summary {{ cursor: pointer; font-weight: 600; padding: 6px 0; }}
#rmpeer-hosts .v {{ font-weight: 600; white-space: nowrap; }}
#rmpeer-hosts .v-certified {{ color: #1a7f37; }} #rmpeer-hosts .v-degraded {{ color: #9a6700; }}
#rmpeer-hosts .v-not-certified {{ color: #cf222e; }}
#rmpeer-hosts .v-incomplete {{ color: #8250df; }}
</style>
<script>
// the table belongs to the overview: a test's page (a route after '#') shows its error first
(function () {{ const show = () => {{ const s = document.getElementById("rmpeer-hosts");
  if (s) s.hidden = location.hash.length > 1; }}; addEventListener("hashchange", show); show(); }})();
</script>
<details open><summary data-testid="rmpeer-hosts-summary">{len(hosts)} host{"" if len(hosts) == 1 else "s"}: {e(summary)}</summary>
<table><thead><tr><th>host</th><th>verdict</th><th>reasons</th><th>duration</th><th>driver</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
<p>Each host is an environment of this report (the selector at the top) and the parent suite of its
results. Durations are each host's own run, from its certificate.</p></details></section>
"""


# Controls of Allure's page that mean nothing for rmpeer's results: a check is never retried
# (each result is one check of one run; two hosts' are two results), so never flaky; it has
# no severity, resolution or transition; and rmpeer sets no quality gate and no global
# attachment or error. Hidden, so that a reader's eye goes to the verdict and the counts.
NOISE_TABS = ("nav-tab-qualityGate", "nav-tab-globalAttachments", "nav-tab-globalErrors", "test-result-tab-retries")
NOISE_FILTERS = ("Retry", "Flaky", "Resolution", "Transition", "Severity")


def quiet_controls(html: str) -> str:
    """The page without the controls that mean nothing here (NOISE_TABS, NOISE_FILTERS)."""
    if '<div id="app">' not in html:
        raise RmpeerError(f"the Allure page has no <div id=\"app\">: this Allure version writes its page "
                          f"differently from {ALLURE_VERSION}, which rmpeer was checked with")
    tabs = ", ".join(f"[data-testid={t}]" for t in NOISE_TABS)
    block = f"""<style data-testid="rmpeer-quiet">{tabs} {{ display: none !important; }}</style>
<script>
// Allure draws its filter buttons again as the page changes: each is hidden whenever it appears
(function () {{ const noise = new Set({json.dumps(list(NOISE_FILTERS))});
  const hide = () => document.querySelectorAll("#app button").forEach(b => {{
    if (noise.has(b.innerText.trim()) && !b.hidden) b.hidden = true; }});
  new MutationObserver(hide).observe(document.documentElement, {{ childList: true, subtree: true }}); }})();
</script>
"""
    return html.replace('<div id="app">', block + '<div id="app">', 1)


def with_host_table(html: str, hosts) -> str:
    """The fleet page with the host table first, before Allure's app."""
    if '<div id="app">' not in html:
        raise RmpeerError(f"the Allure page has no <div id=\"app\">: this Allure version writes its page "
                          f"differently from {ALLURE_VERSION}, which rmpeer was checked with")
    return html.replace('<div id="app">', host_table(hosts) + '<div id="app">', 1)
