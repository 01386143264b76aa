"""Files rmpeer ships for the cluster's own hooks: slurm/ and kubernetes/ (copied out by
`rmpeer fleet files slurm|kubernetes DIR`)."""
