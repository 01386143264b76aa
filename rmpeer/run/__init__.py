"""One run: the RunSpec built from the request (spec), the run of any tier (execute: the host
run or the passive reading), the one assembler of the RunResult (assemble), the fingerprint
and freshness."""
