from rmpeer.cli import entry

entry()
