"""rmpeer's suites: the plugin in fixtures/ turns the matrices into parameters and builds
the RM objects; suites/ only assert."""

pytest_plugins = ["fixtures.plugin", "fixtures.results", "fixtures.reporting"]
