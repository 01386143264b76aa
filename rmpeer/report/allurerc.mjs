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
  ],
};
