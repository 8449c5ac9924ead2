"""A microscopy analysis of a 5-D [t, c, z, y, x] stack: a few planes (one time point,
channel and z), a Z-stack at one channel (a maximum projection), and a time-lapse at a
point of interest (every time point, one channel, z, y and x).

    python examples/microscopy/analysis.py data.h5 [dataset]
"""

import sys

import h5py

with h5py.File(sys.argv[1], "r") as f:
    data = f[sys.argv[2] if len(sys.argv) > 2 else "data"]
    t, c, z, y, x = data.shape
    planes = [data[i, 0, z // 2, :, :].mean() for i in (0, t // 2, t - 1)]
    projection = data[t // 2, c - 1, :, :, :].max(axis=0)
    lapse = data[:, 0, z // 2, y // 2, x // 2]
print(len(planes), projection.shape, lapse.shape)
