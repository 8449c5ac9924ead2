"""Analysis: aggregation, statistics, the score and the recommendation."""
