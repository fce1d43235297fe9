"""The offline model: deterministic answers from the goal's own words and the files it names, so
`--offline` runs, tests and CI need no network and give the same events every time."""
