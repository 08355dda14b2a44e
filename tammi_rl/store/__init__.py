"""What a run leaves on disk: checkpoint files (`checkpoint`) and the run directory layout (`rundir`)."""
