"""rmpeer's own tests. Its folder is on sys.path (pytest puts a rootless conftest's
folder there), so a test in any package folder imports the shared helpers by name:
fake_host_tree, fleet_nodes, mutants, source_mutation, slurm."""
