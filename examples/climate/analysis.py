"""A climate analysis of a [time, level, lat, lon] variable: the series at a few stations
(every time step, one level, one grid point), a few maps (one time step and level), and a
zonal mean over a season (90 days of one level, every latitude and longitude).

    python examples/climate/analysis.py data.h5 [dataset]
"""

import sys

import h5py

with h5py.File(sys.argv[1], "r") as f:
    data = f[sys.argv[2] if len(sys.argv) > 2 else "data"]
    times, levels, lats, lons = data.shape
    stations = [(lats // 4, lons // 3), (lats // 2, lons // 2), (3 * lats // 4, 2 * lons // 3)]
    series = [data[:, 0, lat, lon].mean() for lat, lon in stations]
    maps = [data[t, levels - 1, :, :].max() for t in (0, times // 2, times - 1)]
    season = data[: min(times, 90 * 24), 0, :, :].mean(axis=(0, 2))  # a zonal mean
print(len(series), len(maps), season.shape)
