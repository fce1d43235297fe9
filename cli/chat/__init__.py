"""`arreio chat`: the interactive door on the one conveyor."""
