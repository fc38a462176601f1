"""The contextual bandit bake-off (issue 29): a versioned suite of cells (suite.py), a runner that
plays agents on its report seeds (run.py), and a scorecard of paired statistics (stats.py,
report.py). docs/benchmark.md explains what each part does and why."""
