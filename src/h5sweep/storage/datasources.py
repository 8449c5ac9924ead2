"""The values written into test files.

Every source computes any box region on demand, deterministically from the config, so the
query stage can check each selection it read against the truth without keeping the cube.

- ``synthetic``: MSI-like spectra: per-spectrum baseline noise, a falling chemical baseline,
  and a few hundred peaks whose intensity varies smoothly across the image.
- ``chunk-index``: each element holds the index of the chunk it falls in (the OpenMSI
  study's uncompressed baseline), modulo the range of the dtype. A contiguous file has no
  chunks; its values are the index of notional ``1 x 1 x 256`` blocks, so that a read from
  the wrong place (or a file never written, all zeros) cannot pass the check.
- ``donor``: an existing HDF5 dataset or Zarr array of the same rank, cropped or tiled to
  the target shape and read box by box as the values are asked for: never whole, so a donor
  larger than memory streams (:class:`DonorSource`).

A 2-D dataset ``[time, channels]`` (a recording, as in the neuroscience study) gets its own
``synthetic`` values: per channel an offset, a rhythm and noise (:class:`RecordingSource`);
an array of another rank, a smooth field and noise (:class:`FieldSource`).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from h5sweep.storage.errors import ConfigError
from h5sweep.storage.layouts import Layout, Region, Shape

# Regions are computed in x-slabs of at most this many elements, to bound temporary memory.
_SLAB_ELEMENTS = 4 * 2**20


def rows_per_slab(shape: Shape) -> int:
    """How many indices along the first axis a slab of an array of ``shape`` holds."""
    return max(1, _SLAB_ELEMENTS // max(1, math.prod(shape[1:])))


# A donor of a wider integer type is read through for its range before any job runs up to
# this size; a larger one is checked block by block as it is written.
RANGE_CHECK_BYTES = 2**30


class DataSource:
    """Base class: ``region`` computes values; ``materialize`` the whole cube."""

    kind = "abstract"
    streams = False  # True: too large to hold, written block by block (a donor)
    per_layout = False  # True: its values depend on the layout of the file they go to

    def __init__(self, shape: Shape, dtype: np.dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    def _compute(self, xs: np.ndarray, ys: np.ndarray, zs: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def region(self, region: Region) -> np.ndarray:
        """Values of ``array[region]`` (a tuple of slices with step 1, one per axis)."""
        axes = [np.arange(*s.indices(n)) for s, n in zip(region, self.shape, strict=True)]
        out = np.empty(tuple(len(a) for a in axes), dtype=self.dtype)
        step = rows_per_slab(out.shape)
        for i in range(0, len(axes[0]), step):
            out[i : i + step] = self._compute(axes[0][i : i + step], *axes[1:])
        return out

    def materialize(self) -> np.ndarray:
        return self.region(tuple(slice(0, n) for n in self.shape))

    def slabs(self) -> Iterator[Region]:
        """The whole array as regions along the first axis of at most ``_SLAB_ELEMENTS``."""
        step = rows_per_slab(self.shape)
        for i in range(0, self.shape[0], step):
            yield (slice(i, min(i + step, self.shape[0])), *(slice(0, n) for n in self.shape[1:]))

    def largest_magnitude(self) -> float:
        """The largest absolute value, slab by slab."""
        return max((float(np.abs(self.region(r)).max()) for r in self.slabs()), default=0.0)

    def _cast(self, values: np.ndarray) -> np.ndarray:
        if np.issubdtype(self.dtype, np.integer):
            info = np.iinfo(self.dtype)
            return np.clip(np.rint(values), info.min, info.max).astype(self.dtype)
        return values.astype(self.dtype)


@dataclass
class _Peaks:
    centre: np.ndarray  # z position of each peak
    sigma: np.ndarray  # width in z samples
    height: np.ndarray  # intensity at the peak's strongest pixel
    pattern: np.ndarray  # which spatial pattern each peak follows
    images: np.ndarray = field(repr=False)  # (patterns, x, y) spatial intensity in [0.05, 1]
    start: np.ndarray = field(init=False, repr=False)  # first z of each peak's window
    stop: np.ndarray = field(init=False, repr=False)  # end (exclusive) of each window
    profiles: list = field(init=False, repr=False)  # each peak's shape over its window

    def __post_init__(self):
        # Computed once: a transcendental evaluated over arrays of different lengths may
        # differ in the last bit, and every region must see exactly the same numbers.
        reach = 4 * self.sigma
        self.start = np.floor(self.centre - reach).astype(np.int64)
        self.stop = np.ceil(self.centre + reach).astype(np.int64) + 1
        self.profiles = [
            np.exp(-0.5 * ((np.arange(a, b) - c) / w) ** 2).astype(np.float32)
            for a, b, c, w in zip(self.start, self.stop, self.centre, self.sigma, strict=True)
        ]


class SyntheticSource(DataSource):
    """Deterministic MSI-like spectra; see the module docstring.

    Noise comes from one seeded table that every spectrum reads at its own seeded offset,
    so any element can be recomputed without generating its whole spectrum.
    """

    kind = "synthetic"
    NOISE_TABLE = 1 << 20
    PEAKS_PER_SAMPLE = 0.003  # 300 peaks over the study's 100,000 m/z bins
    MIN_PEAKS = 50
    N_PATTERNS = 8
    NOISE_MEAN = 3.5

    def __init__(self, shape: Shape, dtype: np.dtype, seed: int):
        super().__init__(shape, dtype)
        rng = np.random.default_rng([seed, 0x5EED])
        nx, ny, nz = self.shape
        noise = rng.poisson(self.NOISE_MEAN, self.NOISE_TABLE).astype(np.float32)
        # The table is extended by one spectrum length so a spectrum's run never wraps.
        self.noise = np.concatenate([noise, noise[:nz]])
        self.offsets = rng.integers(0, self.NOISE_TABLE, size=(nx, ny), dtype=np.int64)
        # Chemical background falling along m/z, and a per-pixel tissue factor.
        self.baseline = (20.0 * np.exp(-np.arange(nz) / max(nz * 0.15, 1.0))).astype(np.float32)
        gx, gy = np.meshgrid(np.linspace(0, 1, nx), np.linspace(0, 1, ny), indexing="ij")
        images = []
        for _ in range(self.N_PATTERNS):
            image = np.zeros((nx, ny))
            for _ in range(3):
                cx, cy, w = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.08, 0.3)
                image += np.exp(-((gx - cx) ** 2 + (gy - cy) ** 2) / (2 * w * w))
            images.append(0.05 + 0.95 * image / image.max())
        n_peaks = max(self.MIN_PEAKS, round(self.PEAKS_PER_SAMPLE * nz))
        self.peaks = _Peaks(
            centre=np.sort(rng.uniform(0, nz, n_peaks)),
            sigma=rng.uniform(0.8, 3.0, n_peaks),
            height=rng.lognormal(np.log(300.0), 1.0, n_peaks).astype(np.float32),
            pattern=rng.integers(0, self.N_PATTERNS, n_peaks),
            images=np.stack(images).astype(np.float32),
        )
        self.tissue = (0.6 + 0.4 * self.peaks.images.mean(axis=0)).astype(np.float32)

    def _compute(self, xs, ys, zs):
        runs = np.lib.stride_tricks.sliding_window_view(self.noise, len(zs))
        values = runs[self.offsets[np.ix_(xs, ys)] + (int(zs[0]) if len(zs) else 0)]
        values += self.tissue[np.ix_(xs, ys)][:, :, None] * self.baseline[zs][None, None, :]
        if len(zs):
            z0, z1 = int(zs[0]), int(zs[-1]) + 1
            p = self.peaks
            near = np.nonzero((p.stop > z0) & (p.start < z1))[0]
            for k in near:
                lo, hi = max(z0, int(p.start[k])), min(z1, int(p.stop[k]))
                profile = p.profiles[k][lo - p.start[k] : hi - p.start[k]]
                image = p.height[k] * p.images[p.pattern[k]][np.ix_(xs, ys)]
                values[:, :, lo - z0 : hi - z0] += image[:, :, None] * profile[None, None, :]
        return self._cast(values)


class RecordingSource(DataSource):
    """Deterministic recording-like values for a 2-D ``[time, channels]`` dataset: per
    channel a baseline, a rhythm (a seeded waveform table read at the channel's own rate and
    phase: integer indexing, so any region recomputes to the same numbers) and noise from a
    seeded table at the channel's own offset."""

    kind = "synthetic"
    NOISE_TABLE = 1 << 20
    WAVE_TABLE = 4096

    def __init__(self, shape: Shape, dtype: np.dtype, seed: int):
        super().__init__(shape, dtype)
        rng = np.random.default_rng([seed, 0x2D])
        channels = self.shape[1]
        self.noise = rng.normal(0.0, 12.0, self.NOISE_TABLE).astype(np.float32)
        phase = np.arange(self.WAVE_TABLE) * (2 * np.pi / self.WAVE_TABLE)
        self.wave = (np.sin(phase) + 0.3 * np.sin(3 * phase)).astype(np.float32)
        self.offsets = rng.integers(0, self.NOISE_TABLE, channels, dtype=np.int64)
        self.rates = rng.integers(1, 64, channels, dtype=np.int64)  # wave samples per time step
        self.phases = rng.integers(0, self.WAVE_TABLE, channels, dtype=np.int64)
        self.amplitude = rng.uniform(20.0, 200.0, channels).astype(np.float32)
        unsigned = np.issubdtype(self.dtype, np.unsignedinteger)
        self.baseline = rng.uniform(300.0 if unsigned else -50.0, 400.0 if unsigned else 50.0, channels)
        self.baseline = self.baseline.astype(np.float32)

    def _compute(self, ts, cs):
        t = ts.astype(np.int64)[:, None]
        wave = self.wave[(t * self.rates[cs][None, :] + self.phases[cs][None, :]) % self.WAVE_TABLE]
        noise = self.noise[(t + self.offsets[cs][None, :]) % self.NOISE_TABLE]
        values = self.baseline[cs][None, :] + self.amplitude[cs][None, :] * wave + noise
        return self._cast(values)


class FieldSource(DataSource):
    """Deterministic values for an array of any rank (1, 4, 5, or any other without a source of
    its own): a smooth field, per axis a seeded wave read at the axis's own rate and phase, plus
    noise from a seeded table at each element's linear index (integer indexing throughout, so
    any region recomputes to the same numbers)."""

    kind = "synthetic"
    NOISE_TABLE = 1 << 20
    WAVE_TABLE = 4096

    def __init__(self, shape: Shape, dtype: np.dtype, seed: int):
        super().__init__(shape, dtype)
        rng = np.random.default_rng([seed, 0xF1E1D])
        self.noise = rng.normal(0.0, 4.0, self.NOISE_TABLE).astype(np.float32)
        phase = np.arange(self.WAVE_TABLE) * (2 * np.pi / self.WAVE_TABLE)
        self.wave = np.sin(phase).astype(np.float32)
        rank = len(self.shape)
        self.rates = rng.integers(1, 32, rank, dtype=np.int64)  # wave samples per index step
        self.phases = rng.integers(0, self.WAVE_TABLE, rank, dtype=np.int64)
        self.amplitude = rng.uniform(10.0, 60.0, rank).astype(np.float32)
        unsigned = np.issubdtype(self.dtype, np.unsignedinteger)
        self.base = np.float32(200.0 if unsigned else 0.0)
        self.strides = [int(np.prod(self.shape[a + 1 :])) for a in range(rank)]

    def _compute(self, *indices):
        rank = len(indices)
        values = np.full(tuple(len(i) for i in indices), self.base, dtype=np.float32)
        linear = np.zeros((1,) * rank, dtype=np.int64)
        for axis, idx in enumerate(indices):
            shape = [1] * rank
            shape[axis] = len(idx)
            idx = idx.astype(np.int64).reshape(shape)
            values = (
                values
                + self.amplitude[axis] * self.wave[(idx * self.rates[axis] + self.phases[axis]) % self.WAVE_TABLE]
            )
            linear = linear + idx * self.strides[axis]
        return self._cast(values + self.noise[linear % self.NOISE_TABLE])


class ChunkIndexSource(DataSource):
    """Each element holds the linear index of its chunk (modulo the dtype's range)."""

    kind = "chunk-index"
    per_layout = True
    # The blocks a contiguous file's values are numbered by (it has no chunks of its own):
    # 256 elements along the last axis, 1 along the others.
    CONTIGUOUS_BLOCK_LAST_AXIS = 256

    def __init__(self, shape: Shape, dtype: np.dtype, layout: Layout):
        super().__init__(shape, dtype)
        block = (1,) * (len(shape) - 1) + (self.CONTIGUOUS_BLOCK_LAST_AXIS,)
        self.chunk_shape = layout.chunk_shape or tuple(min(b, n) for b, n in zip(block, shape, strict=True))
        self.grid = Layout(self.chunk_shape).chunk_grid(shape)

    def _compute(self, *indices):
        index = np.zeros((1,) * len(indices), dtype=np.int64)
        for axis, (idx, c) in enumerate(zip(indices, self.chunk_shape, strict=True)):
            stride = int(np.prod(self.grid[axis + 1 :]))
            shape = [1] * len(indices)
            shape[axis] = len(idx)
            index = index + (idx // c).reshape(shape) * stride
        if np.issubdtype(self.dtype, np.integer):
            index = index % (int(np.iinfo(self.dtype).max) + 1)
        return index.astype(self.dtype)


class DonorSource(DataSource):
    """An existing array of the same rank, cropped or tiled to the target shape. A region is
    read from the donor in boxes that do not wrap (one read per box of the tiling it
    crosses), so only what is asked for is ever in memory."""

    kind = "donor"
    streams = True  # written block by block, never materialized (see h5sweep.cases.write)

    def __init__(self, shape: Shape, dtype: np.dtype, path: str, dataset: str, key: str = "dataset.fill.donor"):
        super().__init__(shape, dtype)
        self.path, self.dataset, self.key = path, dataset, key
        # opened now: a wrong path or name is refused here, not at the first read
        self._array = open_donor(path, dataset, key)

    @property
    def array(self):
        if self._array is None:
            self._array = open_donor(self.path, self.dataset, self.key)
        return self._array

    def __getstate__(self):  # an open file does not travel between processes
        return {**self.__dict__, "_array": None}

    def region(self, region: Region) -> np.ndarray:
        donor = self.array
        bounds = [s.indices(n)[:2] for s, n in zip(region, self.shape, strict=True)]
        out = np.empty(tuple(b - a for a, b in bounds), dtype=self.dtype)
        # along the first axis in slabs, so that what is read beside ``out`` stays small
        step = rows_per_slab(out.shape)
        rest = [_wrapped_runs(a, b, n) for (a, b), n in zip(bounds[1:], donor.shape[1:], strict=True)]
        for first in range(bounds[0][0], bounds[0][1], step):
            slab = _wrapped_runs(first, min(first + step, bounds[0][1]), donor.shape[0])
            offset = first - bounds[0][0]
            for runs in itertools.product(slab, *rest):
                target = tuple(slice(t, t + length) for t, _, length in runs)
                target = (slice(target[0].start + offset, target[0].stop + offset), *target[1:])
                source = tuple(slice(d, d + length) for _, d, length in runs)
                out[target] = self._checked(np.asarray(donor[source]))
        return out

    def _checked(self, values: np.ndarray) -> np.ndarray:
        """The donor's values in the dataset's type; integers out of its range are refused."""
        if self.dtype.kind in "iu" and values.size and values.dtype != self.dtype:
            info = np.iinfo(self.dtype)
            low, high = values.min(), values.max()
            if low < info.min or high > info.max:
                raise ConfigError(
                    f"{self.key}.dataset",
                    self.dataset,
                    f"holds values {low}..{high}, which do not fit {self.dtype.name} ({info.min}..{info.max})",
                )
        return values.astype(self.dtype, copy=False)


def _wrapped_runs(start: int, stop: int, n: int) -> list[tuple[int, int, int]]:
    """``[start, stop)`` of a tiled axis of period ``n`` as runs (target offset, donor start,
    length) that do not wrap."""
    runs, at = [], start
    while at < stop:
        length = min(stop - at, n - at % n)
        runs.append((at - start, at % n, length))
        at += length
    return runs


def open_donor(path: str, dataset: str, key: str = "dataset.fill.donor"):
    """The donor array, opened for reading (an HDF5 dataset or a Zarr array: anything with
    ``shape``, ``dtype``, ``chunks`` and box indexing), or a ConfigError naming the key."""
    import h5py

    if not os.path.exists(path):
        raise ConfigError(f"{key}.path", path, "does not exist")
    if os.path.isfile(path) and h5py.is_hdf5(path):
        f = h5py.File(path, "r")
        if dataset not in f or not isinstance(f[dataset], h5py.Dataset):
            names = []
            f.visit(lambda name: names.append(name) if isinstance(f[name], h5py.Dataset) else None)
            f.close()
            raise ConfigError(f"{key}.dataset", dataset, f"no such dataset in {path} (it has: {', '.join(names)})")
        return f[dataset]
    import zarr

    try:
        return zarr.open_array(path, path=dataset.strip("/"), mode="r")
    except Exception as err:  # noqa: BLE001 - any failure to open is the user's path or name
        raise ConfigError(
            f"{key}.path", path, f"is neither an HDF5 file nor a Zarr array at {dataset!r}: {err}"
        ) from err


def check_donor(path: str, dataset: str, key: str = "dataset.fill.donor", rank: int = 3, dtype: np.dtype | None = None):
    """The donor opened and checked: it exists, has the dataset's rank, and (given ``dtype``)
    holds numbers that can become it: no floats into integers and, where its integer type is
    wider, values within range (read slab by slab up to :data:`RANGE_CHECK_BYTES`; a larger
    donor's values are checked as they are written)."""
    donor = open_donor(path, dataset, key)
    if len(donor.shape) != rank or 0 in donor.shape:
        raise ConfigError(
            f"{key}.dataset", dataset, f"donor must be a non-empty {rank}-D array like the dataset, is {donor.shape}"
        )
    if dtype is not None and np.dtype(dtype).kind in "iu":
        have, want = np.dtype(donor.dtype), np.dtype(dtype)
        if have.kind not in "iub":
            raise ConfigError(f"{key}.dataset", dataset, f"holds {have.name}, not integers for {want.name}")
        if not np.can_cast(have, want) and math.prod(donor.shape) * have.itemsize <= RANGE_CHECK_BYTES:
            source = DonorSource(tuple(donor.shape), want, path, dataset, key)
            for region in source.slabs():  # refuses values out of range, slab by slab
                source.region(region)
    return donor


def axis_names(dataset_cfg: dict) -> list[str]:
    """The names of the dataset's axes: as ``dataset.axes`` gives them, else x, y, z (3-D),
    time, channels (2-D), or axis0, axis1, ..."""
    if dataset_cfg.get("axes"):
        return [a["name"] for a in dataset_cfg["axes"]]
    rank = len(dataset_cfg["shape"])
    return {3: ["x", "y", "z"], 2: ["time", "channels"]}.get(rank, [f"axis{i}" for i in range(rank)])


def make_source(dataset_cfg: dict, layout: Layout) -> DataSource:
    """Build the data source that ``dataset.fill`` names, for files of ``layout``."""
    shape, dtype = tuple(dataset_cfg["shape"]), np.dtype(dataset_cfg["dtype"])
    fill = dataset_cfg["fill"]
    if fill == "synthetic":
        source = {2: RecordingSource, 3: SyntheticSource}.get(len(shape), FieldSource)
        return source(shape, dtype, int(dataset_cfg["seed"]))
    if fill == "chunk-index":
        return ChunkIndexSource(shape, dtype, layout)
    if isinstance(fill, dict) and "donor" in fill:
        return DonorSource(shape, dtype, fill["donor"]["path"], fill["donor"]["dataset"])
    raise ConfigError("dataset.fill", fill, "must be synthetic, chunk-index or {donor: {path, dataset}}")


def values_shared(dataset_cfg: dict) -> bool:
    """Whether every store's write takes the same values, small enough to hold (a synthetic
    fill): the sweep makes them once and keeps them for every write
    (:func:`h5sweep.sweep.stages.values_cache`) instead of making them in every job."""
    return dataset_cfg["fill"] == "synthetic"


def save_values(values: np.ndarray, path: str) -> None:
    """Keep the dataset's values at ``path`` (``.npy``), complete or not at all, on the device."""
    partial = f"{path}.partial-{os.getpid()}"
    with open(partial, "wb") as out:
        np.save(out, values, allow_pickle=False)
        out.flush()
        os.fsync(out.fileno())  # nothing left to write back during a timed window
    os.replace(partial, path)


def load_values(path: str, dataset_cfg: dict) -> np.ndarray:
    """The values :func:`save_values` kept, read into memory (a write never faults pages in
    on the clock), checked against the dataset's shape and dtype."""
    values = np.load(path, allow_pickle=False)
    shape, dtype = tuple(dataset_cfg["shape"]), np.dtype(dataset_cfg["dtype"])
    if values.shape != shape or values.dtype != dtype:
        raise ValueError(f"{path} holds {values.dtype}{list(values.shape)}, not the dataset's {dtype}{list(shape)}")
    return values


class KeptValues(DataSource):
    """The dataset's values as the sweep kept them for its writes (:func:`save_values`), mapped
    from their file and read a region at a time: the very values every store was written from,
    so a read is checked against them without computing them again (a read job's checks took
    about as long as its timed reads, computing every region of the synthetic fill anew)."""

    kind = "kept"

    def __init__(self, path: str, dataset_cfg: dict):
        values = np.load(path, mmap_mode="r", allow_pickle=False)
        shape, dtype = tuple(dataset_cfg["shape"]), np.dtype(dataset_cfg["dtype"])
        if values.shape != shape or values.dtype != dtype:
            raise ValueError(f"{path} holds {values.dtype}{list(values.shape)}, not the dataset's {dtype}{list(shape)}")
        super().__init__(shape, dtype)
        self.path, self._values = path, values

    def __getstate__(self):  # a mapping does not travel between processes: its file does
        return {"path": self.path, "shape": self.shape, "dtype": self.dtype}

    def __setstate__(self, state):
        self.__init__(state["path"], {"shape": state["shape"], "dtype": state["dtype"]})

    def region(self, region: Region) -> np.ndarray:
        return np.array(self._values[tuple(region)])


def kept_or_made(dataset_cfg: dict, layout: Layout, kept: str | None) -> DataSource:
    """The source a read's values are checked against: the values the sweep kept for its
    writes (``kept``: their file, where it is there), else the source made anew."""
    if kept is not None and os.path.exists(kept):
        with contextlib.suppress(FileNotFoundError):  # removed meanwhile: made anew
            return KeptValues(kept, dataset_cfg)
    return make_source(dataset_cfg, layout)


def fill_name(dataset_cfg: dict) -> str:
    fill = dataset_cfg["fill"]
    return fill if isinstance(fill, str) else "donor"


class StoredValues:
    """A streaming source's values in a layout's storage order, computed a region at a time
    as a backend's write asks for them (``stored[region]``, the region in stored axes).

    The time spent computing (reading the donor) is kept apart, in ``compute_ns``: the write
    case takes it out of the write's clock, which then covers the library's calls only.
    """

    def __init__(self, source: DataSource, layout: Layout):
        self.source, self.layout = source, layout
        self.axes = layout.axes_of(len(source.shape))
        self.shape = tuple(layout.to_storage(source.shape))
        self.dtype = source.dtype
        self.ndim = len(self.shape)
        self.compute_ns = 0

    def __getitem__(self, region: Region) -> np.ndarray:
        t0 = time.perf_counter_ns()
        values = self.source.region(tuple(self.layout.to_logical(tuple(region))))
        values = np.ascontiguousarray(values if self.layout.order == "xyz" else values.transpose(self.axes))
        self.compute_ns += time.perf_counter_ns() - t0
        return values

    def take_compute_s(self) -> float:
        """Seconds spent computing since the last call."""
        seconds, self.compute_ns = self.compute_ns / 1e9, 0
        return seconds
