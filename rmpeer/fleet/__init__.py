"""Fleet mode: rmpeer run from a cluster's own hooks (Slurm prolog, HealthCheckProgram and
sweep; Kubernetes node-problem-detector and an Indexed Job), and the collector that turns
many nodes' results into a node table, merged outputs, drains and labels."""
