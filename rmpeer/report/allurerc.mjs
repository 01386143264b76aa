// Allure 3 configuration for rmpeer's report (`rmpeer report`, rmpeer/report/allure_html.py).
// The awesome report is written as ONE self-contained HTML file (singleFile), so that it can
// be mailed or archived with a certificate and opened on a host that has no network.
//
// Categories sort failures by what a person must do next. They match on the messages our
// failures carry (rmpeer/rm/errors.py, rmpeer/shim/replay.py, rmpeer/ce/engine.py, the
// suites' asserts); the first rule that matches wins, so the specific ones come first.
// pytest reports a fixture (setup) error as "broken" and an assert as "failed": both count.
const FAILED = ["failed", "broken"];
const rule = (name, message) => ({ name, matchers: { statuses: FAILED, message } });

export default {
  name: "rmpeer conformance report",
  plugins: {
    awesome: {
      options: {
        singleFile: true,
        // The title comes from `allure generate --name` (rmpeer report --title).
        // The tree a person reads: area (epic) > step (feature) > layout (story).
        groupBy: ["epic", "feature", "story"],
        theme: "light",
        reportLanguage: "en",
      },
    },
  },
  categories: [
    // The run's verdict, a result of its own (rmpeer/render/entries.py): first, so that its
    // reasons (which quote the failures below) file it under nothing else.
    rule("Verdict", /^(NOT CERTIFIED|DEGRADED)(:|$)/),
    // INCOMPLETE and every finding that could not be established are "unknown": no verdict,
    // and a scheduler never drains a node for it.
    { name: "No verdict (INCOMPLETE: never drained)", matchers: { statuses: ["unknown"] } },
    rule("Floor misses", /below the floor/),
    rule("Xids", /Xid \d+/),
    rule("Clocks and boost", /boost|P-state|graphics clock/),
    // A request differs from the recording, field by field: the ABI in matrices/drivers.yaml
    // does not match the driver the recording was made on.
    rule("ABI mismatch", /replay of [\s\S]*(field|bytes, the recording sent)/),
    rule("Host does not match topology", /host is not|does not match the expected topology/),
    // RmError messages start with the step label, then the NV_ERR_* name; allure-pytest puts
    // the exception's type in front ("rmpeer.rm.errors.RmError: alloc:p2p: NV_ERR_...").
    rule("P2P refused", /(^|: )alloc:p2p: /),
    rule("Map refused", /(^|: )dma-map-(peer|window): /),
    rule("Data mismatch", /bytes differ/),
    rule("Engine fault or timeout", /did not finish within/),
    // what is left of the findings no check stands for: RM's health facts (docs/health.md)
    rule("Health facts", /row.remap|ECC|fabric|PCIe|MIG|reset|recovery/i),
  ],
};
