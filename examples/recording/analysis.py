"""An electrophysiology analysis of a [time, channels] recording: one-second windows of
channel groups (a shank of 32 channels at a time) across the recording, then one channel
whole.

    python examples/recording/analysis.py data.h5 [dataset] [samples per second]
"""

import sys

import h5py

with h5py.File(sys.argv[1], "r") as f:
    data = f[sys.argv[2] if len(sys.argv) > 2 else "data"]
    rate = int(sys.argv[3]) if len(sys.argv) > 3 else 30_000
    samples, channels = data.shape
    group = min(32, channels)
    window = min(rate, samples)
    energy = 0.0
    for start in range(0, samples - window + 1, max(window, samples // 8)):
        for first in range(0, channels - group + 1, group):
            energy += float((data[start : start + window, first : first + group].astype("f8") ** 2).mean())
    one = data[:, channels // 2]
print(energy > 0, one.shape)
