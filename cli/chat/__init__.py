"""`arreio chat`: the interactive door on the one conveyor (issue 20)."""
