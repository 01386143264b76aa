"""rmpeer's pytest plugin for the suites (suites/, the conformance checks a user runs against a
host) and the self-tests (tests/, rmpeer's own tests; not shipped). The plugin lives in the
package and is named here, never auto-loaded into other pytest runs."""

pytest_plugins = ["rmpeer.pytest_plugin.plugin", "rmpeer.pytest_plugin.results", "rmpeer.pytest_plugin.pairs",
                  "rmpeer.pytest_plugin.reporting"]
